"""Events: which sets of outputs an audit confirms.

:mod:`~dpcheck.events.event` defines :class:`Event` (a fixed set of outputs of one feature) and
:class:`Candidate` (an event with its direction and statistic); :mod:`~dpcheck.events.pools`
generates every candidate of a feature as count arrays; :mod:`~dpcheck.events.projection` ranks
them by projected bounds (ranking only, never certification); :mod:`~dpcheck.events.paired`
adds paired half-lines; :mod:`~dpcheck.events.ties` randomised boundary atoms; and
:mod:`~dpcheck.events.select` chooses the candidates (:func:`select_events`).
"""

from dpcheck.events.event import Candidate, Direction, Event, Kind
from dpcheck.events.select import select_events

__all__ = ["Candidate", "Direction", "Event", "Kind", "select_events"]
