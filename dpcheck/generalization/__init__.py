"""Checkers of paper 001's claims: closeness, perfect and robust generalization.

:mod:`~dpcheck.generalization.closeness` (:func:`dpcheck.audit_closeness`),
:mod:`~dpcheck.generalization.perfect` (:func:`dpcheck.check_perfect_generalization`) with the
exact enumeration of :mod:`~dpcheck.generalization.enumeration`,
:mod:`~dpcheck.generalization.robust` (:func:`dpcheck.check_robust_generalization`), the
populations they draw from (:mod:`~dpcheck.generalization.population`) and their shared result
(:mod:`~dpcheck.generalization.result`). The claims themselves are in :mod:`dpcheck.claims`.

References
----------
R. Cummings, K. Ligett, K. Nissim, A. Roth, Z. S. Wu, "Adaptive learning with robust
generalization guarantees", COLT 2016 (seed 001).
"""

from dpcheck.generalization.closeness import ClosenessResult, audit_closeness
from dpcheck.generalization.perfect import check_perfect_generalization
from dpcheck.generalization.population import IIDPopulation
from dpcheck.generalization.result import GeneralizationResult
from dpcheck.generalization.robust import MaskAdversary, check_robust_generalization

__all__ = ["ClosenessResult", "GeneralizationResult", "IIDPopulation", "MaskAdversary",
           "audit_closeness", "check_perfect_generalization", "check_robust_generalization"]
