"""Features: mechanism outputs → the scalar columns events are defined on.

The families (:mod:`~dpcheck.features.family`: the :class:`FeatureFamily` protocol and the
simple families; :mod:`~dpcheck.features.float_bits`, :mod:`~dpcheck.features.naive_bayes`,
:mod:`~dpcheck.features.learned`, :mod:`~dpcheck.features.row_summary`) are fitted on the
exploration sample by the :class:`Featurizer` (:mod:`~dpcheck.features.featurizer`, which lists
them in :data:`FAMILIES`). :mod:`~dpcheck.features.coding` codes one column for the learned
scores; :mod:`~dpcheck.features.feature` defines :class:`Feature`.
"""

from dpcheck.features.family import Batch, Exploration, FeatureFamily, FittedFamily
from dpcheck.features.feature import Feature, FeatureMap, row_hash
from dpcheck.features.featurizer import FAMILIES, Featurizer, describe_feature

__all__ = ["FAMILIES", "Batch", "Exploration", "Feature", "FeatureFamily", "FeatureMap",
           "Featurizer", "FittedFamily", "describe_feature", "row_hash"]
