"""OpenDP measurements as dpcheck mechanisms, and the claims their privacy maps make.

:func:`from_opendp` turns a ``Measurement`` (or a zero-argument function that builds one) into
a mechanism: each output is ``measurement(query(data))``. :func:`opendp_claim` turns the
measurement's privacy map at an input distance ``d_in`` into a dpcheck claim:

==============================  ===========================================================
output measure                  claim
==============================  ===========================================================
``MaxDivergence``               ``PureDP(map(d_in))``
``ZeroConcentratedDivergence``  ρ = ``map(d_in)`` converted to (ε, δ) at the given δ by
                                OpenDP's own ``make_zCDP_to_approxDP`` (its privacy profile)
``SmoothedMaxDivergence``       ``ApproxDP(profile.epsilon(δ), δ)``
``Approximate(MaxDivergence)``  ``ApproxDP(*map(d_in))``
==============================  ===========================================================

Seeding. OpenDP samples from the operating system's CSPRNG and offers no seed, so an audit of
an OpenDP mechanism is valid but *not reproducible*: ``seeding == "none"`` and the result's
``warnings`` say so. Measurements are ctypes objects that cannot be pickled; to audit with a
process executor pass a picklable *factory* (a module-level function returning the
measurement), which each worker calls once.

References
----------
M. Bun, T. Steinke, "Concentrated Differential Privacy", TCC 2016 (zCDP);
C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy", 2020
(the conversion OpenDP uses); the OpenDP library documentation (measures, privacy maps).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.claims import ApproxDP, PureDP
from dpcheck.errors import InvalidArgument
from dpcheck.integrations.scalar import callable_name, stack_outputs
from dpcheck.validation import check_delta, check_int

__all__ = ["OpenDPMechanism", "adapt", "from_opendp", "opendp_claim", "recognises"]


def recognises(obj: Any) -> bool:
    """Whether ``obj`` is an OpenDP measurement (a privacy ``map`` and an ``output_measure``)."""
    return callable(getattr(obj, "map", None)) and hasattr(obj, "output_measure")


def adapt(obj: Any) -> OpenDPMechanism:
    """An OpenDP measurement as a mechanism, with the defaults of :func:`from_opendp`."""
    return from_opendp(obj)


class OpenDPMechanism:
    """``measurement(query(data))`` per output (see :func:`from_opendp`)."""

    seeding = "none"

    def __init__(self, measurement: Any, query: Callable[[Any], Any] | None = None,
                 name: str | None = None) -> None:
        if recognises(measurement):
            self.factory: Callable[[], Any] | None = None
            self._measurement = measurement
        elif callable(measurement):
            self.factory = measurement
            self._measurement = None
        else:
            raise InvalidArgument(f"measurement={measurement!r} must be an OpenDP Measurement "
                                  "or a function returning one")
        if query is not None and not callable(query):
            raise InvalidArgument(f"query={query!r} must be callable or None")
        self.query = query
        self.name = name

    @property
    def measurement(self) -> Any:
        """The measurement (built by the factory on first use)."""
        if self._measurement is None:
            assert self.factory is not None
            built = self.factory()
            if not recognises(built):
                raise InvalidArgument(f"the factory returned {built!r}, not an OpenDP Measurement")
            self._measurement = built
        return self._measurement

    @property
    def display_name(self) -> str:
        """Name shown in reports."""
        if self.name is not None:
            return self.name
        if self.factory is not None:
            return f"opendp:{callable_name(self.factory)}"
        return f"opendp.Measurement({self.measurement.output_measure})"

    def __repr__(self) -> str:
        return self.display_name

    def __getstate__(self) -> dict[str, Any]:
        if self.factory is None:
            raise TypeError("an OpenDP Measurement cannot be pickled; pass a picklable factory "
                            "(a module-level function returning the measurement) to from_opendp")
        return {"factory": self.factory, "query": self.query, "name": self.name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _measurement=None)

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> NDArray[Any]:
        size = check_int(size, "size", minimum=1)
        meas = self.measurement
        value = data if self.query is None else self.query(data)
        return stack_outputs([meas(value) for _ in range(size)])


def from_opendp(
    measurement: Any, *, query: Callable[[Any], Any] | None = None, name: str | None = None
) -> OpenDPMechanism:
    """An OpenDP ``Measurement`` as a dpcheck mechanism (``seeding == "none"``).

    Parameters
    ----------
    measurement
        A ``Measurement`` or a zero-argument function returning one (picklable: needed for a
        process executor).
    query
        Maps a dataset to the measurement's input (default: the dataset is the input; OpenDP
        is strict about types — pass floats to float domains, lists to vector domains).
    name
        Name shown in reports.

    Examples
    --------
    >>> import opendp.prelude as dp
    >>> dp.enable_features("contrib")
    >>> from dpcheck.integrations.opendp import from_opendp, opendp_claim
    >>> meas = dp.m.make_laplace(dp.atom_domain(T=float, nan=False),
    ...                          dp.absolute_distance(T=float), scale=1.0)
    >>> opendp_claim(meas, 1.0)
    PureDP(epsilon=1.0)
    """
    return OpenDPMechanism(measurement, query, name)


def opendp_claim(measurement: Any, d_in: Any, *, delta: float | None = None) -> PureDP | ApproxDP:
    """The claim ``measurement``'s privacy map makes for input distance ``d_in``.

    Parameters
    ----------
    measurement
        An OpenDP ``Measurement`` (or an :class:`OpenDPMechanism`).
    d_in
        Input distance of the neighbouring pair (e.g. 1 for symmetric distance, the
        sensitivity bound for absolute distance), of the type the input metric expects.
    delta
        For zCDP and smoothed-max-divergence measures: the δ at which ε is read off (required);
        must be omitted for pure and (ε, δ) measures.

    Returns
    -------
    PureDP or ApproxDP
    """
    if isinstance(measurement, OpenDPMechanism):
        measurement = measurement.measurement
    if not recognises(measurement):
        raise InvalidArgument(f"measurement={measurement!r} must be an OpenDP Measurement")
    measure = str(measurement.output_measure)
    if measure.startswith("MaxDivergence"):
        _no_delta(delta, measure)
        return PureDP(float(_map(measurement, d_in)))
    if measure.startswith("Approximate(MaxDivergence"):
        _no_delta(delta, measure)
        eps, dlt = _map(measurement, d_in)
        return ApproxDP(float(eps), float(dlt))
    if delta is None:
        raise InvalidArgument(f"delta=None: a {measure} measurement needs the delta at which "
                              "to read off epsilon")
    delta = check_delta(delta)
    if delta == 0.0:
        raise InvalidArgument(f"delta=0.0 must be > 0 for a {measure} measurement")
    if measure.startswith("ZeroConcentratedDivergence"):
        import opendp.prelude as dp

        measurement = dp.c.make_zCDP_to_approxDP(measurement)
        measure = str(measurement.output_measure)
    if measure.startswith("SmoothedMaxDivergence"):
        profile = _map(measurement, d_in)
        return ApproxDP(float(profile.epsilon(delta)), delta)
    raise InvalidArgument(f"output measure {measure} is not supported (pure, zCDP, smoothed "
                          "max divergence and approximate max divergence are)")


def _map(measurement: Any, d_in: Any) -> Any:
    """``measurement.map(d_in)``, with OpenDP's refusal of ``d_in`` (a negative distance, a
    string, a float where an integer distance is expected) as :class:`InvalidArgument`."""
    if isinstance(d_in, (int, float)) and not isinstance(d_in, bool) and not d_in >= 0:
        raise InvalidArgument(f"d_in={d_in!r} must be a distance >= 0")
    try:
        return measurement.map(d_in)
    except Exception as exc:  # OpenDPException, TypeError, …: the input distance is wrong
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidArgument(f"d_in={d_in!r} must be an input distance the measurement's "
                              f"privacy map accepts ({first[:200]})") from exc


def _no_delta(delta: float | None, measure: str) -> None:
    if delta is not None:
        raise InvalidArgument(f"delta={delta!r} must be None for a {measure} measurement")
