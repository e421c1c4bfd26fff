"""Shared mechanisms used by the papers' algorithms and by the zoo: Laplace/geometric/randomized
response (:mod:`primitives`), the exponential mechanism and report-noisy-max (:mod:`selection`),
sparse vector (:mod:`sparse_vector`), subsampling (:mod:`subsampling`), the analytic Gaussian
(:mod:`gaussian`), one-time RAPPOR (:mod:`rappor`), textbook floating-point Laplace
(:mod:`float_laplace`) and noisy sums (:mod:`noisy_sums`). Vectorised; exact pmf where finite.
"""
