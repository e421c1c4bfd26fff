"""The version of dpcheck (one place: ``pyproject.toml`` reads the same number)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
