"""Curve claims: privacy stated as a curve, not one (ε, δ).

* :class:`GaussianDP` — μ-GDP: the trade-off curve ``T(M(D), M(D′)) ≥ G_μ``,
  ``G_μ(x) = Φ(Φ⁻¹(1 − x) − μ)`` (Dong, Roth, Su 2022, Definition 2.6).
* :class:`TradeOff` — f-DP for a user trade-off function ``f`` (Definition 2.3 there).
* :class:`ZCDP` — ρ-zCDP: ``D_α(M(D) ‖ M(D′)) ≤ ρα`` for every order α > 1 (Bun, Steinke 2016,
  Definition 1.1).
* :class:`RenyiDP` — (α, ε)-RDP at one order (Mironov 2017, Definition 4).
* :class:`PrivacyCurve` — an ε ↦ δ(ε) curve (every (ε, δ(ε)) holds), e.g. a privacy-loss
  distribution's or an accountant's (:func:`from_accountant`).

All are tested through events: an event S gives the pair ``(p, q) = (P[M(D) ∈ S],
P[M(D′) ∈ S])`` (oriented so that ``p ≥ q``), and by post-processing (data processing) every
curve claim restricts which pairs are possible: ``q ≥ f(1 − p)`` for f-DP, ``p ≤ e^ε q +
δ(ε)`` for every ε for a δ-curve, ``D_α(Bern(p) ‖ Bern(q)) ≤ ε(α)`` for Rényi claims.
:meth:`margin` measures how far the confidence box ``{p ≥ p_low, q ≤ q_high}`` lies outside the
possible set (> 0: every pair in the box refutes the claim, because each restriction is monotone
in p and q); the certifier (:mod:`dpcheck.core.certify`) decides on it.
:meth:`parameter_lower` turns one confirmed box into a lower confidence bound on the claim's
parameter (μ, ρ, ε(α)).

References
----------
J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", JRSS B 84 (2022): Definition 2.6,
Corollary 2.13 (δ(ε) of μ-GDP). M. Bun, T. Steinke, "Concentrated Differential Privacy", TCC
2016. I. Mironov, "Rényi Differential Privacy", CSF 2017. C. Canonne, G. Kamath, T. Steinke,
"The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Proposition 12 (zCDP/RDP →
(ε, δ)).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri, rel_entr

from dpcheck.errors import InvalidArgument
from dpcheck.validation import MAX_EPSILON, check_real, fmt

__all__ = ["GaussianDP", "TradeOff", "ZCDP", "RenyiDP", "PrivacyCurve", "bernoulli_renyi",
           "gdp_delta", "zcdp_delta", "from_accountant", "CURVE_CLAIMS"]

#: The ε at which a :class:`PrivacyCurve` is evaluated (0 to 12 in steps of 0.02).
CURVE_GRID = np.linspace(0.0, 12.0, 601)
#: The largest Rényi order a :class:`RenyiDP` claim may name (``D_α`` of Bernoulli pairs is
#: computed in floating point; beyond this it loses all precision).
MAX_ORDER = 1e4
#: Rényi orders searched for zCDP margins and ρ lower bounds.
ORDERS = np.concatenate([np.linspace(1.01, 4.0, 120), np.geomspace(4.0, 512.0, 120)[1:]])


def _positive(name: str, value: Any, limit: float = MAX_EPSILON) -> float:
    """A finite parameter in (0, ``limit``] (the ε it stands for must keep ``e^ε`` finite:
    :data:`dpcheck.validation.MAX_EPSILON`)."""
    x = check_real(name, value)
    if not (0.0 < x < math.inf):
        raise InvalidArgument(f"{name}={fmt(value)} must be finite and > 0")
    if x > limit:
        raise InvalidArgument(f"{name}={fmt(value)} must be <= {limit:g} (its epsilon must "
                              f"stay <= {MAX_EPSILON:g}: e^epsilon overflows float64 beyond "
                              "about 709)")
    return x


def bernoulli_renyi(p: float, q: float, order: float | np.ndarray) -> Any:
    """``D_α(Bern(p) ‖ Bern(q))`` in nats, computed in log space (no overflow at large α);
    +inf where q ∈ {0, 1} cannot cover p."""
    a = np.asarray(order, dtype=np.float64)
    log_terms = np.full(a.shape, -np.inf)
    for x, y in ((p, q), (1.0 - p, 1.0 - q)):
        if x > 0:
            term = np.full(a.shape, np.inf) if y <= 0 else a * math.log(x) + (1 - a) * math.log(y)
            log_terms = np.logaddexp(log_terms, term)
    out = log_terms / (a - 1.0)
    return out if out.ndim else float(out)


def bernoulli_kl(p: float, q: float) -> float:
    """``KL(Bern(p) ‖ Bern(q))`` in nats (``D_α`` at α = 1); +inf where q cannot cover p."""
    return float(rel_entr(p, q) + rel_entr(1.0 - p, 1.0 - q))


def _orders_with_kl(p: float, q: float) -> tuple[np.ndarray, np.ndarray]:
    """The orders 1 and :data:`ORDERS` with ``D_α(Bern(p) ‖ Bern(q))`` at each."""
    return (np.concatenate([[1.0], ORDERS]),
            np.concatenate([[bernoulli_kl(p, q)], np.asarray(bernoulli_renyi(p, q, ORDERS))]))


def gdp_delta(mu: float, epsilon: float | np.ndarray) -> Any:
    """δ(ε) of μ-GDP: ``Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` (Dong et al., Corollary 2.13)."""
    e = np.asarray(epsilon, dtype=np.float64)
    return ndtr(-e / mu + mu / 2) - np.exp(e) * ndtr(-e / mu - mu / 2)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """The (ε, δ) implied by ρ-zCDP: ``inf_α exp((α−1)(αρ−ε))/α · (1−1/α)^(α−1)``, capped at 1
    (Canonne, Kamath, Steinke 2020, Proposition 12)."""
    a = ORDERS
    log = (a - 1) * (a * rho - epsilon) - np.log(a) + (a - 1) * np.log1p(-1.0 / a)
    return float(min(1.0, np.exp(np.min(log))))


@dataclass(frozen=True)
class GaussianDP:
    """μ-GDP (Dong, Roth, Su 2022): ``T(M(D), M(D′)) ≥ G_μ``; the Gaussian mechanism with
    sensitivity Δ and noise σ is exactly (Δ/σ)-GDP."""

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _positive("mu", self.mu))

    @property
    def epsilon(self) -> float:
        """The ε at which events are selected (the trade-off curve's knee)."""
        return self.mu

    @property
    def delta(self) -> float:
        return float(gdp_delta(self.mu, self.mu))

    def tradeoff(self, x: Any) -> Any:
        """``G_μ(x) = Φ(Φ⁻¹(1 − x) − μ)``."""
        return ndtr(ndtri(1.0 - np.asarray(x, dtype=np.float64)) - self.mu)

    def margin(self, p_low: float, q_high: float) -> tuple[float, float | None]:
        """``G_μ(1 − p_low) − q_high`` (> 0: refuted) and the point's type-I error."""
        return float(self.tradeoff(1.0 - p_low)) - q_high, 1.0 - p_low

    def parameter_lower(self, p_low: float, q_high: float) -> dict[str, float]:
        """``μ ≥ Φ⁻¹(p_low) − Φ⁻¹(q_high)``: the smallest μ whose curve the box does not
        refute."""
        return {"mu": max(0.0, float(ndtri(p_low) - ndtri(q_high)))}

    def describe(self) -> str:
        return f"{self.mu:g}-GDP"

    def to_dict(self) -> dict[str, object]:
        return {"kind": "gdp", "mu": self.mu, "epsilon": self.epsilon, "delta": self.delta}


@dataclass(frozen=True)
class TradeOff:
    """f-DP: ``T(M(D), M(D′)) ≥ f`` for a trade-off function ``f`` (convex, continuous,
    non-increasing, ``f(x) ≤ 1 − x`` on [0, 1]); ``name`` describes it."""

    f: Callable[[float], float]
    name: str = "f"
    epsilon: float = 1.0

    def __post_init__(self) -> None:
        if not callable(self.f):
            raise InvalidArgument(f"f={fmt(self.f)} must be callable as f(x) -> float")
        grid = np.linspace(0.0, 1.0, 11)
        try:
            values = np.array([float(self.f(float(x))) for x in grid])
        except Exception as exc:  # f raised, or returned something that is not a number
            raise InvalidArgument(f"f={fmt(self.f)} must be callable as f(x) -> float on "
                                  f"[0, 1]: f raised {type(exc).__name__}: {exc}") from exc
        if (np.any(~np.isfinite(values)) or np.any(values < -1e-12)
                or np.any(values > 1 - grid + 1e-9) or np.any(np.diff(values) > 1e-9)):
            raise InvalidArgument(f"f={fmt(self.f)} must be a trade-off function: "
                                  "non-increasing, 0 <= f(x) <= 1 - x on [0, 1]")
        object.__setattr__(self, "epsilon", _positive("epsilon", self.epsilon))

    @property
    def delta(self) -> float:
        return 0.0

    def margin(self, p_low: float, q_high: float) -> tuple[float, float | None]:
        return float(self.f(1.0 - p_low)) - q_high, 1.0 - p_low

    def parameter_lower(self, p_low: float, q_high: float) -> dict[str, float]:
        return {}

    def describe(self) -> str:
        return f"{self.name}-DP"

    def to_dict(self) -> dict[str, object]:
        return {"kind": "f-dp", "f": self.name, "epsilon": self.epsilon, "delta": 0.0}


@dataclass(frozen=True)
class ZCDP:
    """ρ-zCDP (Bun, Steinke 2016): ``D_α(M(D) ‖ M(D′)) ≤ ρα`` for all α > 1; the Gaussian
    mechanism with sensitivity Δ and noise σ is ``Δ²/(2σ²)``-zCDP, exactly."""

    rho: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _positive("rho", self.rho, MAX_EPSILON ** 2 / 2))

    @property
    def epsilon(self) -> float:
        return math.sqrt(2 * self.rho)

    @property
    def delta(self) -> float:
        return zcdp_delta(self.rho, self.epsilon)

    def margin(self, p_low: float, q_high: float) -> tuple[float, float | None]:
        """``max_α D_α(Bern(p_low) ‖ Bern(q_high)) − ρα`` over α ≥ 1 (α = 1: the KL
        divergence, the limit of the condition as α ↓ 1) and the order attaining it."""
        if not p_low > q_high:
            return -math.inf, None
        orders, div = _orders_with_kl(p_low, q_high)
        gaps = div - self.rho * orders
        i = int(np.nanargmax(gaps))
        return float(gaps[i]), float(orders[i])

    def parameter_lower(self, p_low: float, q_high: float) -> dict[str, float]:
        """``ρ ≥ max_α D_α(Bern(p_low) ‖ Bern(q_high)) / α`` over α ≥ 1 (including the KL
        divergence at α = 1, where ``D_α/α`` peaks for nearly equal p and q)."""
        if not p_low > q_high:
            return {"rho": 0.0}
        orders, div = _orders_with_kl(p_low, q_high)
        return {"rho": float(np.nanmax(div / orders))}

    def describe(self) -> str:
        return f"{self.rho:g}-zCDP"

    def to_dict(self) -> dict[str, object]:
        return {"kind": "zcdp", "rho": self.rho, "epsilon": self.epsilon, "delta": self.delta}


@dataclass(frozen=True)
class RenyiDP:
    """(α, ε)-RDP at one order α > 1 (Mironov 2017): ``D_α(M(D) ‖ M(D′)) ≤ ε``."""

    alpha: float
    epsilon: float

    def __post_init__(self) -> None:
        a = check_real("alpha", self.alpha)
        if not (1.0 < a <= MAX_ORDER):
            raise InvalidArgument(f"alpha={fmt(self.alpha)} must be an order in (1, "
                                  f"{MAX_ORDER:g}]")
        object.__setattr__(self, "alpha", a)
        object.__setattr__(self, "epsilon", _positive("epsilon", self.epsilon))

    @property
    def delta(self) -> float:
        return 0.0

    def margin(self, p_low: float, q_high: float) -> tuple[float, float | None]:
        if not p_low > q_high:
            return -math.inf, None
        return float(bernoulli_renyi(p_low, q_high, self.alpha)) - self.epsilon, self.alpha

    def parameter_lower(self, p_low: float, q_high: float) -> dict[str, float]:
        d = bernoulli_renyi(p_low, q_high, self.alpha) if p_low > q_high else 0.0
        return {"epsilon_at_alpha": float(d)}

    def describe(self) -> str:
        return f"({self.alpha:g}, {self.epsilon:g})-RDP"

    def to_dict(self) -> dict[str, object]:
        return {"kind": "rdp", "alpha": self.alpha, "epsilon": self.epsilon, "delta": 0.0}


@dataclass(frozen=True)
class PrivacyCurve:
    """Every (ε, δ(ε)) for ε ≥ 0: ``delta_of_epsilon`` maps an array of ε to δ (a privacy
    profile, e.g. of a privacy-loss distribution); ``name`` describes it."""

    delta_of_epsilon: Callable[[np.ndarray], Any]
    name: str = "delta(epsilon)"
    epsilon: float = 1.0

    def __post_init__(self) -> None:
        if not callable(self.delta_of_epsilon):
            raise InvalidArgument(f"delta_of_epsilon={fmt(self.delta_of_epsilon)} must be "
                                  "callable on an array of epsilons")
        try:
            values = np.asarray(self.delta_of_epsilon(np.array([0.0, 1.0, 5.0])),
                                dtype=np.float64)
        except Exception as exc:  # raised, or returned something that is not numbers
            raise InvalidArgument(f"delta_of_epsilon={fmt(self.delta_of_epsilon)} must be "
                                  "callable on an array of epsilons: it raised "
                                  f"{type(exc).__name__}: {exc}") from exc
        if values.shape != (3,) or np.any(~np.isfinite(values)) or np.any(values < 0) \
                or np.any(values > 1):
            raise InvalidArgument(f"delta_of_epsilon={fmt(self.delta_of_epsilon)} must return "
                                  "one delta in [0, 1] per epsilon")
        object.__setattr__(self, "epsilon", _positive("epsilon", self.epsilon))

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        values = np.asarray(self.delta_of_epsilon(eps), dtype=np.float64)
        if values.shape != eps.shape or not np.all(np.isfinite(values)):
            # a NaN would make every margin NaN, and the check silently pass
            bad = eps[~np.isfinite(values)][:1] if values.shape == eps.shape else eps[:0]
            at = f" (at epsilon={bad[0]:g})" if bad.size else ""
            raise InvalidArgument(f"delta_of_epsilon={fmt(self.delta_of_epsilon)} must return "
                                  f"one finite delta per epsilon{at}")
        return np.clip(values, 0.0, 1.0)

    @cached_property
    def profile(self) -> tuple[np.ndarray, np.ndarray]:
        """The curve on the fixed grid :data:`CURVE_GRID` (evaluated once: an accountant's
        ``get_delta`` is slow)."""
        return CURVE_GRID, self._delta(CURVE_GRID)

    @property
    def delta(self) -> float:
        return float(self._delta(np.array([self.epsilon]))[0])

    def margin(self, p_low: float, q_high: float) -> tuple[float, float | None]:
        """``max p_low − e^ε q_high − δ(ε)`` over the grid points ε (a grid point with a
        positive value is a violation of that (ε, δ(ε)): the check is sound)."""
        if p_low <= 0:
            return -math.inf, None
        eps, delta = self.profile
        values = p_low - np.exp(eps) * q_high - delta
        i = int(np.argmax(values))
        return float(values[i]), float(eps[i])

    def parameter_lower(self, p_low: float, q_high: float) -> dict[str, float]:
        return {}

    def describe(self) -> str:
        return f"{self.name} curve"

    def to_dict(self) -> dict[str, object]:
        return {"kind": "curve", "name": self.name, "epsilon": self.epsilon,
                "delta": self.delta}


#: The curve claim types (each certified by :class:`dpcheck.core.certify.CurveCertifier`).
CURVE_CLAIMS: tuple[type, ...] = (GaussianDP, TradeOff, ZCDP, RenyiDP, PrivacyCurve)


def from_accountant(accountant: Any, *, name: str | None = None) -> Any:
    """The claim an accountant states for a configured mechanism.

    * a dp-accounting ``PLDAccountant`` or ``RdpAccountant`` (after ``compose(event)``) → a
      :class:`PrivacyCurve` of its ``get_delta(ε)`` (the PLD's privacy profile; the RDP
      accountant's optimal conversion);
    * an OpenDP measurement whose output measure is zero-concentrated divergence (zCDP) → a
      :class:`ZCDP` of its privacy map at input distance 1.

    References
    ----------
    Google's dp-accounting (``dp_accounting.pld``, ``dp_accounting.rdp``); OpenDP
    (``make_zCDP_to_approxDP``-free: ρ is read from ``measurement.map(1)``).
    """
    get_delta = getattr(accountant, "get_delta", None)
    if callable(get_delta):
        def delta_of_epsilon(eps: np.ndarray) -> np.ndarray:
            flat = np.asarray(eps, dtype=np.float64).ravel()
            return np.array([float(get_delta(float(e))) for e in flat]).reshape(np.shape(eps))

        return PrivacyCurve(delta_of_epsilon, name or type(accountant).__name__)
    measure = str(getattr(accountant, "output_measure", ""))
    if callable(getattr(accountant, "map", None)) and "ZeroConcentratedDivergence" in measure:
        try:
            rho = accountant.map(1)
        except Exception:  # noqa: BLE001 - a float input metric wants a float distance
            rho = accountant.map(1.0)
        return ZCDP(float(rho))
    raise InvalidArgument(f"accountant={fmt(accountant)} must be a dp-accounting accountant "
                          "(get_delta) or an OpenDP zCDP measurement")
