"""``python -m dpcheck``: the ``dpcheck`` command line (see :mod:`dpcheck.cli`)."""

from dpcheck.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
