"""The project's own claims catalogue (``properties/catalog.toml``): valid, every named test and
mutant exists, and every tested/erratum privacy or utility claim shows it can fail."""

from pathlib import Path

from dpcheck.catalog import (entries_without_mutants, load_catalog, missing_mutants,
                             missing_tests)

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "properties" / "catalog.toml"


def test_catalogue_loads_and_names_existing_tests_and_mutants() -> None:
    entries = load_catalog(CATALOG)
    assert missing_tests(entries, ROOT) == []
    assert missing_mutants(entries, ROOT) == []


def test_every_tested_privacy_or_utility_claim_names_a_mutant() -> None:
    """Issue 10: a claim test that no broken variant can fail checks nothing."""
    lacking = [f"{e.paper} {e.ref}" for e in entries_without_mutants(load_catalog(CATALOG))]
    assert lacking == []
