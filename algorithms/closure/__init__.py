"""Seed 004 (Alon, Beimel, Moran, Stemmer, "Closure Properties for Private Classification and
Online Prediction", COLT 2020): the relabeling learners and their buggy variants.

Modules
-------
relabel
    Samples as count tables, patterns ``Π_H(P)``, the relabel distribution of A_Relabel
    (Algorithm 2) and the private learner stand-in L-EM.
pipelines
    A_RelabelAndLearn, A_PrivateAgnostic and A_ClosureLearn with exact pmfs on tiny inputs.
learners
    Algorithm 1 (exponential-mechanism learner, Proposition 3.13) and Lemma 3.12's subsampled
    learner, with exact pmfs.
relabel_pmf
    Exact laws of A_Relabel / A_RelabelAndLearn for an inner algorithm with a pmf, the RR label
    leaker, and Claim 5.4's sample sizes.
buggy
    The buggy variants of the seed-004 notes §6 (mutants of the claims they break).
testbeds
    Worst-case pairs, derived sample sizes and the ClosureLearn utility trial used by the tests.
"""

from .pipelines import ClosureLearn, PrivateAgnostic, RelabelAndLearn
from .relabel import (BUG5_EPSILON, BUGS, EMLearner, as_sample, class_labels, completion_scores,
                      counts_of, error_counts, patterns, relabel_distribution, support_of)

__all__ = ["BUGS", "BUG5_EPSILON", "as_sample", "counts_of", "support_of", "class_labels",
           "patterns", "error_counts", "relabel_distribution", "completion_scores", "EMLearner",
           "RelabelAndLearn", "PrivateAgnostic", "ClosureLearn"]
