"""Paper 001 (Cummings, Ligett, Nissim, Roth, Wu, COLT 2016): robust and perfect
generalization — Algorithm 1 (generic PG learner) and its simulator, Algorithm 2 (bootstrap
compiler), compression learners for thresholds, the majority / Strange-Normal / Laplace-majority
separations, and closed forms from the proofs."""

from .compiler import BootstrapCompiler
from .learner import (
                      GenericPGLearner,
                      interval_predictions,
                      labelled_loss,
                      noisy_threshold_distribution,
                      threshold_predictions,
)
from .mechanisms import LaplaceMajority, Majority, StrangeNormal, constant
from .thresholds import (
                      AdaptiveCuts,
                      LargestPositive,
                      SampleEncoding,
                      SmallestPositive,
                      SubsampleLearner,
                      ThresholdPopulation,
                      threshold_adversaries,
)

__all__ = ["AdaptiveCuts", "BootstrapCompiler", "GenericPGLearner", "LaplaceMajority",
           "LargestPositive", "Majority", "SampleEncoding", "SmallestPositive", "StrangeNormal",
           "SubsampleLearner", "ThresholdPopulation", "constant", "interval_predictions",
           "labelled_loss", "noisy_threshold_distribution", "threshold_adversaries",
           "threshold_predictions"]
