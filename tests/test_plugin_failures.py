"""Inside pytest: a mechanism that raises gives one readable paragraph (no dpcheck frames, the
claim, the replay command); JUnit XML carries the claim, verdicts and bounds as properties."""

from __future__ import annotations

import xml.etree.ElementTree as ET

pytest_plugins = ["pytester"]

SUITE = '''
import numpy as np
import pytest
import dpcheck

def broken_helper(data):
    raise ValueError("boom: negative count")

@pytest.mark.claim(kind="privacy")
def test_mechanism_raises(dp_audit):
    def mech(data, size, rng):
        return broken_helper(data) + rng.laplace(0.0, 1.0, size)
    dp_audit(mech, [1, 0], [1], dpcheck.PureDP(1.0), samples=2000)

@pytest.mark.claim(kind="privacy")
def test_laplace(dp_audit):
    def lap(data, size, rng):
        return np.sum(data) + rng.laplace(0.0, 1.0, size)
    dp_audit(lap, [1, 0], [1], dpcheck.PureDP(1.0), samples=20000, float_features=False)
'''


def test_raising_mechanism_gives_one_paragraph_and_junit_has_properties(pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly",
                                "--dpcheck-report", "none", "--junitxml", "junit.xml")
    result.assert_outcomes(passed=1, failed=1)
    text = result.stdout.str()
    block = text[text.index("test_mechanism_raises"):text.index("short test summary")]
    assert "raised ValueError: boom: negative count" in block
    assert "the mechanism mech (in test_mechanism_raises)" in block  # no <locals>
    assert "in broken_helper" in block and "replay: pytest" in block
    assert "dpcheck/core/audit.py" not in block and "dpcheck/mechanism.py" not in block
    assert len(block.splitlines()) < 20
    tree = ET.parse(pytester.path / "junit.xml")
    props = {p.get("name"): p.get("value")
             for case in tree.iter("testcase") if case.get("name") == "test_laplace"
             for p in case.iter("property")}
    assert props["dpcheck.call1.verdict"] == "not-refuted"
    assert float(props["dpcheck.call1.epsilon_lower"]) < 1.5
    assert props["dpcheck.call1.claim"].startswith("epsilon=1.0")


OWN_LAW = '''
import numpy as np
import pytest
import dpcheck

class RR:
    """Randomized response on one bit whose pmf is right; ``drop`` makes the sampler never
    output 1 on data 0 (the shape of a sampler bug the mutation run found: a mixture that never
    draws its last part)."""
    def __init__(self, drop):
        self.drop, self.p = drop, np.exp(1.0) / (1 + np.exp(1.0))
    def pmf(self, data):
        b = int(data[0])
        return {b: self.p, 1 - b: 1 - self.p}
    def sample(self, data, size, rng):
        b = int(data[0])
        keep = rng.random(size) < self.p
        out = np.where(keep, b, 1 - b)
        return np.zeros(size, dtype=np.int64) if (self.drop and b == 0) else out

@pytest.mark.claim(kind="privacy")
@pytest.mark.parametrize("drop", [False, True])
def test_rr(dp_audit, drop):
    dp_audit(RR(drop), [1], [0], dpcheck.PureDP(10.0), samples=20000)
'''


def test_a_sampler_that_contradicts_its_own_pmf_fails_the_test(pytester):
    """Issue 27: a sampler disagreeing with its own exact law fails the test (it used to be a
    warning on the result only), at a level outside the family α (1e-9)."""
    pytester.makepyfile(test_own_law=OWN_LAW)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly",
                                "--dpcheck-report", "none")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "FAILED test_own_law.py::test_rr[True]" in out
    assert "sampler contradicts its pmf (chi-square p = " in out and "fails at p <= 1e-09" in out
