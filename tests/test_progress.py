"""Progress that tells the truth (issue 28): phases (explore, select, confirm; per pair for
audit_pairs) from the first moment, counts that end at the total, rate and ETA per phase."""

from __future__ import annotations

import io

import dpcheck
from dpcheck.internal.progress import ProgressBar, takes_phase


def mech(d, size, rng):
    return rng.laplace(float(sum(d)), 1.0, size)


def test_phases_are_reported_from_the_start_and_in_order() -> None:
    calls: list[tuple[int, int, str]] = []
    first_draw: list[int] = []

    def slow(d, size, rng):
        first_draw.append(len(calls))
        return mech(d, size, rng)

    dpcheck.audit(slow, [1.0], [0.0], dpcheck.PureDP(1.0), samples=400_000, seed=0,
                  float_features=False,
                  progress=lambda done, total, phase: calls.append((done, total, phase)))
    assert calls[0] == (0, 800_000, "explore") and first_draw[0] == 1  # before any output
    phases = [c[2] for c in calls]
    assert phases.index("select") > phases.index("explore")
    assert phases.index("confirm") > phases.index("select") and calls[-1][0] == 800_000
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)


def test_old_style_callbacks_still_get_done_and_total() -> None:
    calls: list[tuple[int, int]] = []
    dpcheck.audit(mech, [1.0], [0.0], dpcheck.PureDP(1.0), samples=50_000, seed=0,
                  float_features=False, progress=lambda done, total: calls.append((done, total)))
    assert calls[0] == (0, 100_000) and calls[-1] == (100_000, 100_000)
    assert not takes_phase(lambda done, total: None) and takes_phase(ProgressBar(io.StringIO()))


def test_pairs_label_their_phases_and_count_to_the_whole_budget() -> None:
    for confirm in ("each", "best"):
        calls: list[tuple[int, int, str]] = []
        dpcheck.audit_pairs(mech, [([1.0], [0.0]), ([0.0], [1.0])], dpcheck.PureDP(1.0),
                            samples=50_000, seed=0, float_features=False, confirm=confirm,
                            progress=lambda d, t, phase: calls.append((d, t, phase)))
        assert calls[-1][:2] == (200_000, 200_000), confirm
        assert {"explore (pair 1/2)", "explore (pair 2/2)"} <= {c[2] for c in calls}


def test_the_bar_gives_each_phase_its_own_line_rate_and_eta() -> None:
    out = io.StringIO()
    bar = ProgressBar(out, interval=0.0)
    bar(0, 100, phase="explore")
    bar(10, 100, phase="explore")
    bar(10, 100, phase="confirm")
    bar(100, 100, phase="confirm")
    text = out.getvalue()
    assert "\rexplore: [" in text and "\rconfirm: [" in text
    assert text.index("explore") < text.index("\n") < text.index("confirm")  # own line
    assert text.endswith("\n")
