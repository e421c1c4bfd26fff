"""The mechanism zoo: mechanisms with known true privacy, correct and deliberately broken.

Every entry declares the claim it is (or pretends to be) designed for, the neighbouring pair(s)
that realise its worst case, and its **true** privacy: an exact ε (or ``math.inf``), an exact
δ(ε) curve for approximate-DP entries, or an upper bound where only a bound is known
(``true_epsilon_is_bound=True``). Tiers follow ``shared/research/anchors-auditing.md`` §7:
A correct (must never be flagged), B buggy with finite true ε, C buggy with infinite true ε.

Entries register themselves with :func:`register`; :func:`entries` lists them all (importing
every zoo module).

References
----------
D. Lyu, D. Su, N. Li, "Understanding the Sparse Vector Technique for Differential Privacy",
PVLDB 10(6), 2017. B. Bichsel et al., "DP-Sniper", IEEE S&P 2021 (mechanism list, Table 2).
Z. Ding et al., "Detecting Violations of Differential Privacy", CCS 2018.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from dpcheck.claims import ApproxDP, PureDP

__all__ = ["ZooEntry", "register", "entries", "get", "MODULES", "exact_pmf"]

#: Zoo modules imported by :func:`entries` (each registers its entries on import).
MODULES = ("algorithms.zoo.additive", "algorithms.zoo.selection", "algorithms.zoo.svt",
           "algorithms.zoo.float_holes")

Tier = Literal["A", "B", "C"]


@dataclass(frozen=True)
class ZooEntry:
    """One zoo mechanism with its ground truth.

    Attributes
    ----------
    name
        Unique identifier, e.g. ``"laplace"`` or ``"svt3"``.
    tier
        ``"A"`` correct, ``"B"`` buggy with finite true ε, ``"C"`` buggy with ε = ∞.
    anchor
        Identifier in anchors-auditing.md §7 (``"A1"``, ``"B5"``, …) or ``""``.
    mechanism
        A dpcheck mechanism (``mechanism(data, size, rng)`` or ``.sample``; ``.pmf`` if finite).
    claim
        The claim the mechanism is advertised with.
    pairs
        Neighbouring pairs ``(d, d_prime)`` on which the true privacy is realised (worst case
        first).
    true_epsilon
        The exact worst-case ε (``math.inf`` if unbounded); for approximate-DP entries, the
        smallest ε with ``true_delta(ε) ≤ claim.delta``.
    true_epsilon_is_bound
        ``True`` if ``true_epsilon`` is only a proven upper bound (e.g. report-noisy-max).
    true_delta
        For approximate-DP entries: exact δ(ε) on the worst pair, as a function of ε.
    relation
        The neighbour relation of the claim (a dpcheck relation object).
    features
        Optional feature map handed to :func:`dpcheck.audit` (``None``: the defaults).
    float_features
        Handed to :func:`dpcheck.audit`. ``False`` (default): the entry's truth is that of the
        idealised real-valued mechanism, so the audit looks at output values only; computed as
        ``value + noise`` in float64 these mechanisms are not private at all (Mironov 2012; see
        :mod:`dpcheck.features.float_bits` and ``tests/test_float_features.py``).
    description
        One paragraph: what the mechanism does, what is wrong with it, where the truth comes
        from.
    published
        Published results of other auditors on the same mechanism (``anchors-auditing.md``
        §4), e.g. ``{"dp_sniper_lr": 0.248, "statdp": 0.199}``; claimed ε is in ``claim``.
    """

    name: str
    tier: Tier
    anchor: str
    mechanism: Any
    claim: PureDP | ApproxDP
    pairs: Sequence[tuple[Any, Any]]
    true_epsilon: float
    relation: Any
    description: str
    true_epsilon_is_bound: bool = False
    true_delta: Callable[[float], float] | None = None
    features: Callable[[Any], Any] | None = None
    float_features: bool = False
    published: dict[str, float] = field(default_factory=dict)

    @property
    def correct(self) -> bool:
        """Whether the advertised claim holds (tier A)."""
        return self.tier == "A"

    @property
    def infinite(self) -> bool:
        """Whether the true ε is unbounded."""
        return math.isinf(self.true_epsilon)


_REGISTRY: dict[str, ZooEntry] = {}


def register(entry: ZooEntry) -> ZooEntry:
    """Add ``entry`` to the zoo (names must be unique)."""
    if entry.name in _REGISTRY and _REGISTRY[entry.name] is not entry:
        raise ValueError(f"zoo entry {entry.name!r} registered twice")
    _REGISTRY[entry.name] = entry
    return entry


def entries(tier: Tier | None = None) -> list[ZooEntry]:
    """All zoo entries (optionally of one tier), in registration order."""
    for module in MODULES:
        importlib.import_module(module)
    return [e for e in _REGISTRY.values() if tier is None or e.tier == tier]


def get(name: str) -> ZooEntry:
    """The entry called ``name``."""
    entries()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise KeyError(f"no zoo entry {name!r}; known: {known}") from None


def exact_pmf(mech: Any, data: Any) -> dict[Any, float]:
    """The exact pmf of ``mech`` on ``data``: ``mech.pmf`` where there is one, else the
    geometric mechanism's ``log_pmf`` on [−k, k + 1] with k = 600/ε (the same window for both
    datasets of a pair; the mass outside is below e^{−600}), normalised."""
    import numpy as np

    if hasattr(mech, "pmf"):
        return mech.pmf(data)
    k = int(600 / mech.epsilon)
    z = np.arange(-k, k + 2)
    w = np.exp(mech.log_pmf(data, z))
    return dict(zip(z.tolist(), (w / w.sum()).tolist()))

