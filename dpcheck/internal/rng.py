"""Seed derivation.

Every random stream dpcheck uses is a child of one :class:`numpy.random.SeedSequence`, derived by
appending stable integers to its ``spawn_key`` (never by ``spawn()``, which mutates the parent,
and never by Python's randomised ``hash()``), so the same seed gives the same streams in any
process, under xdist or not.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["stable_hash", "child", "generator"]


def stable_hash(text: str) -> int:
    """A 64-bit integer hash of ``text`` that is identical across processes and platforms."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def child(parent: np.random.SeedSequence, *keys: int | str) -> np.random.SeedSequence:
    """The child of ``parent`` named by ``keys`` (ints or strings, hashed stably)."""
    extra = tuple(k if isinstance(k, int) else stable_hash(k) for k in keys)
    return np.random.SeedSequence(
        entropy=parent.entropy, spawn_key=tuple(parent.spawn_key) + extra,
        pool_size=parent.pool_size,
    )


def generator(parent: np.random.SeedSequence, *keys: int | str) -> np.random.Generator:
    """A PCG64 generator on the child stream ``keys`` of ``parent``."""
    return np.random.Generator(np.random.PCG64(child(parent, *keys)))
