"""Exact privacy analysis of two finite output distributions ``P = M(D)`` and ``Q = M(D′)``.

For a mechanism with finite output support the privacy of one pair of neighbouring datasets is
fully described by the two output distributions. :func:`privacy_loss` computes

* the pure-DP level ``ε = max_o |ln P(o) − ln Q(o)|`` (Dwork & Roth, Definition 2.4 with δ = 0);
* the exact δ(ε) curve, i.e. the hockey-stick divergence
  ``δ(ε) = max(H_ε(P‖Q), H_ε(Q‖P))`` with ``H_ε(P‖Q) = Σ_o max(0, P(o) − e^ε Q(o))``, which is the
  smallest δ for which the pair satisfies (ε, δ)-DP (Balle, Barthe & Gaboardi 2018, Theorem 1;
  the same curve is the object of Balle & Wang 2018, Theorem 5);
* its inverse ε(δ);
* the exact Rényi divergences, the smallest ρ (zCDP) and μ (GDP) and the trade-off curve
  (:meth:`ExactPrivacy.renyi`, :meth:`~ExactPrivacy.rho`, :meth:`~ExactPrivacy.mu`,
  :meth:`~ExactPrivacy.tradeoff`; the numerics are in :mod:`dpcheck.exact_curves`), so that
  :meth:`ExactPrivacy.holds` decides every claim of :mod:`dpcheck.claims` and :mod:`dpcheck.curves`.

All computations are done on log-ratios ``L(o) = ln P(o) − ln Q(o)``: each term of ``H_ε`` is
evaluated as ``P(o) · (−expm1(ε − L(o)))``, which never forms ``e^ε`` and stays accurate for ε up to
~700 and probabilities down to 1e-300.

References
----------
C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Definition 2.4.
B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by subsampling: tight analyses via
couplings and divergences", NeurIPS 2018 (hockey-stick characterisation of (ε, δ)-DP).
B. Balle, Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy: analytical
calibration and optimal denoising", ICML 2018 (the δ(ε) privacy curve).
I. Mironov, "Rényi Differential Privacy", CSF 2017. M. Bun, T. Steinke, "Concentrated
Differential Privacy", TCC 2016. J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy",
JRSS B 84 (2022).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpcheck import exact_curves
from dpcheck.curves import GaussianDP, PrivacyCurve, RenyiDP, TradeOff, ZCDP
from dpcheck.errors import InvalidArgument
from dpcheck.validation import check_delta, check_real, fmt

__all__ = ["ExactPrivacy", "privacy_loss", "exact_privacy"]

#: Absolute tolerance on ``Σ p(o) = 1`` accepted by :func:`privacy_loss`.
SUM_TOLERANCE = 1e-9
#: Slack used by :meth:`ExactPrivacy.holds` when comparing δ(ε) with the claimed δ.
HOLDS_TOLERANCE = 1e-12
#: Relative slack of :meth:`ExactPrivacy.holds` on a curve claim's parameter (μ, ρ, ε(α)) and on
#: trade-off values; absorbs rounding and ρ's numerical search (:func:`exact_curves.zcdp_rho`).
CURVE_TOLERANCE = 1e-9
_CHUNK = 1 << 20  # max matrix entries per block in delta_curve


@dataclass(frozen=True, slots=True)
class _Direction:
    """Sufficient statistics of ``H_ε(P‖Q)`` for ε ≥ 0."""

    mismatch: float  # mass of P where Q = 0 (contributes for every ε)
    log_ratio: np.ndarray  # L(o) > 0 on the common support, sorted descending
    p: np.ndarray  # P(o) matching log_ratio

    @classmethod
    def build(cls, p: np.ndarray, q: np.ndarray) -> _Direction:
        only_p = (p > 0) & (q == 0)
        both = (p > 0) & (q > 0)
        lr = np.log(p[both]) - np.log(q[both])
        keep = lr > 0
        order = np.argsort(-lr[keep], kind="stable")
        return cls(math.fsum(p[only_p]), lr[keep][order], p[both][keep][order])

    def hockey(self, eps: np.ndarray) -> np.ndarray:
        """``H_ε`` for a 1-d array of ε ≥ 0 (``inf`` allowed)."""
        out = np.full(eps.shape, self.mismatch)
        n = self.log_ratio.size
        if n == 0:
            return out
        step = max(1, _CHUNK // n)
        for start in range(0, eps.size, step):
            block = eps[start : start + step, None]
            gap = np.minimum(block - self.log_ratio[None, :], 0.0)  # ε − L, only L > ε counts
            terms = self.p * np.maximum(-np.expm1(gap), 0.0)
            out[start : start + step] += terms.sum(axis=1)
        return out

    def solve(self, delta: float) -> float:
        """Smallest ε ≥ 0 with ``H_ε ≤ delta`` (``inf`` if none)."""
        if self.mismatch > delta:
            return math.inf
        points = np.append(np.unique(self.log_ratio)[::-1], 0.0)  # descending; last is 0

        def values(i: int) -> float:
            return float(self.hockey(points[i : i + 1])[0])

        if values(points.size - 1) <= delta:
            return 0.0
        # H at points[0] = max L is the mismatch ≤ delta; H at the last point (0) > delta.
        good, bad = 0, points.size - 1
        while bad - good > 1:
            mid = (good + bad) // 2
            if values(mid) <= delta:
                good = mid
            else:
                bad = mid
        # On (lo, hi] the active set {L > lo} is fixed: H(ε) = H(lo) − (e^ε − e^lo)·Σ q.
        lo, hi = float(points[bad]), float(points[good])
        active = self.log_ratio > lo
        scaled_q = math.fsum(self.p[active] * np.exp(lo - self.log_ratio[active]))  # e^lo Σ q
        eps = lo + math.log1p((values(bad) - delta) / scaled_q)
        return min(max(eps, lo), hi)


@dataclass(frozen=True, slots=True)
class ExactPrivacy:
    """Exact privacy of one pair of finite output distributions (P, Q).

    Parameters
    ----------
    epsilon
        ``max_o |ln P(o) − ln Q(o)|`` over the union of supports; ``inf`` on a support mismatch.
    epsilon_pq
        ``max_o ln(P(o)/Q(o))`` over the support of P (clamped at 0).
    epsilon_qp
        ``max_o ln(Q(o)/P(o))`` over the support of Q (clamped at 0).
    support_size
        Number of outputs with positive probability under P or Q.
    outputs, p_values, q_values
        The outputs of the union of supports (in first-seen order) and their probabilities.

    References
    ----------
    B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by subsampling", NeurIPS 2018,
    Theorem 1 (``(ε, δ)``-DP ⇔ hockey-stick divergence ≤ δ in both directions).
    """

    epsilon: float
    epsilon_pq: float
    epsilon_qp: float
    support_size: int
    outputs: tuple[Hashable, ...] = field(repr=False)
    p_values: tuple[float, ...] = field(repr=False)
    q_values: tuple[float, ...] = field(repr=False)

    def _directions(self) -> tuple[_Direction, _Direction]:
        p = np.asarray(self.p_values, dtype=float)
        q = np.asarray(self.q_values, dtype=float)
        return _Direction.build(p, q), _Direction.build(q, p)

    def delta(self, epsilon: float) -> float:
        """The smallest δ such that the pair satisfies (ε, δ)-DP (hockey-stick divergence).

        Parameters
        ----------
        epsilon
            ε ≥ 0 (``inf`` allowed); ε = 0 gives the total-variation distance.

        Returns
        -------
        float
            ``max(Σ_o max(0, P(o) − e^ε Q(o)), Σ_o max(0, Q(o) − e^ε P(o)))``.
        """
        return float(self.delta_curve(np.array([_check_eps(epsilon, "epsilon")]))[0])

    def delta_curve(self, epsilons: ArrayLike) -> np.ndarray:
        """Vectorised :meth:`delta`: an array of δ(ε) with the shape of ``epsilons``."""
        try:
            eps = np.asarray(epsilons, dtype=float)
        except (TypeError, ValueError):
            raise InvalidArgument(f"epsilons={fmt(epsilons)} must be an array of reals") from None
        bad = np.flatnonzero(~(eps.ravel() >= 0))
        if bad.size:
            i = int(bad[0])
            raise InvalidArgument(f"epsilons[{i}]={float(eps.ravel()[i])!r} must be >= 0")
        flat = eps.ravel()
        pq, qp = self._directions()
        out = np.maximum(pq.hockey(flat), qp.hockey(flat))
        return np.clip(out, 0.0, 1.0).reshape(eps.shape)

    def epsilon_for_delta(self, delta: float) -> float:
        """The smallest ε ≥ 0 with ``delta(ε) ≤ δ``; ``inf`` if there is none.

        δ(ε) is continuous, non-increasing and smooth between the log-ratios; the breakpoint
        interval is located by bisection over the sorted log-ratios and the equation
        ``δ(ε) = δ`` is then solved in closed form within the piece. The result is finally nudged
        up by a few ulps if rounding left ``delta(ε)`` above δ.

        Parameters
        ----------
        delta
            δ in [0, 1). No finite ε exists when δ is below the mass of a support mismatch.
        """
        d = check_delta(delta)
        pq, qp = self._directions()
        eps = max(pq.solve(d), qp.solve(d))
        for _ in range(64):
            if math.isinf(eps) or self.delta(eps) <= d:
                break
            eps = math.nextafter(eps, math.inf)
        return eps

    def renyi(self, orders: ArrayLike, direction: str = "both") -> Any:
        """Exact Rényi divergence ``D_α`` at one order or an array of orders α ≥ 1.

        ``direction="both"`` (default) is ``max(D_α(P‖Q), D_α(Q‖P))``, what an RDP claim
        bounds; ``"pq"``/``"qp"`` one direction. α = 1 is the KL divergence, α = ∞ the
        max-divergence (equal to :attr:`epsilon`); ``inf`` on a support mismatch. See
        :func:`dpcheck.exact_curves.renyi_divergence`.

        References
        ----------
        I. Mironov, "Rényi Differential Privacy", CSF 2017, Definition 3.
        """
        return exact_curves.renyi_divergence(self.p_values, self.q_values, orders, direction)

    def rho(self) -> float:
        """The smallest ρ for which the pair is ρ-zCDP, ``sup_{α>1} D_α/α`` (both directions;
        grid plus Brent refinement, :func:`dpcheck.exact_curves.zcdp_rho`).

        References
        ----------
        M. Bun, T. Steinke, "Concentrated Differential Privacy", TCC 2016, Definition 1.1.
        """
        return exact_curves.zcdp_rho(self.p_values, self.q_values)

    def mu(self) -> float:
        """The smallest μ for which the pair is μ-GDP (exact, from the vertices of the
        trade-off curve: :func:`dpcheck.exact_curves.gdp_mu`).

        References
        ----------
        J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", JRSS B 84 (2022), Def. 2.6.
        """
        return exact_curves.gdp_mu(self.p_values, self.q_values)

    def tradeoff(self, x: ArrayLike, direction: str = "both") -> Any:
        """The exact trade-off function β(x) at type-I errors x ∈ [0, 1]: by default the
        pointwise minimum of ``T(P, Q)`` and ``T(Q, P)`` (the pair is f-DP iff it is ≥ f), or one
        direction (``"pq"``, ``"qp"``). See :func:`dpcheck.exact_curves.tradeoff`.

        References
        ----------
        J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", JRSS B 84 (2022), Def. 2.3.
        """
        return exact_curves.tradeoff(self.p_values, self.q_values, x, direction)

    def holds(self, claim: Any) -> bool:
        """Whether the pair satisfies ``claim``, any claim :func:`dpcheck.audit` accepts.

        * ``PureDP``/``ApproxDP``: ``delta(claim.epsilon) ≤ claim.delta + 1e-12``;
        * ``GaussianDP``, ``ZCDP``, ``RenyiDP``: :meth:`mu`, :meth:`rho` or ``renyi(alpha)`` ≤ the
          claimed μ, ρ or ε, up to a relative ``CURVE_TOLERANCE = 1e-9``;
        * ``TradeOff(f)``: ``f ≤`` :meth:`tradeoff` at every vertex of both directions' curves
          and on 1,001 equally spaced x (exact for a convex f: a convex function below a
          piecewise-linear one at its vertices is below it everywhere);
        * ``PrivacyCurve``: δ(ε) ≤ the claimed δ(ε) + 1e-12 at every ε of the claim's grid
          (:attr:`dpcheck.PrivacyCurve.profile`: 0 to 12 in steps of 0.02, evaluated once — an
          accountant's ``get_delta`` is slow — and the grid the audit tests the curve on).

        The absolute slack ``HOLDS_TOLERANCE = 1e-12`` absorbs floating-point rounding in δ(ε) and
        in probabilities that sum to 1 only up to rounding.
        """
        tol = 1.0 + CURVE_TOLERANCE
        if isinstance(claim, GaussianDP):
            return self.mu() <= claim.mu * tol
        if isinstance(claim, ZCDP):
            return self.rho() <= claim.rho * tol
        if isinstance(claim, RenyiDP):
            return self.renyi(claim.alpha) <= claim.epsilon * tol
        if isinstance(claim, TradeOff):
            return self._holds_tradeoff(claim)
        if isinstance(claim, PrivacyCurve):
            eps, delta = claim.profile
            return bool(np.all(self.delta_curve(eps) <= delta + HOLDS_TOLERANCE))
        try:
            eps, dlt = claim.epsilon, claim.delta
        except AttributeError:
            raise InvalidArgument(f"claim={fmt(claim)} must be a dpcheck claim") from None
        return self.delta(eps) <= check_real("claim.delta", dlt) + HOLDS_TOLERANCE

    def _holds_tradeoff(self, claim: TradeOff) -> bool:
        vx, vy = exact_curves.tradeoff_vertices(self.p_values, self.q_values)
        xs = np.union1d(np.union1d(vx, vy), np.linspace(0.0, 1.0, 1001))
        f = np.array([float(claim.f(float(x))) for x in xs])
        return bool(np.all(f <= self.tradeoff(xs) * (1.0 + CURVE_TOLERANCE) + HOLDS_TOLERANCE))

    def to_dict(self) -> dict[str, object]:
        """JSON-safe summary (``inf`` stays the float ``inf``)."""
        return {
            "epsilon": self.epsilon,
            "epsilon_pq": self.epsilon_pq,
            "epsilon_qp": self.epsilon_qp,
            "support_size": self.support_size,
        }


def _check_eps(value: Any, name: str) -> float:
    eps = check_real(name, value)
    if not eps >= 0:
        raise InvalidArgument(f"{name}={fmt(value)} must be >= 0")
    return eps


def _check_distribution(value: Any, name: str) -> dict[Hashable, float]:
    if not isinstance(value, Mapping):
        raise InvalidArgument(f"{name}={fmt(value)} must be a mapping output -> probability")
    out: dict[Hashable, float] = {}
    for key, prob in value.items():
        try:
            hash(key)
        except TypeError:
            raise InvalidArgument(f"{name} has unhashable output {fmt(key)}") from None
        label = f"{name}[{fmt(key)}]"
        prob = check_real(label, prob)
        if math.isinf(prob) or prob < 0:
            raise InvalidArgument(f"{label}={fmt(prob)} must be finite and >= 0")
        out[key] = prob
    total = math.fsum(out.values())
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise InvalidArgument(f"{name} sums to {total!r}, must sum to 1")
    return out


def _directional(num: np.ndarray, den: np.ndarray) -> float:
    support = num > 0
    if (den[support] == 0).any():
        return math.inf
    lr = np.log(num[support]) - np.log(den[support])
    return max(0.0, float(lr.max())) if lr.size else 0.0


def privacy_loss(p: Mapping[Hashable, float], q: Mapping[Hashable, float]) -> ExactPrivacy:
    """Exact privacy of the output distributions ``p = M(D)`` and ``q = M(D′)``.

    Parameters
    ----------
    p, q
        Mappings output → probability. Outputs are hashable; probabilities are finite, ≥ 0 and
        sum to 1 within 1e-9. A zero (or missing) entry means "not in the support".

    Returns
    -------
    ExactPrivacy
        ε, the directional ε's and the exact δ(ε) curve of the pair.

    Raises
    ------
    InvalidArgument
        If ``p`` or ``q`` is not a valid probability mapping.

    References
    ----------
    C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Def. 2.4.
    """
    pd, qd = _check_distribution(p, "p"), _check_distribution(q, "q")
    keys = [k for k in dict.fromkeys([*pd, *qd]) if pd.get(k, 0.0) > 0 or qd.get(k, 0.0) > 0]
    pv = np.array([pd.get(k, 0.0) for k in keys], dtype=float)
    qv = np.array([qd.get(k, 0.0) for k in keys], dtype=float)
    e_pq, e_qp = _directional(pv, qv), _directional(qv, pv)
    return ExactPrivacy(
        epsilon=max(e_pq, e_qp),
        epsilon_pq=e_pq,
        epsilon_qp=e_qp,
        support_size=len(keys),
        outputs=tuple(keys),
        p_values=tuple(float(x) for x in pv),
        q_values=tuple(float(x) for x in qv),
    )


exact_privacy = privacy_loss
