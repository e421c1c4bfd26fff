"""One-time RAPPOR (Bloom filter + permanent randomized response), as benchmarked by DP-Sniper.

A client holding value v sets the bits ``B(v) = {mmh3(str(v), seed=i) mod m : i < h}`` of an
m-bit Bloom filter and reports each bit through *permanent randomized response*: with probability
f/2 the bit is replaced by 1, with probability f/2 by 0, otherwise kept. Bits are independent, so
for two values the likelihood ratio of a report is a product over the bits where the filters
differ, each factor ``((1 − f/2)/(f/2))^{±1}``; the exact ε of the pair is

``ε(v, v′) = |B(v) △ B(v′)| · ln((1 − f/2)/(f/2))``,

at most ``2h · ln((1 − f/2)/(f/2))``, attained iff ``B(v)`` and ``B(v′)`` are disjoint sets of h
distinct positions each (RAPPOR's own bound, Erlingsson et al. 2014, Theorem 1).

The hash is MurmurHash3 x86-32 (the ``mmh3`` package used by DP-Sniper), implemented here in pure
Python once per call, so the filters — and the true ε of every pair — match DP-Sniper's
``OneTimeRappor(n_hashes=4, filter_size=20, f=0.95)`` exactly.

References
----------
Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: Randomized Aggregatable Privacy-Preserving Ordinal
Response", CCS 2014, §3 steps 1–2 and Theorem 1.
B. Bichsel et al., "DP-Sniper", IEEE S&P 2021 (``dpsniper/mechanisms/rappor.py``).
A. Appleby, MurmurHash3 (``MurmurHash3_x86_32``), public domain.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpcheck.validation import fmt, check_int, check_real
from dpcheck.errors import InvalidArgument

from .primitives import _check_rng, _check_size, _records

__all__ = ["murmur3_32", "OneTimeRappor"]

_MASK = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _mix(k: int) -> int:
    k = (k * 0xCC9E2D51) & _MASK
    return (_rotl(k, 15) * 0x1B873593) & _MASK


def murmur3_32(key: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86-32 of ``key`` as a signed 32-bit int (the value ``mmh3.hash`` returns).

    References
    ----------
    A. Appleby, ``MurmurHash3_x86_32`` (smhasher). Test vector: ``murmur3_32(b"foo") ==
    -156908512``.
    """
    if not isinstance(key, bytes):
        raise InvalidArgument(f"key={fmt(key)} must be bytes")
    h = check_int(seed, "seed", minimum=0) & _MASK
    blocks = len(key) // 4
    for i in range(blocks):
        h ^= _mix(int.from_bytes(key[4 * i : 4 * i + 4], "little"))
        h = (_rotl(h, 13) * 5 + 0xE6546B64) & _MASK
    tail = key[4 * blocks :]
    if tail:
        h ^= _mix(int.from_bytes(tail, "little"))
    h ^= len(key)
    h = ((h ^ (h >> 16)) * 0x85EBCA6B) & _MASK
    h = ((h ^ (h >> 13)) * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


@dataclass(frozen=True, slots=True)
class OneTimeRappor:
    """One-time RAPPOR on a single integer record; output rows of m bits (int8 0/1).

    The dataset is ``[v]`` with v an integer; neighbours are ``[v]`` and ``[v′]`` (replace-one,
    local model). Exact ε of a pair: :meth:`pair_epsilon`; worst case ``2h·ln((1−f/2)/(f/2))``
    (0.8007 for h = 4, f = 0.95).

    Parameters
    ----------
    n_hashes
        h ≥ 1.
    filter_size
        m ≥ 1 bits.
    f
        Permanent-randomized-response probability, in (0, 1).

    References
    ----------
    Ú. Erlingsson, V. Pihur, A. Korolova, CCS 2014, §3 and Theorem 1; DP-Sniper
    ``OneTimeRappor``.
    """

    n_hashes: int = 4
    filter_size: int = 20
    f: float = 0.95

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_hashes", check_int(self.n_hashes, "n_hashes", minimum=1))
        size = check_int(self.filter_size, "filter_size", minimum=1)
        object.__setattr__(self, "filter_size", size)
        f = check_real("f", self.f)
        if not 0.0 < f < 1.0:
            raise InvalidArgument(f"f={fmt(self.f)} must be in (0, 1)")
        object.__setattr__(self, "f", f)

    @property
    def bit_epsilon(self) -> float:
        """ε of one differing bit: ``ln((1 − f/2)/(f/2))``."""
        return math.log((1.0 - self.f / 2.0) / (self.f / 2.0))

    @property
    def true_epsilon(self) -> float:
        """Worst case over all value pairs: ``2h · bit_epsilon`` (attained by disjoint filters)."""
        return 2 * self.n_hashes * self.bit_epsilon

    def value(self, data: Sequence[int]) -> int:
        """The validated single integer record of ``data``."""
        arr = _records(data, integer=True)
        if arr.shape != (1,):
            raise InvalidArgument(f"data={fmt(data)} must be exactly one integer record")
        return int(arr[0])

    def positions(self, value: int) -> frozenset[int]:
        """The Bloom-filter bits ``{mmh3(str(value), seed=i) mod m : i < h}``."""
        key = str(check_int(value, "value")).encode()
        return frozenset(murmur3_32(key, i) % self.filter_size for i in range(self.n_hashes))

    def bloom(self, data: Sequence[int]) -> np.ndarray:
        """The clean filter of ``data`` as an int8 vector of length m."""
        bits = np.zeros(self.filter_size, dtype=np.int8)
        bits[sorted(self.positions(self.value(data)))] = 1
        return bits

    def bit_probabilities(self, data: Sequence[int]) -> np.ndarray:
        """``P[bit = 1]`` per position (bits are independent): ``1 − f/2`` on the filter, else
        ``f/2``."""
        return np.where(self.bloom(data) == 1, 1.0 - self.f / 2.0, self.f / 2.0)

    def pair_epsilon(self, d: Sequence[int], d_prime: Sequence[int]) -> float:
        """Exact ε of the pair: ``|B(v) △ B(v′)| · bit_epsilon``."""
        diff = self.positions(self.value(d)) ^ self.positions(self.value(d_prime))
        return len(diff) * self.bit_epsilon

    def sample(self, data: Sequence[int], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. reports, int8 of shape ``(size, filter_size)``."""
        clean = self.bloom(data)
        n, gen = _check_size(size), _check_rng(rng)
        u = gen.random((n, self.filter_size))
        half = self.f / 2.0
        return np.where(u < half, 1, np.where(u < self.f, 0, clean)).astype(np.int8)
