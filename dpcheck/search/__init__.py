"""Counterexample search: :func:`dpcheck.find_counterexample`.

:mod:`~dpcheck.search.candidates` proposes neighbouring pairs (enumeration, patterns, moves),
:mod:`~dpcheck.search.explorer` ranks them by exploratory audits and shrinks a witness, and
:mod:`~dpcheck.search.counterexample` confirms the best on fresh samples.
"""

from dpcheck.search.counterexample import SearchResult, find_counterexample

__all__ = ["SearchResult", "find_counterexample"]
