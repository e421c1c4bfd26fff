"""Seed 002 (Li, Wang, Ye, "Improved Bounds for Pure Private Agnostic Learning: Item-Level and
User-Level Privacy"): pure ε-DP agnostic learners at item and user level, with exact laws.

Modules
-------
data
    Users (blocks of m examples), truth tables, codes of released hypotheses.
scores
    Count-form user-level errors, surrogate scores and median scores.
binomial
    Binomial tails, Lemma 4.1's K and the data-independent choices of t and s.
compare
    PrivateCompare (proof of Lemma C.1) and PrivateMinError (Algorithm 2, branch erratum).
median
    PrivateMedian (proof of Lemma 5.1).
laplace_race, threshold
    Closed-form branch probabilities and PrivateThreshold (Algorithm 1).
representation
    Stand-ins for the probabilistic representation (trivial, improper decoys, invalid subsets).
learners
    ItemLearner (Thm 3.4), UserLearner (Thm 4.6), ThresholdLearner (Thm 5.2).
testbeds
    Canonical users, worst-case pairs and utility trials used by the tests.
"""

from .compare import PrivateCompare, PrivateMinError
from .data import Users, as_items, as_users, threshold_table
from .learners import ItemLearner, ThresholdLearner, UserLearner
from .median import PrivateMedian
from .representation import Representation, decoys, everything, subset, trivial
from .threshold import PrivateThreshold

__all__ = [
           "ItemLearner",
           "PrivateCompare",
           "PrivateMedian",
           "PrivateMinError",
           "PrivateThreshold",
           "Representation",
           "ThresholdLearner",
           "UserLearner",
           "Users",
           "as_items",
           "as_users",
           "decoys",
           "everything",
           "subset",
           "threshold_table",
           "trivial",
]
