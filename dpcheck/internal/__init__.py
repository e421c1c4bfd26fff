"""Helpers shared by every part of dpcheck and not part of its API: dataset handling for the
neighbour relations (:mod:`~dpcheck.internal.datasets`), seed derivation
(:mod:`~dpcheck.internal.rng`) and the version (:mod:`~dpcheck.internal.version`).
Argument validation, which code built on dpcheck shares on purpose, is the public module
:mod:`dpcheck.validation`.
"""
