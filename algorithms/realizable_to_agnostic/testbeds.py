"""Worst-case neighbouring pairs for the paper-000 privacy tests (notes §4.3, P5).

References
----------
B. Li, W. Wang, P. Ye (seed 000): Lemma 3.1 (proof, case 1 ∈ I), Theorem 3.6; notes
shared/research/seed-000.md §4.3 (choosing neighbours).
"""

from __future__ import annotations

import numpy as np

from dpcheck.validation import check_int

__all__ = ["unique_record_pair"]


def unique_record_pair(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(S, S′)`` of size ``n`` on ``{0..5}``: ``S`` has the unique point ``x* = 0`` (label 1) at
    index 0, the rest sit at the common value 3 (the first half labelled 0, the others 1); ``S′``
    replaces the record at index 0 by ``(3, 0)``. The changed record is then visible exactly when
    it is drawn into ``T`` — the leak Lemma 3.1's swap case must pay for (notes §4.3, P5)."""
    n = check_int(n, "n", minimum=2)
    s = np.tile([3, 1], (n, 1))
    s[0] = [0, 1]
    s[1: n // 2, 1] = 0
    sp = s.copy()
    sp[0] = [3, 0]
    return s, sp
