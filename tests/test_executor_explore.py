"""Exploration on the executor (issue 30 item 5): exploration outputs are drawn in seeded chunks
of ``EXPLORE_CHUNK`` per side, the chunks after the first on the executor's workers, and the
result is the same bit for bit whatever runs them (design §4 rule 5).

``EXPLORE_CHUNK`` is lowered here (3 000: an exploration of 12 000 per side spans four chunks per
side) so that the tests stay small; an exploration of one chunk draws what unchunked exploration
drew (chunk 0 is the stream itself), so audits of ordinary size are unchanged.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
import warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

import dpcheck.core.confirm  # noqa: F401 - CONFIRM_MODULE below
from algorithms.mechanisms.noisy_sums import RepeatedLaplace
from dpcheck import GlobalRandomStateWarning, InvalidArgument, PureDP, audit
from dpcheck.core.explore import exploration_size, explore, setup_audit
from dpcheck.core.results import untimed
from dpcheck.internal.rng import generator
from dpcheck.mechanism import as_sampler, draw

EXPLORE_MODULE = sys.modules["dpcheck.core.explore"]
CONFIRM_MODULE = sys.modules["dpcheck.core.confirm"]
SMALL = 3_000  # exploration chunk of these tests
SAMPLES = 120_000  # exploration 12 000 per side: four chunks per side
VECTOR = RepeatedLaplace(0.1, 5)  # true ε = 0.5; five columns: learned scores are fitted


@pytest.fixture(scope="module")
def process_pool():
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(EXPLORE_MODULE, "EXPLORE_CHUNK", SMALL)
    monkeypatch.setattr(CONFIRM_MODULE, "CHUNK", 50_000)  # confirmation chunked too


def _record(executor, samples=SAMPLES, **kw):
    r = audit(VECTOR, [1.0], [0.0], PureDP(0.3), samples=samples, seed=5, executor=executor,
              float_features=False, **kw)
    return untimed(r.to_dict())


def test_chunked_exploration_is_the_same_on_threads_and_processes(process_pool, monkeypatch):
    """Four exploration chunks of 12 000 per side (40 % of the budget): the validation half is counted on the
    workers, generation keeps the first half of chunk 0 (6 000 outputs per side, as many as an
    unchunked exploration of 12 000 generates on; with chunks of 3 000, 1 500 outputs per side
    generate and learn too little to refute 0.3 here: ε̂ = 0.25, 0.26, 0.31 at seeds 5–7)."""
    monkeypatch.setattr(EXPLORE_MODULE, "EXPLORE_CHUNK", 4 * SMALL)
    monkeypatch.setattr(CONFIRM_MODULE, "CHUNK", 50_000)  # confirmation chunked too
    kw = dict(samples=SAMPLES, explore_fraction=0.4)
    assert exploration_size(SAMPLES, 0.4) == 16 * SMALL
    local = _record(None, **kw)
    assert local["violation"] and 0.3 < local["epsilon_lower"] <= 0.5
    with ThreadPoolExecutor(2) as threads:
        assert _record(threads, **kw) == local
    assert _record(process_pool, **kw) == local


def _setup(executor=None, mechanism=VECTOR):
    return setup_audit(mechanism, PureDP(0.3), samples=SAMPLES, alpha=0.05, seed=5,
                       relation=None, features=None, candidates=3, explore_fraction=0.1,
                       max_atoms=64, progress=None, float_features=False, executor=executor,
                       checkpoint=None, ties=False)


def test_exploration_chunks_have_their_own_streams(small_chunks):
    """Chunk 0 of each side is the unchunked stream; chunk i ≥ 1 its own child stream. Only
    chunk 0 is kept in the client when there are more (the others are counted on the workers,
    :mod:`dpcheck.core.explore_validate`)."""
    setup = _setup()
    n = 2 * SMALL + 5  # three chunks, the last of 5 outputs
    e = explore(setup, [1.0], [0.0], n_explore=n, n_confirm=1_000)
    assert e.n_explore == n
    sampler = as_sampler(VECTOR)
    for side, (data, out) in enumerate((([1.0], e.out_d), ([0.0], e.out_dp))):
        assert np.array_equal(out, draw(sampler, data, SMALL,
                                        generator(setup.seed_seq, "explore", side)))
        drawn = EXPLORE_MODULE._draw_sides(setup, [1.0], [0.0], n, setup.seed_seq, "explore",
                                           None, None)[side]
        parts = [out,
                 draw(sampler, data, SMALL, generator(setup.seed_seq, "explore", side, 1)),
                 draw(sampler, data, 5, generator(setup.seed_seq, "explore", side, 2))]
        assert np.array_equal(drawn, np.concatenate(parts))
    one = explore(setup, [1.0], [0.0], n_explore=SMALL, n_confirm=1_000)  # one chunk per side
    assert np.array_equal(one.out_d, draw(sampler, [1.0], SMALL,
                                          generator(setup.seed_seq, "explore", 0)))
    assert np.array_equal(one.out_dp, draw(sampler, [0.0], SMALL,
                                           generator(setup.seed_seq, "explore", 1)))


def test_exploration_progress_counts_every_chunk(small_chunks):
    reference = None
    with ThreadPoolExecutor(2) as threads:
        for executor in (None, threads):
            every: list[tuple[int, str]] = []
            record = _record(executor, progress=lambda done, total, phase, every=every:
                             every.append((done, phase)))
            reference = reference or record
            assert record == reference
            explore_calls = [d for d, p in every if p == "explore"]
            # one call when exploration starts, then one per chunk 0 of each side; the other
            # three chunks per side are counted on the workers during selection ("validate")
            assert explore_calls == [0, SMALL, 2 * SMALL]
            phases = [p for _, p in every]
            assert phases.index("select") == 3 and phases[4:10] == ["validate"] * 6
            validate_calls = [d for d, p in every if p == "validate"]
            assert validate_calls == sorted(validate_calls)
            assert validate_calls[-1] == 2 * exploration_size(SAMPLES)


def fails_on_chunk_seed(data, size, rng):
    """Fails on about half of the exploration chunks, each with the message of its own stream
    (seed 0: chunk 3 of D and chunks 0 and 1 of D′; the local run meets chunk 3 of D first)."""
    if size == SMALL and rng.random() < 0.5:
        raise ValueError(f"chunk starting with {rng.random():.12f}")
    return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)


def switches_dtype(data, size, rng):
    """Integer outputs on D′, real ones on D: the dtype kind of D's first chunk is the law."""
    out = rng.laplace(float(np.sum(data)), 1.0, size)
    return np.round(out).astype(np.int64) if data[0] == 0.0 else out


@pytest.mark.parametrize("mechanism, message", [
    (fails_on_chunk_seed, "mechanism raised ValueError: chunk starting with 0."),
    (switches_dtype, "dtype"),
])
def test_exploration_errors_read_as_the_local_error(small_chunks, mechanism, message):
    """The error of the first failing chunk in the local order, whichever worker fails first
    (a forked pool: the mechanisms of this file are importable there)."""
    messages = []
    fork = multiprocessing.get_context("fork")
    with ThreadPoolExecutor(3) as threads, ProcessPoolExecutor(2, mp_context=fork) as pool:
        for executor in (None, threads, pool):
            with pytest.raises(InvalidArgument) as info:
                audit(mechanism, [1.0], [0.0], PureDP(1.0), samples=SAMPLES, seed=0,
                      executor=executor)
            messages.append(str(info.value))
    assert message in messages[0] and "\n" not in messages[0]
    assert messages == [messages[0]] * 3


def global_state_mech(d, size, rng):
    return float(sum(d)) + np.random.laplace(0.0, 1.0, size)


def test_global_random_state_warning_with_chunked_exploration(small_chunks):
    with ThreadPoolExecutor(2) as threads, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = audit(global_state_mech, [1.0], [0.0], PureDP(1.0), samples=SAMPLES, seed=0,
                  float_features=False, executor=threads)
    ours = [w for w in caught if issubclass(w.category, GlobalRandomStateWarning)]
    assert len(ours) == 1  # chunk 0 of D, drawn here, is checked (as unchunked exploration was)
    assert any(w.startswith("GlobalRandomStateWarning:") for w in r.warnings)


class ThreadRecorder:
    """A Laplace count that notes the thread of every call of exploration size (and the size
    of every call)."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, int]] = []
        self.sizes: list[int] = []

    def __call__(self, data, size, rng):
        self.sizes.append(size)
        if size == SMALL:
            self.calls.append((data[0], threading.get_ident()))
        return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)


def test_exploration_chunks_after_the_first_run_on_the_workers(small_chunks):
    mechanism = ThreadRecorder()
    with ThreadPoolExecutor(2) as threads:
        audit(mechanism, [1.0], [0.0], PureDP(1.0), samples=SAMPLES, seed=0,
              float_features=False, executor=threads)
    here = threading.get_ident()
    assert len(mechanism.calls) == 8
    assert [side for side, ident in mechanism.calls if ident == here] == [1.0]  # chunk 0 of D
    mechanism.calls.clear()
    audit(mechanism, [1.0], [0.0], PureDP(1.0), samples=SAMPLES, seed=0, float_features=False)
    assert len(mechanism.calls) == 8 and all(ident == here for _, ident in mechanism.calls)


def test_checkpoint_resume_redraws_only_the_chunked_exploration(small_chunks, tmp_path):
    """Exploration is not checkpointed (as before): a rerun redraws its chunks from the same
    seeds, finds the same events, and reuses every saved confirmation chunk."""
    mechanism = ThreadRecorder()
    path = tmp_path / "audit.ckpt.json"
    kw = dict(samples=SAMPLES, seed=0, float_features=False, checkpoint=path)
    with ThreadPoolExecutor(2) as threads:
        first = audit(mechanism, [1.0], [0.0], PureDP(1.0), executor=threads, **kw)
    assert len(mechanism.sizes) > 8  # exploration and confirmation chunks
    mechanism.sizes.clear()
    again = audit(mechanism, [1.0], [0.0], PureDP(1.0), **kw)
    assert mechanism.sizes == [SMALL] * 8  # the exploration chunks, nothing of confirmation
    assert untimed(again.to_dict()) == untimed(first.to_dict())
