"""Seed 003 (Bassily, Thakkar, Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018).

Modules
-------
core
    The privacy core: the stability distance, A_stab (Theorem 2.4), A_binClas (Algorithm 2,
    Theorem 3.1) with the vote-count sampler :class:`BinClasCounts`.
utility
    A_priv (Algorithm 3), the learners, exact count samplers at paper scale, and the utility
    rates of Theorems 3.2, 3.4, 3.5, 4.2. Imports :mod:`core` (never the other way round).
buggy
    The buggy variants of the seed-003 notes (mutants of the claims they break).
"""

from .core import (BOT, DISTANCES, HALT, ABinClas, AStab, BinClasCounts, BinClasParams,
                   chunk_of, dist_paper, dist_sensitivity1, majority, svt_answer_probability)
from .utility import (APriv, MajorityLearner, RateParameters, ThresholdERM,
                      binclas_rates, noisy_threshold_counts, rate_parameters, theorem_3_2_cutoff,
                      threshold_erm_batch, threshold_erm_counts)

__all__ = ["BOT", "HALT", "DISTANCES", "dist_sensitivity1", "dist_paper", "majority", "AStab",
           "BinClasParams", "BinClasCounts", "ABinClas", "chunk_of", "svt_answer_probability",
           "APriv", "ThresholdERM", "MajorityLearner", "threshold_erm_batch",
           "threshold_erm_counts", "noisy_threshold_counts", "theorem_3_2_cutoff",
           "RateParameters", "rate_parameters", "binclas_rates"]
