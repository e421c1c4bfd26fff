"""The result of one of paper 003's sampler-law checks (shared by ``test_sampler_laws.py`` and
``test_noisy_threshold_law.py``, loaded with :func:`algorithms.beside.load_beside`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LawCheck:
    """Result of one law check: a p-value against the exact/independent law at ``alpha``;
    ``label`` names the law in the summary line."""

    p_value: float
    alpha: float
    detail: dict[str, Any]
    label: str = "sampler law"

    @property
    def violation(self) -> bool:
        """The sampler contradicts the independent law at level ``alpha``."""
        return self.p_value <= self.alpha

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"p_value": self.p_value, "alpha": self.alpha, **self.detail}

    def summary(self) -> str:
        """One line for people."""
        return f"{self.label}: p = {self.p_value:.3g} at alpha {self.alpha:.3g} ({self.detail})"
