"""Explorations larger than one chunk per side: validation counted chunk by chunk (issue 30
item 5, :mod:`dpcheck.core.explore_validate`).

The client keeps chunk 0 of each side, generates the candidates on its first half and counts
the shortlist on the rest of the exploration (the second half of chunk 0 here, chunks 1 … on
the executor's workers). ``EXPLORE_CHUNK`` is lowered to 2 000 (an exploration of 8 000 per side
spans four chunks per side) so that the tests stay small. Checked here: the counts are those
of the validation outputs drawn on their own streams; generation, validation and confirmation
never share an output (design §4 rule 1); the result is the same bit for bit on a 2-worker
process pool and without an executor; explorations of one chunk are the unchunked procedure.
"""

from __future__ import annotations

import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import dpcheck.core.confirm  # noqa: F401 - CONFIRM_MODULE below
import dpcheck.core.explore_validate  # noqa: F401 - VALIDATE_MODULE below
import dpcheck.events.select  # noqa: F401 - SELECT_MODULE below
from algorithms.mechanisms.noisy_sums import RepeatedLaplace
from dpcheck import PureDP, audit
from dpcheck.core.explore import explore, setup_audit
from dpcheck.core.results import untimed
from dpcheck.events.event import count_events
from dpcheck.internal.rng import generator
from dpcheck.mechanism import as_sampler, draw

EXPLORE_MODULE = sys.modules["dpcheck.core.explore"]
CONFIRM_MODULE = sys.modules["dpcheck.core.confirm"]
VALIDATE_MODULE = sys.modules["dpcheck.core.explore_validate"]
SELECT_MODULE = sys.modules["dpcheck.events.select"]
SMALL = 2_000
SAMPLES = 80_000  # exploration 8 000 per side: four chunks per side
SCALAR = RepeatedLaplace(1.0, 1)  # a Laplace count: distinct float outputs, one feature
VECTOR = RepeatedLaplace(0.1, 3)


def laplace_count(data, size, rng):
    return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(EXPLORE_MODULE, "EXPLORE_CHUNK", SMALL)
    monkeypatch.setattr(CONFIRM_MODULE, "CHUNK", 40_000)


def _setup(mechanism):
    return setup_audit(mechanism, PureDP(0.3), samples=SAMPLES, alpha=0.05, seed=3,
                       relation=None, features=None, candidates=3, explore_fraction=0.1,
                       max_atoms=64, progress=None, float_features=False, executor=None,
                       checkpoint=None, ties=False)


def _chunks(seed_seq, side, data, n):
    """The exploration outputs of one side, chunk by chunk, from their own streams."""
    sampler, out, i = as_sampler(laplace_count), [], 0
    while n > 0:
        size = min(SMALL, n)
        rng = generator(seed_seq, "explore", side, *((i,) if i else ()))
        out.append(draw(sampler, data, size, rng))
        n, i = n - size, i + 1
    return np.concatenate(out)


def test_validation_counts_are_those_of_the_other_chunks(small_chunks):
    """Each chosen event's validation counts are its counts on the exploration outputs after
    the first half of chunk 0 (drawn here again from their streams), generation on that half."""
    setup = _setup(laplace_count)
    n = 3 * SMALL + 7
    e = explore(setup, [1.0], [0.0], n_explore=n, n_confirm=20_000)
    assert e.n_explore == n and e.out_d.shape[0] == SMALL  # chunk 0 only in the client
    val = [_chunks(setup.seed_seq, side, data, n)[SMALL // 2:]
           for side, data in enumerate(([1.0], [0.0]))]
    assert np.array_equal(_chunks(setup.seed_seq, 0, [1.0], n)[:SMALL], e.out_d)
    cols = [e.featurizer(v) for v in val]
    ranked = [c for c in e.chosen if not c.event.support and c.partner is None]
    assert ranked
    support = [c for c in e.chosen if c.event.support]
    assert support  # continuous outputs: every value is seen under one side only
    chunk0 = set(e.out_d) | set(e.out_dp)
    for c in support:  # one-sided values found on chunk 0, never on validation outputs
        assert set(c.event.values) <= chunk0
    for c in ranked:
        k_d, k_dp = (int(count_events([c.event], col)[0]) for col in cols)
        assert (c.explore_p, c.explore_q) == ((k_d, k_dp) if c.direction == "d>d_prime"
                                              else (k_dp, k_d))


def test_selection_never_sees_confirmation_outputs(small_chunks, monkeypatch):
    """Generation sees exactly the first half of chunk 0 of each side; validation the rest of
    the exploration; confirmation fresh outputs: the three sets of (continuous, hence distinct)
    outputs are disjoint, and the support candidates' values are generation outputs."""
    generated, validated, confirmed = [], [], []
    pool, counter, outputs = (SELECT_MODULE.feature_pool, VALIDATE_MODULE.count_events,
                              CONFIRM_MODULE.count_outputs)

    def spy_pool(j, f, gen_d, gen_dp, *args):
        generated.extend([gen_d, gen_dp])
        return pool(j, f, gen_d, gen_dp, *args)

    def spy_count(events, cols):
        validated.append(next(c for c in cols if c is not None))
        return counter(events, cols)

    def spy_outputs(out, *args):
        confirmed.append(np.asarray(out, dtype=float).ravel())
        return outputs(out, *args)

    monkeypatch.setattr(SELECT_MODULE, "feature_pool", spy_pool)
    monkeypatch.setattr(VALIDATE_MODULE, "count_events", spy_count)
    monkeypatch.setattr(CONFIRM_MODULE, "count_outputs", spy_outputs)
    r = audit(laplace_count, [1.0], [0.0], PureDP(0.3), samples=SAMPLES, seed=3,
              float_features=False)
    assert r.explore_samples == 8_000
    seed_seq = np.random.SeedSequence(3)
    explored = [_chunks(seed_seq, side, data, 8_000) for side, data in enumerate(([1.0], [0.0]))]
    gen = np.concatenate(generated)
    assert set(gen) == set(explored[0][:SMALL // 2]) | set(explored[1][:SMALL // 2])
    val = np.concatenate(validated)
    assert set(val) == set(explored[0][SMALL // 2:]) | set(explored[1][SMALL // 2:])
    conf = set(np.concatenate(confirmed))
    drawn = sum(c.size for c in confirmed)  # both sides (Poissonized sizes)
    assert len(val) == 2 * (8_000 - SMALL // 2) and len(conf) == drawn > 2 * 60_000
    assert not conf & set(gen) and not conf & set(val) and not set(gen) & set(val)


@pytest.fixture(scope="module")
def process_pool():
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


@pytest.mark.parametrize("mechanism", [SCALAR, VECTOR], ids=["scalar", "vector"])
def test_split_exploration_is_the_same_on_a_process_pool(small_chunks, process_pool, mechanism):
    def record(executor):
        return untimed(audit(mechanism, [1.0], [0.0], PureDP(0.3), samples=SAMPLES, seed=4,
                             float_features=False, executor=executor).to_dict())

    local = record(None)
    assert local["explore_samples"] == 8_000
    assert record(process_pool) == local


def test_one_chunk_explorations_split_their_own_sample(small_chunks):
    """At most one chunk per side: every output is kept and the validation half is the second
    half of the exploration sample (the procedure of unchunked exploration)."""
    setup = _setup(laplace_count)
    e = explore(setup, [1.0], [0.0], n_explore=SMALL, n_confirm=20_000)
    assert e.n_explore == SMALL and e.out_d.shape[0] == SMALL
    cols = [e.featurizer(out[SMALL // 2:]) for out in (e.out_d, e.out_dp)]
    for c in (c for c in e.chosen if not c.event.support and c.partner is None):
        k_d, k_dp = (int(count_events([c.event], col)[0]) for col in cols)
        assert (c.explore_p, c.explore_q) == ((k_d, k_dp) if c.direction == "d>d_prime"
                                              else (k_dp, k_d))
