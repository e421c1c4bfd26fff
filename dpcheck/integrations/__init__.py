"""Integrations of differential-privacy libraries (optional dependencies).

:mod:`dpcheck.integrations.diffprivlib`
    diffprivlib mechanism objects (``randomise``) and ``diffprivlib.tools`` functions as
    mechanisms, seeded from dpcheck's ``rng`` once per chunk.
:mod:`dpcheck.integrations.opendp`
    OpenDP measurements as mechanisms, and the claim their privacy map makes for an input
    distance (pure ε, zCDP ρ converted to (ε, δ), approximate (ε, δ)).

Each module imports its library lazily: importing :mod:`dpcheck` never needs them. Install them
with the ``dev`` extra (versions pinned in ``pyproject.toml``).
"""

from __future__ import annotations

__all__ = ["diffprivlib", "opendp"]
