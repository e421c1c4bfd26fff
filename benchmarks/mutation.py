"""Generic mutation score of the shared mechanisms against their fast unit tests (mutmut).

Not part of CI. For each module of ``algorithms/mechanisms/`` that has a unit-test file
``tests/mechanisms/test_<module>*.py``, the repository is copied to a scratch directory (mutmut 3
writes its mutated copies under ``mutants/`` of the directory it runs in; the checkout is never
touched), ``[tool.mutmut]`` is set to mutate that module and to run only its unit tests, and
``mutmut run`` is executed. The script then prints the mutation score per module (killed /
(killed + survived); mutants that time out or crash the runner are counted apart) and lists every
surviving mutant with its diff, and writes ``reports/bench/mutation.json``.

Install the tool with the ``mutation`` extra (``pip install -e ".[mutation]"``). Usage::

    python benchmarks/mutation.py                          # primitives, selection, sparse_vector
    python benchmarks/mutation.py primitives --jobs 2 --keep /tmp/mut

A survivor is either killed by a better unit test or explained as an equivalent mutant (a change
no test can observe, e.g. ``integer=None`` for ``integer=False`` where only truthiness is read);
the explanations are kept in ``EQUIVALENT`` below, keyed by :func:`stable_key` — the function's
qualified name and the mutation's changed lines, whitespace-normalised (``mutmut show NAME``'s
``-``/``+`` lines) — not by mutmut's name, whose ``__mutmut_<n>`` number shifts whenever the
function's code changes. Every run computes the key of every generated mutant and reports the
explanations of the mutated package that match none of them as *stale* (``stale_equivalent``),
to be reviewed and deleted. Two mutants of one function that make the same change to two
identical lines share a key (one explanation covers both).

Per-paper mode (``--paper 000 [001 ...]``): the paper's reference subpackage ``algorithms/<dir>/``
(the directory of its claim tests in ``properties/catalog.toml``; ``buggy.py`` and ``testbeds.py``
are not mutated: the first is deliberately broken, the second is test scaffolding) is mutated and
mutants are killed by that paper's claim tests ``properties/<dir>/`` only. A full claim suite takes
minutes, so the mutants are generated and listed (mutmut's own generator), a uniform sample of
``--sample`` is drawn with ``--seed`` (a larger sample with the same seed contains the smaller one)
and only those run (``mutmut run NAME...``: each against the tests that called its function in the
stats run, stopping at the first failure), without mutmut's clean-test rerun (the fresh stats run
has just passed the whole claim suite). Timeout: ``(estimated s + --timeout-constant) *
--timeout-multiplier`` wall seconds (twice that in CPU seconds). A timeout counts as killed
(mutmut's convention), a mutant whose function no claim test calls ("no tests") as a survivor.
Score: killed / (killed + non-equivalent survivors), with its exact (Clopper-Pearson) 95 % interval
(binomial: slightly conservative for a sample without replacement). Results are merged per paper
into ``reports/bench/mutation_papers.json``; ``--rescore`` recounts them after ``EQUIVALENT`` grew::

    nice -n 19 python benchmarks/mutation.py --paper 004 --sample 40 --seed 0
    python benchmarks/mutation.py --paper 000 001 002 003 004 --rescore

After claim tests were only strengthened (the code unchanged), ``--rerun-survivors`` runs just
the stored record's survivors again and keeps its killed mutants (the same sample and figures
at a fraction of the time; refused if the population or the sample differ). A record also
stores a digest of every generated mutant's :func:`stable_key` (``population_digests``), so
``--rescore`` reports stale explanations too. Survivors that change only an error message are
not equivalent (the "name=value must be ..." message is part of the validation contract): they
are listed in ``MESSAGE_ONLY`` and counted as survivors.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

from scipy.stats import binomtest

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MODULES = ("primitives", "selection", "sparse_vector")
COPY = ("algorithms", "dpcheck", "tests/mechanisms", "properties", "pyproject.toml")
PYTEST_ARGS = ["-p", "no:randomly", "-n", "0", "--dpcheck-report", "none", "-p",
               "no:cacheprovider", "-x", "-q"]
#: mutmut's exit codes in ``*.meta`` (the test run's exit code; 1 = a test failed = killed)
KILLED, SURVIVED = (1, 3), (0,)
#: survivors judged equivalent (no observable behaviour changes), with the reason, keyed by
#: :func:`stable_key` (function: removed line(s) ⟶ added line(s))
_KIND = "a dtype kind is one lowercase letter: padding the kinds string with 'X' changes nothing"
_SYMMETRIC = "the noise is symmetric about 0: total − Z has the law of total + Z"
_MSG = "only the error message changes"
_SAME = "the validator returns a valid input unchanged: not storing it back changes nothing"
_2D = "a 2-D array: shape[+1] is shape[-1]"
EQUIVALENT: dict[str, str] = {
    'algorithms.model_agnostic.utility.threshold_erm_counts: q = np.asarray(queries, dtype=float) ⟶ q = np.asarray(queries, dtype=None)':
        'the queries are only sorted, shifted by the float t_star and compared by value: an integer array gives the same floats (checked bit for bit on float, integer and tied queries, stop 35)',
    'algorithms.model_agnostic.utility.NoisyThresholdLaw.cdf: q = np.atleast_1d(np.asarray(q, dtype=float)) ⟶ q = np.atleast_1d(np.asarray(q, ))':
        'q is only compared with the window and shifted by float arithmetic: integer queries give the same floats (checked bit for bit on float, integer and scalar q, stop 35)',
    'algorithms.model_agnostic.utility.NoisyThresholdLaw.counts: order = inside[np.argsort(q[inside], kind="stable")] ⟶ order = inside[np.argsort(q[inside], )]':
        'only tied queries can change places; they get equal cdf values, so the cells between them are 0 and their cumulative counts equal (checked bit for bit on 20 seeds of queries with ties, stop 35)',
    'algorithms.mechanisms.primitives._records: kinds = "iu" if integer else "iuf" ⟶ kinds = "XXiuXX" if integer else "iuf"':
        _KIND,
    'algorithms.mechanisms.primitives._records: kinds = "iu" if integer else "iuf" ⟶ kinds = "iu" if integer else "XXiufXX"':
        _KIND,
    'algorithms.mechanisms.primitives.bounded_sum: arr = _records(data, integer=False) ⟶ arr = _records(data, integer=None)':
        'integer=None is falsy exactly like integer=False',
    'algorithms.mechanisms.primitives.LaplaceSum.sample: return total + gen.laplace(0.0, self.scale, size=n) ⟶ return total - gen.laplace(0.0, self.scale, size=n)':
        _SYMMETRIC,
    'algorithms.mechanisms.primitives.GeometricSum.sample: return (total + noise).astype(np.int64) ⟶ return (total - noise).astype(np.int64)':
        _SYMMETRIC,
    'algorithms.mechanisms.primitives.GeometricSum.log_pmf: if v.dtype.kind not in "iuf" or (v.dtype.kind == "f" and np.isnan(v).any()): ⟶ if v.dtype.kind not in "XXiufXX" or (v.dtype.kind == "f" and np.isnan(v).any()):':
        _KIND,
    'algorithms.mechanisms.primitives.GeometricSum.log_pmf: if v.dtype.kind in "iu": ⟶ if v.dtype.kind in "XXiuXX":':
        _KIND,
    'algorithms.mechanisms.primitives.GeometricSum.log_pmf: if v.dtype.kind in "iu": ⟶ if v.dtype.kind in "IU":':
        'integer values then take the float branch, which computes the same |v − Σ| for every int64 value',
    'algorithms.mechanisms.primitives.GeometricSum.log_pmf: dist = np.abs(v.astype(np.int64) - total).astype(float) ⟶ dist = np.abs(v.astype(np.int64) - total).astype(None)':
        'astype(None) is astype(float64)',
    'algorithms.mechanisms.primitives.GeometricSum.log_pmf: dist = np.abs(v.astype(np.int64) - total).astype(float) ⟶ dist = np.abs(v.astype(None) - total).astype(float)':
        'v.astype(None) is float64: |v − Σ| is the same for integer values within 2^53',
    'algorithms.mechanisms.primitives.GeometricSum.log_pmf: return np.asarray(out, dtype=float) ⟶ return np.asarray(out, dtype=None)':
        'out is already float64',
    'algorithms.mechanisms.primitives.GeometricSum.log_pmf: return np.asarray(out, dtype=float) ⟶ return np.asarray(out, )':
        'out is already float64',
    'algorithms.mechanisms.primitives.RandomizedResponse.sample: keep = gen.random(n) < self.keep_probability ⟶ keep = gen.random(n) <= self.keep_probability':
        '`<=` and `<` differ only when the uniform draw equals keep_probability exactly (probability ≤ 2^-53)',
    'algorithms.mechanisms.primitives.RandomizedResponse.sample: return np.where(keep, x, (x + offset) % self.k).astype(np.int64) ⟶ return np.where(keep, x, (x - offset) % self.k).astype(np.int64)':
        'x − U and x + U (mod k) have the same law for U uniform on {1, …, k−1}',
    'algorithms.realizable_to_agnostic.tables.draw_subset_counts: for j in range(cells.shape[-1] - 1): ⟶ for j in range(cells.shape[+1] - 1):':
        _2D,
    'algorithms.realizable_to_agnostic.agnostic.Agnostic._draw_t: return draw_subset_counts(sc.reshape(len(sc), -1), k, rng).reshape(sc.shape) ⟶ return draw_subset_counts(sc.reshape(len(sc), -2), k, rng).reshape(sc.shape)':
        "numpy's reshape takes any negative size as the one unknown dimension",
    'algorithms.realizable_to_agnostic.agnostic.Agnostic.run_iid: flat = law.reshape(-1) ⟶ flat = law.reshape(-2)':
        "numpy's reshape takes any negative size as the one unknown dimension (numpy 2.4: "
        "np.zeros((3, 2)).reshape(-2).shape == (6,))",
    'algorithms.realizable_to_agnostic.empirical.WithReplacement.__post_init__: if f[1] > 1 or (math.exp(self.epsilon) + 1) * f[0] + self.delta > 1: ⟶ if f[1] > 2 or (math.exp(self.epsilon) + 1) * f[0] + self.delta > 1:':
        "the first test never decides: f(m) = e^ε f(m−1) + δ ≤ (e^ε + 1) f(m−1) + δ, so f(m) > 1 "
        "implies the second condition (> 1) already (f(m−1) ≥ δ > 0 for m ≥ 2 dwarfs rounding; "
        "m = 1: f(1) = δ < 1)",
    'algorithms.realizable_to_agnostic.tables.bounded_compositions: part = np.zeros(1, np.int64) ⟶ part = np.zeros(1, )':
        "part (the running row sums, ≤ Σ caps) is only compared with total, never returned: "
        "float64 holds these integers exactly",
    'algorithms.generalization.compiler.BootstrapCompiler.sample: if hasattr(self.mechanism, "sample_counts"): ⟶ if hasattr(self.mechanism, "SAMPLE_COUNTS"):':
        'skips the vectorised sample_counts path: the per-output path draws M(T) from the same law',
    'algorithms.generalization.mechanisms.laplace_majority_log_pmf: log1 = np.where(x <= 0, half + np.minimum(x, 0), np.log1p(-0.5 * np.exp(-np.abs(x)))) ⟶ log1 = np.where(x < 0, half + np.minimum(x, 0), np.log1p(-0.5 * np.exp(-np.abs(x))))':
        'at x = 0 both branches equal log ½',
    'algorithms.generalization.thresholds.SmallestPositive.sample: return np.full(size, float(pos.min()) if pos.size else -1.0) ⟶ return np.full(size, float(pos.min()) if pos.size else -2.0)':
        'r = −1 and r = −2 are both below the domain [0, 1]: the same threshold and the same clamped measures',
    'algorithms.generalization.learner.noisy_threshold_distribution: clean = (np.arange(1, m + 1) <= t_star).astype(int) ⟶ clean = (np.arange(1, m + 1) <= t_star).astype(None)':
        'astype(None) gives floats 0.0/1.0, compared with 0 and 1 exactly like ints',
    'algorithms.generalization.mechanisms.laplace_majority_log_pmf: log1 = np.where(x <= 0, half + np.minimum(x, 0), np.log1p(-0.5 * np.exp(-np.abs(x)))) ⟶ log1 = np.where(x <= 0, half + np.minimum(x, 1), np.log1p(-0.5 * np.exp(-np.abs(x))))':
        'np.where keeps min(x, 1) only where x <= 0, where it equals min(x, 0)',
    'algorithms.generalization.mechanisms.laplace_majority_log_pmf: x = epsilon * (np.asarray(c, dtype=float) - n / 2) # ε(c − n/2) = (s̄ − 1/2)/b ⟶ x = epsilon * (np.asarray(c, ) - n / 2) # ε(c − n/2) = (s̄ − 1/2)/b':
        'c − n/2 is float either way (n/2 is a float)',
    'algorithms.pure_agnostic.laplace_race.race_integral: if probe < c: # 1 − ½e^{w−c} ⟶ if probe <= c: # 1 − ½e^{w−c}':
        'the probe lies strictly inside a piece between breakpoints, and every centre is a breakpoint: never probe == c',
    'algorithms.pure_agnostic.scores.median_scores_sorted: cum_w = np.cumsum(np.bincount(w, minlength=domain + 2)) ⟶ cum_w = np.cumsum(np.bincount(w, minlength=domain + 3))':
        'one more trailing bin of cum_w, never indexed (us <= hi, where the shorter array already sufficed)',
    'algorithms.pure_agnostic.compare.PrivateMinError._margins: for j in range(1, 1 << T): ⟶ for j in range(1 << T):':
        'adds the margin of j = 0, which is never a midpoint of the search and never read',
    'algorithms.pure_agnostic.learners.ThresholdLearner.__post_init__: object.__setattr__(self, "alpha", _check_alpha(self.alpha)) ⟶ object.__setattr__(self, "XXalphaXX", _check_alpha(self.alpha))':
        _SAME,
    'algorithms.pure_agnostic.compare.PrivateMinError.__post_init__: object.__setattr__(self, "branches", ⟶ object.__setattr__(self, "BRANCHES",':
        _SAME,
    'algorithms.pure_agnostic.learners.ItemLearner.__post_init__: object.__setattr__(self, "_c", _table(c, c.shape[-1] if c.ndim == 2 else 0)) ⟶ object.__setattr__(self, "_c", _table(c, c.shape[+1] if c.ndim == 2 else 0))':
        _2D,
    'algorithms.pure_agnostic.representation.decoys: c = np.asarray(concepts, dtype=np.int8) ⟶ c = np.asarray(concepts, dtype=None)':
        '0/1 concepts keep their values in a wider integer dtype',
    'algorithms.model_agnostic.core.svt_runs: rho = rng.laplace(0.0, lam, (b, nb if refresh else 1)) ⟶ rho = rng.laplace(0.0, lam, (b, nb if refresh else 2))':
        'refresh=False reads only column 0 of rho: one more unused Laplace column changes the draws, not their law',
    'algorithms.model_agnostic.utility.noisy_threshold_counts: window: float = 30.0, block: int = 4096) -> NDArray[np.int64]: ⟶ window: float = 31.0, block: int = 4096) -> NDArray[np.int64]:':
        'a wider window: the ERM lies outside either window with probability < 1e-15 (docstring): the same law',
    'algorithms.model_agnostic.core.AStab.sample: noisy = d + rng.laplace(0.0, 1.0 / self.epsilon, size) ⟶ noisy = d - rng.laplace(0.0, 1.0 / self.epsilon, size)':
        _SYMMETRIC,
    'algorithms.model_agnostic.utility.noisy_threshold_counts: zeros = np.zeros((b, 1), np.int64) ⟶ zeros = np.zeros((b, 1), )':
        'float zeros: the error counts become exact floats, the same argmin',
    'algorithms.closure.relabel.completion_scores: comp = np.zeros((1, pats.shape[1]), np.int64) ⟶ comp = np.zeros((2, pats.shape[1]), np.int64)':
        'every completion appears twice; the minimum over them is unchanged',
    'algorithms.closure.pipelines.ClosureLearn.round_law: return pats, relabel_distribution(pats, completion_scores(self.table, pre, pats, rest, ⟶ return pats, relabel_distribution(None, completion_scores(self.table, pre, pats, rest,':
        'relabel_distribution reads pats only when erm=True, which round_law never passes',
    # paper 000, stop 34 (issue 27 item 5)
    'algorithms.realizable_to_agnostic.core._run_bounds: start = np.ones(p.shape, dtype=bool) ⟶ start = np.ones(p.shape, dtype=None)':
        "float 1.0/0.0 flags: np.where(start, …) and the bool array end read them as True/False",
    # papers 001-003, stop 34 rerun (benchmarks/equivalent_001_003.md has the full notes)
    "algorithms.generalization.learner.noisy_threshold_distribution: px = np.full(m, 1.0 / m) if marginal is None else np.asarray(marginal, dtype=float) ⟶ px = np.full(m, 1.0 / m) if marginal is None else np.asarray(marginal, dtype=None)":
        "`px` is only used in `px * np.where(..., 1 - eta, eta)`, a product with a float "
        "array (`eta` is a float), so an integer, boolean or float marginal gives the "
        "same float64 weights, and `w / w.sum()` is the same. Verified: with the mutant "
        "active (`MUTANT_UNDER_TEST`) the output is bit-identical to the original for an "
        "int, a float-list, a bool and a Dirichlet marginal, and the new Lemma 29 "
        "skewed-marginal test passes.",
    "algorithms.pure_agnostic.median.PrivateMedian.__post_init__: object.__setattr__(self, \"m\", check_int(self.m, \"m\", minimum=1)) ⟶ object.__setattr__(self, \"M\", check_int(self.m, \"m\", minimum=1))":
        "the validator still runs (a bad `m` still raises); for a valid `m` it returns "
        "`int(m)`, equal to the stored value (an `int` or a NumPy integer), so every use "
        "of `self.m` (`as_users(data, self.m, ...)`) computes the same. Only the stray "
        "attribute `M` and, for a NumPy-integer `m`, the dataclass repr differ (the "
        "`_SAME` reason of `EQUIVALENT`).",
    "algorithms.model_agnostic.utility.rate_parameters: T = 1.0 ⟶ T = 2.0":
        "the iteration converges to the same fixed point from either start. Verified "
        "with the mutant active (`MUTANT_UNDER_TEST`) at all 11 configurations of the "
        "Theorem 3.4/3.5 claim tests: identical `k` and `T` to the last printed digit "
        "(e.g. n = 4e8, m = 1000: k = 110580, T = 25.495676158063766).",
    "algorithms.model_agnostic.utility.threshold_erm_counts: x = np.clip(q[order] - t_star, 0.0, 1.0 - t_star) ⟶ x = np.clip(q[order] - t_star, 0.0, 1.0 + t_star)":
        "queries live in [0, 1] (x ~ U[0, 1], the function's documented domain), so `q − "
        "t* ≤ 1 − t*` and the upper clip is never active with either bound.",
    "algorithms.model_agnostic.utility.noisy_threshold_counts: valid = np.take_along_axis(valid, order, axis=1) ⟶ valid = np.take_along_axis(valid, order, )":
        "`valid` and `order` are 2-D `(b, L)`; the default `axis=-1` is axis 1 (the "
        "`_2D` reason).",
    "algorithms.model_agnostic.utility.noisy_threshold_counts: y = (x >= t_star) ^ (rng.random((b, L)) < eta) ⟶ y = (x >= t_star) ^ (rng.random((b, L)) <= eta)":
        "the label flips differ only on the event `U = η` exactly, of probability ≤ 2⁻⁵³ "
        "per draw (`Generator.random` is a multiple of 2⁻⁵³): the same law of the counts.",
    "algorithms.model_agnostic.utility.MajorityLearner.__call__: return lambda q: np.full(np.shape(q)[0], label, dtype=np.int8) ⟶ return lambda q: np.full(np.shape(q)[0], label, dtype=None)":
        "the predictions are the same 0/1 values in an int64 array; they are only "
        "compared with `== 1` (`ABinClas.votes`) or used as labels by value.",
    "algorithms.model_agnostic.core.ABinClas.votes: q = np.asarray(self.queries, dtype=float) ⟶ q = np.asarray(self.queries, )":
        "the queries are float points of [0, 1] (a float array stays float); for integer "
        "queries the package's learners (majority, threshold ERM) compare them with "
        "thresholds by value, with the same outcome; `q.size` is the same.",
    "algorithms.model_agnostic.utility.apriv_errors: pvals = np.concatenate([cells, np.maximum(0.0, 1.0 - cdf[:, -1:])], axis=1) ⟶ pvals = np.concatenate([cells, np.maximum(1.0, 1.0 - cdf[:, -1:])], axis=1)":
        "`Generator.multinomial` ignores the last entry of `pvals` (it takes the "
        "remainder `1 − Σ pvals[:-1]`); verified: the same seed gives identical draws "
        "with last cell 0.5/0.8 or 1.0.",
    "algorithms.model_agnostic.core.dist_sensitivity1: g = np.asarray(gap, dtype=np.int64) ⟶ g = np.asarray(gap, dtype=None)":
        "vote gaps are integers (|ct(1) − ct(0)| of k voters), so the array is already "
        "an integer array and `max(0, (g + 1) // 2 − 1)` is the same; a float-valued "
        "integral gap gives the same numbers as floats, compared with the noisy "
        "threshold by value.",
    "algorithms.model_agnostic.core.svt_runs: first = np.full(b, m, dtype=np.int64) ⟶ first = np.full(b, m, dtype=None)":
        "`m` (the number of queries, an integer) makes `np.full` infer int64 itself: the "
        "same array, same dtype (checked: `np.full(3, 5).dtype` and `np.full(3, "
        "np.int64(5)).dtype` are int64).",
    "algorithms.model_agnostic.core.svt_runs: first = np.full(b, m, dtype=np.int64) ⟶ first = np.full(b, m, )":
        "`m` (the number of queries, an integer) makes `np.full` infer int64 itself: the "
        "same array, same dtype (checked: `np.full(3, 5).dtype` and `np.full(3, "
        "np.int64(5)).dtype` are int64).",
    "algorithms.model_agnostic.core.BinClasCounts.counts: if c.shape != (m,) or c.dtype.kind not in \"iu\" or (c < 0).any() or (c > k).any(): ⟶ if c.shape != (m,) or c.dtype.kind not in \"XXiuXX\" or (c < 0).any() or (c > k).any():":
        "a dtype kind is one lowercase letter; padding the kinds string with 'X' changes "
        "nothing (the `_KIND` reason of `EQUIVALENT`).",
    # paper 003, issue 27 item 5 (branch mut003): svt_answer_probability now in a claim test
    "algorithms.model_agnostic.core.svt_answer_probability: return s if x >= 0 else 1.0 - s ⟶ return s if x > 0 else 1.0 - s":
        "the branches differ only at x = 0, where s = 2/3 − 1/6 = 0.5 and 1 − s = 0.5 "
        "(both exactly 0.5 in floating point): the same value everywhere. Every other "
        "mutant of the function (26 of 27, applied by hand) fails test_binclas_first_query_law.",
    # paper 003, issue 27 item 5 (branch mut003), new sample after apriv_error moved to tests/
    'algorithms.model_agnostic.utility.h_priv_labels: return np.where(np.asarray(outputs) >= BOT, coins, outputs).astype(np.int8) ⟶ return np.where(np.asarray(outputs) >= BOT, coins, outputs).astype(None)':
        'float64 labels 0.0/1.0 instead of int8 0/1: every user compares them by value (`== 1`, `== 0` in threshold_erm_batch and apriv_errors, which also stores them into an int8 array; the coin tests count values), so every output is the same.',
    'algorithms.model_agnostic.utility.threshold_erm_counts: q = np.asarray(queries, dtype=float) ⟶ q = np.asarray(queries, )':
        'q is only used in `q - t_star` (t_star a float) and compared with floats: an integer or float query array gives the same float values and the same counts.',
    'algorithms.model_agnostic.utility.noisy_threshold_counts_lazy: half = min(window / n_chunk, t_star, 1 - t_star) ⟶ half = min(t_star, 1 - t_star)':
        "a wider window only decides when the chunks are drawn: the function returns noisy_threshold_counts' values whenever a query is inside the window and the counts it would return (0 below, k above the window) otherwise; with the window [0, 1] it always draws, so the law of the counts is the same (only the cost changes).",
    'algorithms.model_agnostic.utility.apriv_errors: block = max(1, min(size, 2_000_000 // (m + 1))) ⟶ block = max(2, min(size, 2_000_000 // (m + 1)))':
        "the block only groups i.i.d. runs: max(2, ·) differs from max(1, ·) only when the min is 1 (size = 1, where b = min(block, size − lo) = 1 either way, or m ≥ 2e6); the runs' law is the same.",
    'algorithms.model_agnostic.utility.apriv_errors: cells = np.diff(cdf, axis=1, prepend=0.0) ⟶ cells = np.diff(cdf, prepend=0.0)':
        'a 2-D array (b, m): the default axis −1 is axis 1 (the `_2D` reason).',
    'algorithms.model_agnostic.utility.apriv_errors: o = mech.sample(counts[r, perm], 1, rng)[0] ⟶ o = mech.sample(counts[r, perm], 2, rng)[0]':
        "two independent runs of the mechanism (same path: ≤ 4 runs take the scan path either way), of which the first is used: it has the law of one run; only the generator's later draws shift.",
    'algorithms.model_agnostic.utility.apriv_errors: labels = np.empty(m, dtype=np.int8) ⟶ labels = np.empty(m, dtype=None)':
        'every entry is overwritten (perm is a permutation) with 0/1 and then only compared by value (`== 1`, `== 0`): float64 labels give the same ERM index.',
    # paper 004, stop 34 rerun
    "algorithms.closure.pipelines.PrivateAgnostic._extra: return np.zeros(len(pats), np.int64) ⟶ return np.zeros(len(pats), )":
        "float zeros: the only use is int(extra[j]), and int(0.0) == int(0) == 0",
    "algorithms.closure.pipelines.PrivateAgnostic.pmf: key = int(f) + h * int(extra[j]) ⟶ key = int(f) - h * int(extra[j])":
        "extra is 0 for the reference (same keys); for the release_* bug variants "
        "the key f - h*e (0 <= f < h) is as injective as f + h*e, so the law is "
        "only relabelled and every loss is the same",
    'algorithms.realizable_to_agnostic.agnostic_prediction.hits_law: g[:, :] += f * ways[0] ⟶ g[:, :] += f / ways[0]':
        "ways[0] = C(n', 0) = 1.0, and f * 1.0 == f / 1.0 exactly in floating point",
    'algorithms.realizable_to_agnostic.agnostic_prediction.AgnosticPrediction.sample_queries: bug = "reference" if self.bug == "repeat_query" else self.bug ⟶ bug = "REFERENCE" if self.bug == "repeat_query" else self.bug':
        "_draw_answers / _aggregator only compare bug with 'majority' and 'repeat_query' and "
        "look it up in _AGG_FACTOR (default 1.0): any other string, 'REFERENCE' included, is "
        "the reference aggregator",
    'algorithms.realizable_to_agnostic.auxiliary.Auxiliary.pmf: bug="em_eps_one" if self.bug == "em_eps_one" else "reference") ⟶ bug="em_eps_one" if self.bug == "em_eps_one" else "REFERENCE")':
        "relabel_log_probs (and _relabel_logits, relabel_scores) only compare bug with the "
        "named variants ('baseline', 'em_eps_one', 'h_from_s', 'relabel_all', ...), never "
        "validate it: 'REFERENCE' takes every reference branch",
    'algorithms.realizable_to_agnostic.composite.Composite._emp_law: out[:, nb:] += self.leak_delta * leak ⟶ out[:, nb:] = self.leak_delta * leak':
        "out is np.zeros and only out[:, :nb] was written before: adding to the zero columns "
        "nb: and assigning them give the same array",
    'algorithms.realizable_to_agnostic.empirical.clamped_geometric: c = np.asarray(c, dtype=float) ⟶ c = np.asarray(c, )':
        "integer counts stay int64 instead of float64; every use (the range check, j − c with "
        "float j, a ** c and a ** (m − c) with float a) promotes to float64 with the same "
        "values (checked: identical arrays for m ∈ {0, 1, 3, 7, 40}, ε ∈ {0.1, 1, 3}, arrays, "
        "lists and scalars)",
}

#: survivors that change only an error message: NOT equivalent (the message, "name=value must
#: be ...", is part of the validation contract) but listed apart, with the same keys
MESSAGE_ONLY: dict[str, str] = {
    'algorithms.realizable_to_agnostic.agnostic.Agnostic.sample: size = check_int(size, "size", minimum=0) ⟶ size = check_int(size, "SIZE", minimum=0)':
        _MSG,
    'algorithms.realizable_to_agnostic.auxiliary.Auxiliary.__post_init__: object.__setattr__(self, "v", as_dataset(self.v, self.domain, name="v")) ⟶ object.__setattr__(self, "v", as_dataset(self.v, self.domain, ))':
        _MSG,
    'algorithms.realizable_to_agnostic.core.as_index_set: raise InvalidArgument(f"{name}={fmt(index_set)}: indices must satisfy 0 <= i < n={n}") ⟶ raise InvalidArgument(None)':
        _MSG,
    'algorithms.realizable_to_agnostic.agnostic_prediction.ProcedureP.__post_init__: check_int(self.query, "query", minimum=0) ⟶ check_int(self.query, "XXqueryXX", minimum=0)':
        _MSG,
    'algorithms.realizable_to_agnostic.bounds._check_lemma33: return check_int(d, "d", minimum=1), check_alpha(alpha, "alpha"), check_alpha(beta, "beta") ⟶ return check_int(d, "d", minimum=1), check_alpha(alpha, "alpha"), check_alpha(beta, "BETA")':
        _MSG,
    'algorithms.realizable_to_agnostic.bounds.vote_rounds: a = check_probability(alpha, "alpha") ⟶ a = check_probability(alpha, "ALPHA")':
        _MSG,
    'algorithms.realizable_to_agnostic.composite.Composite.__post_init__: check_delta(self.pac_delta, "pac_delta") ⟶ check_delta(self.pac_delta, "PAC_DELTA")':
        _MSG,
    'algorithms.realizable_to_agnostic.composite.Composite.__post_init__: check_choice(self.bug, "bug", COMPOSITE_BUGS) ⟶ check_choice(self.bug, None, COMPOSITE_BUGS)':
        _MSG,
    'algorithms.realizable_to_agnostic.core.as_dataset: def as_dataset(data: Any, domain: int, *, name: str = "data") -> np.ndarray: ⟶ def as_dataset(data: Any, domain: int, *, name: str = "DATA") -> np.ndarray:':
        _MSG,
    'algorithms.realizable_to_agnostic.core.as_index_set: def as_index_set(index_set: Any, n: int, *, name: str = "index_set") -> np.ndarray: ⟶ def as_index_set(index_set: Any, n: int, *, name: str = "INDEX_SET") -> np.ndarray:':
        _MSG,
    'algorithms.realizable_to_agnostic.empirical.clamped_geometric: m = check_int(m, "m", minimum=0) ⟶ m = check_int(m, None, minimum=0)':
        _MSG,
    'algorithms.realizable_to_agnostic.tables.bounded_compositions: "for the exact pmf; use sample()") ⟶ "FOR THE EXACT PMF; USE SAMPLE()")':
        _MSG,
    'algorithms.realizable_to_agnostic.bounds.theorem36_bounds: n = check_int(n, "n", minimum=2) ⟶ n = check_int(n, "n", minimum=3)':
        "n = 2 is refused either way: the original's εn ≥ 1 check (ε ≤ 1/3, so εn ≤ 2/3); only the message differs",
    'algorithms.realizable_to_agnostic.agnostic_prediction.ProcedureP.sample: size = check_int(size, "size", minimum=0) ⟶ size = check_int(size, "SIZE", minimum=0)':
        _MSG,
    'algorithms.realizable_to_agnostic.composite.Composite.__post_init__: check_choice(self.bug, "bug", COMPOSITE_BUGS) ⟶ check_choice(self.bug, "BUG", COMPOSITE_BUGS)':
        _MSG,
    'algorithms.realizable_to_agnostic.agnostic_prediction.hits_law: r = check_int(r, "r", minimum=1) ⟶ r = check_int(r, "XXrXX", minimum=1)':
        _MSG,
    'algorithms.realizable_to_agnostic.prediction.vote_probabilities: raise InvalidArgument(f"votes1 must hold integer vote counts in [0, r={r}]") ⟶ raise InvalidArgument(None)':
        _MSG,
    'algorithms.realizable_to_agnostic.agnostic_prediction.AgnosticPrediction.sample_queries: size = check_int(size, "size", minimum=0) ⟶ size = check_int(size, None, minimum=0)':
        _MSG,
    'algorithms.realizable_to_agnostic.bounds.lemma212_size: return math.ceil(6 * eps * check_int(m, "m", minimum=1) - 1e-9) ⟶ return math.ceil(6 * eps * check_int(m, "M", minimum=1) - 1e-9)':
        _MSG,
    'algorithms.realizable_to_agnostic.agnostic.Agnostic.run_iid: raise InvalidArgument(f"cell_law must be a ({self.domain}, 2) probability table, " ⏎ f"got shape {law.shape} summing to {law.sum()!r}") ⟶ raise InvalidArgument(None)':
        _MSG,
    'algorithms.realizable_to_agnostic.core.as_dataset: raise InvalidArgument(f"{name}={fmt(data)}: need 0 <= x < {domain} and y in {{0, 1}}") ⟶ raise InvalidArgument(f"{name}={fmt(None)}: need 0 <= x < {domain} and y in {{0, 1}}")':
        _MSG,
    'algorithms.realizable_to_agnostic.bounds._check_lemma33: return check_int(d, "d", minimum=1), check_alpha(alpha, "alpha"), check_alpha(beta, "beta") ⟶ return check_int(d, "XXdXX", minimum=1), check_alpha(alpha, "alpha"), check_alpha(beta, "beta")':
        _MSG,
    'algorithms.realizable_to_agnostic.agnostic_prediction.AgnosticPrediction.sample: size = check_int(size, "size", minimum=0) ⟶ size = check_int(size, "SIZE", minimum=0)':
        _MSG,
    'algorithms.realizable_to_agnostic.bounds.lemma31_delta: d = check_real("delta", delta) ⟶ d = check_real(None, delta)':
        _MSG,
    'algorithms.realizable_to_agnostic.bounds.lemma31_delta: n = check_int(n, "n", minimum=2) ⟶ n = check_int(n, None, minimum=2)':
        _MSG,
    'algorithms.generalization.theory.hard_distribution: raise InvalidArgument("outputs=[] must name at least one output threshold") ⟶ raise InvalidArgument("XXoutputs=[] must name at least one output thresholdXX")':
        _MSG,
    'algorithms.pure_agnostic.learners.ThresholdLearner.__post_init__: object.__setattr__(self, "m", check_int(self.m, "m", minimum=1)) ⟶ object.__setattr__(self, "m", check_int(self.m, "M", minimum=1))':
        _MSG,
    'algorithms.pure_agnostic.learners.ThresholdLearner.__post_init__: object.__setattr__(self, "domain", check_int(self.domain, "domain", minimum=1)) ⟶ object.__setattr__(self, "domain", check_int(self.domain, None, minimum=1))':
        _MSG,
    'algorithms.pure_agnostic.compare.PrivateCompare.__post_init__: object.__setattr__(self, "discard", check_choice(self.discard, "discard", ("user", "record"))) ⟶ object.__setattr__(self, "discard", check_choice(self.discard, "XXdiscardXX", ("user", "record")))':
        _MSG,
    'algorithms.model_agnostic.core.AStab.__post_init__: _check_pos("delta", self.delta, 1.0) ⟶ _check_pos("XXdeltaXX", self.delta, 1.0)':
        _MSG,
    'algorithms.model_agnostic.utility.rate_parameters: raise InvalidArgument(f"n={n} is smaller than k={k}") ⟶ raise InvalidArgument(None)':
        _MSG,
    'algorithms.closure.learners.SubsampledLearner.__post_init__: raise InvalidArgument(f"learner={fmt(self.learner)} must have a .sample method") ⟶ raise InvalidArgument(f"learner={fmt(None)} must have a .sample method")':
        _MSG,
    'algorithms.closure.learners.labelled_sample: n = check_int(n, "n", minimum=1) ⟶ n = check_int(n, "XXnXX", minimum=1)':
        _MSG,
    'algorithms.closure.pipelines.ClosureLearn.__post_init__: raise InvalidArgument("classes must be non-empty ConceptClasses on one domain") ⟶ raise InvalidArgument("classes must be non-empty conceptclasses on one domain")':
        _MSG,
    # paper 004, issue 27 item 5 rerun (RelabelAndLearn's split and the extremal learner's g0)
    'algorithms.closure.pipelines.RelabelAndLearn._split: raise InvalidArgument(f"data has {len(s)} rows < d_size={self.d_size}") ⟶ raise InvalidArgument(None)':
        _MSG,
    'algorithms.closure.relabel.CellCountLearner.__post_init__: raise InvalidArgument(f"g0={fmt(self.g0)} must be an int >= 0") ⟶ raise InvalidArgument(f"g0={fmt(None)} must be an int >= 0")':
        _MSG,
    # paper 003, stop 34 rerun
    "algorithms.model_agnostic.core.AStab.label_and_dist: raise InvalidArgument(f\"votes={votes!r} must be a non-empty 0/1 vector\") ⟶ raise InvalidArgument(None)":
        _MSG,
    "algorithms.model_agnostic.core.BinClasParams.__post_init__: _check_pos(\"T\", self.T) ⟶ _check_pos(\"t\", self.T)":
        _MSG,
}


def qualified_name(name: str) -> str:
    """``algorithms.x.mod.xǁClsǁmeth__mutmut_7`` -> ``algorithms.x.mod.Cls.meth`` (mutmut's
    mangling: ``x_<function>``, ``xǁ<class>ǁ<method>``)."""
    module, _, mangled = name.partition("__mutmut_")[0].rpartition(".")
    function = ".".join(mangled.split("ǁ")[1:]) if "ǁ" in mangled else mangled[2:]
    return f"{module}.{function}"


def stable_key(name: str, diff: str) -> str:
    """The key of a mutant that survives renumbering: ``<qualified function>: <removed lines> ⟶
    <added lines>`` from its unified diff (``mutmut show``), each line whitespace-normalised,
    several lines joined by `` ⏎ ``. An empty diff (not computed) gives ``<function>: ?``."""
    lines = diff.splitlines()
    removed = [" ".join(x[1:].split()) for x in lines if x.startswith("-") and not x.startswith("---")]
    added = [" ".join(x[1:].split()) for x in lines if x.startswith("+") and not x.startswith("+++")]
    if not removed and not added:
        return f"{qualified_name(name)}: ?"
    return f"{qualified_name(name)}: {' ⏎ '.join(removed)} ⟶ {' ⏎ '.join(added)}"


def _digest(key: str) -> str:
    return hashlib.sha1(key.encode()).hexdigest()[:12]


#: mutmut's diff of every generated mutant, in one process (``mutmut show`` runs one per call)
_ALL_DIFFS = ("import json, sys\nimport mutmut.__main__\n"
              "from mutmut.mutation.data import SourceFileMutationData\n"
              "from mutmut.mutation.diff_apply import get_diff_for_mutant\n"
              "from mutmut.utils.file_utils import walk_mutatable_files\nout = {}\n"
              "for path in walk_mutatable_files():\n"
              "    m = SourceFileMutationData(path=path); m.load()\n"
              "    for k in m.exit_code_by_key:\n"
              "        out[k] = get_diff_for_mutant(k, path=path)\n"
              "json.dump(out, sys.stdout)\n")


def _all_diffs(where: Path) -> dict[str, str]:
    """Mutant name -> diff for every mutant generated in ``where``."""
    out = subprocess.run([sys.executable, "-c", _ALL_DIFFS], cwd=where, env=_env(),
                         capture_output=True, text=True, check=False)
    if out.returncode:
        raise RuntimeError(f"could not diff the mutants:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout)


def stale(prefix: str, digests: list[str] | None) -> list[str] | None:
    """Explanations of ``EQUIVALENT`` for functions under ``prefix`` that match no mutant of the
    run (``digests``: :func:`_digest` of every generated mutant's key; ``None``: unknown)."""
    if digests is None:
        return None
    have = set(digests)
    return sorted(k for k in (*EQUIVALENT, *MESSAGE_ONLY)
                  if k.startswith(prefix) and _digest(k) not in have)


def _config(module: str) -> str:
    src = f"algorithms/mechanisms/{module}.py"
    tests = sorted(p.relative_to(ROOT).as_posix()
                   for p in (ROOT / "tests" / "mechanisms").glob(f"test_{module}*.py"))
    also = [c for c in COPY if c != "pyproject.toml"]
    return ("\n[tool.mutmut]\n"
            f"source_paths = [{json.dumps(src)}]\n"
            f"also_copy = {json.dumps(also)}\n"
            f"pytest_add_cli_args = {json.dumps(PYTEST_ARGS)}\n"
            f"pytest_add_cli_args_test_selection = {json.dumps(tests)}\n")


def _prepare(module: str, where: Path, config: str | None = None) -> None:
    """Copy the repository into ``where`` with mutmut configuration ``config`` (or ``module``'s)."""
    for item in COPY:
        src, dst = ROOT / item, where / item
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    text = (where / "pyproject.toml").read_text()
    if "[tool.mutmut]" in text:
        text = text[: text.index("[tool.mutmut]")]
    (where / "pyproject.toml").write_text(text + (config or _config(module)))


def run_module(module: str, where: Path, jobs: int) -> dict[str, Any]:
    """Run mutmut on one module in the scratch directory ``where``; return its record."""
    _prepare(module, where)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs)],
                          cwd=where, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    meta = where / "mutants" / "algorithms" / "mechanisms" / f"{module}.py.meta"
    if not meta.is_file():
        raise RuntimeError(f"mutmut produced no results for {module}:\n{proc.stderr[-2000:]}")
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    killed = [k for k, c in codes.items() if c in KILLED]
    survived = sorted(k for k, c in codes.items() if c in SURVIVED)
    other = {k: c for k, c in codes.items() if c not in KILLED + SURVIVED}
    diffs = _all_diffs(where)
    keys = {k: stable_key(k, diffs.get(k, "")) for k in codes}
    explained = [k for k in survived if keys[k] in EQUIVALENT]
    scored = len(killed) + len(survived)
    return {"module": module, "mutants": len(codes), "killed": len(killed),
            "survived": len(survived), "other": other, "equivalent": len(explained),
            "score": len(killed) / scored if scored else None,
            "score_without_equivalent": (len(killed) / (scored - len(explained))
                                         if scored > len(explained) else None),
            "seconds": round(seconds, 1),
            "stale_equivalent": stale(f"algorithms.mechanisms.{module}.",
                                      [_digest(v) for v in keys.values()]),
            "survivors": [{"name": k, "key": keys[k], "equivalent": EQUIVALENT.get(keys[k]),
                           "diff": diffs.get(k, "")} for k in survived]}


# --- per-paper mode: the claim tests of one paper against its reference subpackage ---------------
NOT_MUTATED = ["*/buggy.py", "*/testbeds.py"]
TIMEOUT, NO_TESTS = (24, 36, 152, 255, -24), (33,)
#: mutmut's own generator alone; ``mutmut run NAME...`` without its clean-test rerun
_GENERATE = ("import os, mutmut.__main__ as m\nfrom mutmut.utils import file_utils as f\n"
             "os.makedirs('mutants', exist_ok=True); f.copy_src_dir(); f.copy_also_copy_files()\n"
             "f.setup_source_paths(); m.create_mutants(1)\n")
_RUN = ("import sys, mutmut.__main__ as m, mutmut.workers.isolation as w\n"
        "w.ForkRunner.run_clean_tests = lambda self, tests: 0\n"
        "m.cli(['run', '--max-children', '1', *sys.argv[1:]])\n")


def paper_dirs() -> dict[str, str]:
    """Paper id -> the one directory ``properties/<dir>/`` holding its claim tests (catalog)."""
    catalog = tomllib.loads((ROOT / "properties" / "catalog.toml").read_text())
    dirs: dict[str, set[str]] = {}
    for claim in catalog["claim"]:
        for test in claim.get("tests", []):
            dirs.setdefault(claim["paper"], set()).add(test.split("/")[1])
    assert all(len(d) == 1 for d in dirs.values()), f"claim tests in several directories: {dirs}"
    return {paper: d.pop() for paper, d in sorted(dirs.items())}


def _paper_config(directory: str, multiplier: float, constant: float) -> str:
    also = [c for c in COPY if c != "pyproject.toml"]
    return ("\n[tool.mutmut]\n"
            f"source_paths = [{json.dumps(f'algorithms/{directory}')}]\n"
            f"do_not_mutate = {json.dumps(NOT_MUTATED)}\n"
            f"also_copy = {json.dumps(also)}\n"
            f"timeout_multiplier = {multiplier}\ntimeout_constant = {constant}\n"
            f"pytest_add_cli_args = {json.dumps(PYTEST_ARGS)}\n"
            f"pytest_add_cli_args_test_selection = {json.dumps([f'properties/{directory}'])}\n")


def _env() -> dict[str, str]:
    """One BLAS thread, no PYTHONPATH (``./dev``'s checkout must not shadow ``mutants/``)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def _codes(where: Path, directory: str) -> tuple[dict[str, int | None], dict[str, float]]:
    """Exit code and duration (s) of every mutant of the paper, from mutmut's ``*.meta`` files."""
    metas = [json.loads(meta.read_text())
             for meta in sorted((where / "mutants" / "algorithms" / directory).rglob("*.py.meta"))]
    return ({k: c for m in metas for k, c in m["exit_code_by_key"].items()},
            {k: t for m in metas for k, t in m.get("durations_by_key", {}).items()})


def clopper_pearson(k: int, n: int) -> tuple[float, float] | None:
    """Exact two-sided 95 % interval of a binomial proportion with ``k`` of ``n``."""
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact") if n else None
    return (round(float(ci.low), 4), round(float(ci.high), 4)) if ci else None


def run_paper(paper: str, where: Path, sample: int, seed: int, multiplier: float,
              constant: float, previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """Mutate paper ``paper``'s subpackage in ``where``, run a uniform sample of ``sample``
    mutants (``seed``) against its claim tests; return the paper's record.

    With ``previous`` (a stored record of the same code: same population), only its survivors
    are run again and its killed mutants kept: claim tests that only gained assertions cannot
    let a killed mutant survive, so this gives the full sample's figures in a fraction of the
    time (``--rerun-survivors``)."""
    directory = paper_dirs()[paper]
    _prepare("", where, _paper_config(directory, multiplier, constant))
    gen = subprocess.run([sys.executable, "-c", _GENERATE], cwd=where, env=_env(),
                         capture_output=True, text=True, check=False)
    population = sorted(_codes(where, directory)[0])
    if gen.returncode or not population:
        raise RuntimeError(f"mutant generation failed for paper {paper}:\n{gen.stderr[-2000:]}")
    diffs = _all_diffs(where)
    chosen = sorted(random.Random(seed).sample(population, min(sample, len(population))))
    if previous is not None:
        if previous["population"] != len(population) or sorted(previous["mutants"]) != chosen:
            raise RuntimeError(f"paper {paper}: the stored record is of other code or another "
                               "sample; run the full sample")
        kept = {k: v for k, v in previous["mutants"].items()
                if v["exit_code"] not in SURVIVED + NO_TESTS}
        chosen = sorted(set(chosen) - set(kept))
    shutil.rmtree(where / "mutants")          # `mutmut run` regenerates the same names
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _RUN, *chosen], cwd=where, env=_env(),
                          capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    all_codes, durations = _codes(where, directory)
    codes = {k: all_codes.get(k) for k in chosen}
    if chosen and all(c is None for c in codes.values()):
        raise RuntimeError(f"mutmut ran no mutant of paper {paper}:\n"
                           f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    if previous is not None:
        durations = {**{k: v["seconds"] for k, v in kept.items()}, **durations}
        codes = {**{k: v["exit_code"] for k, v in kept.items()}, **codes}
        chosen = sorted(codes)
    run_s = [durations[k] for k in chosen if durations.get(k)]
    record = {"paper": paper, "package": f"algorithms/{directory}",
              "tests": f"properties/{directory}", "population": len(population),
              "sampled": len(chosen), "seed": seed, "seconds_total": round(seconds, 1),
              "rerun_survivors": previous is not None,
              "seconds_per_mutant": round(sum(run_s) / len(run_s), 1) if run_s else None,
              "mutants": {k: {"exit_code": codes[k], "seconds": durations.get(k)} for k in chosen},
              "diffs": {k: diffs.get(k, "") for k, c in codes.items() if c in SURVIVED + NO_TESTS},
              "population_digests": sorted({_digest(stable_key(k, diffs.get(k, "")))
                                            for k in population})}
    return score(record)


def score(record: dict[str, Any]) -> dict[str, Any]:
    """(Re)count a paper's record from its mutants' exit codes and the current ``EQUIVALENT``."""
    codes = {k: v["exit_code"] for k, v in record["mutants"].items()}
    killed, timeout, survived = ([k for k, c in codes.items() if c in group]
                                 for group in (KILLED, TIMEOUT, SURVIVED + NO_TESTS))
    keys = {k: stable_key(k, record["diffs"].get(k, "")) for k in survived}
    equivalent = [k for k in survived if keys[k] in EQUIVALENT]
    detected, known = len(killed) + len(timeout), KILLED + TIMEOUT + SURVIVED + NO_TESTS
    scored = detected + len(survived) - len(equivalent)
    record.update(killed=len(killed), timeout=len(timeout), survived=len(survived),
                  equivalent=len(equivalent), score=round(detected / scored, 4) if scored else None,
                  other={k: c for k, c in codes.items() if c not in known},
                  ci95=clopper_pearson(detected, scored),
                  message_only=sum(keys[k] in MESSAGE_ONLY for k in survived),
                  stale_equivalent=stale(record["package"].replace("/", ".") + ".",
                                         record.get("population_digests")),
                  survivors=[{"name": k, "key": keys[k], "no_tests": codes[k] in NO_TESTS,
                              "equivalent": EQUIVALENT.get(keys[k]),
                              "message_only": keys[k] in MESSAGE_ONLY,
                              "diff": record["diffs"].get(k, "")} for k in survived])
    return record


def _print_paper(r: dict[str, Any]) -> None:
    print(f"paper {r['paper']} ({r['package']}): {r['sampled']} of {r['population']} mutants, "
          f"{r['killed']} killed, {r['timeout']} timeout, {r['survived']} survived "
          f"({r['equivalent']} equivalent, {r['message_only']} message-only), "
          f"{len(r['other'])} other; score {r['score']} "
          f"CI95 {r['ci95']}; {r['seconds_per_mutant']} s per mutant, {r['seconds_total']} s")
    for s in r["survivors"]:
        why = (f"  [equivalent: {s['equivalent']}]" if s["equivalent"] else
               "  [message only]" if s["message_only"] else "")
        print(f"  survivor {s['name']}{' (no tests)' if s['no_tests'] else ''}{why}")
        print(f"    key: {s['key']}")
        print("    " + "\n    ".join(s["diff"].splitlines()[-8:]))
    for k in r["stale_equivalent"] or ():
        print(f"  stale explanation (no such mutant any more): {k}")
    if r["stale_equivalent"] is None:
        print("  stale explanations: unknown (record without population_digests; rerun)")


def main_papers(args: argparse.Namespace) -> int:
    """The per-paper mode: one record per paper, merged into ``args.out``."""
    out = args.out if args.out is not None else ROOT / "reports" / "bench" / "mutation_papers.json"
    records = json.loads(out.read_text()) if out.is_file() else {}
    for paper in args.paper:
        if args.rescore:
            records[paper] = score(records[paper])
        else:
            with tempfile.TemporaryDirectory(prefix=f"mutmut-paper{paper}-") as tmp:
                where = Path(tmp) if args.keep is None else args.keep / f"paper{paper}"
                shutil.rmtree(where, ignore_errors=True)
                where.mkdir(parents=True)
                records[paper] = run_paper(paper, where, args.sample, args.seed,
                                           args.timeout_multiplier, args.timeout_constant,
                                           records[paper] if args.rerun_survivors else None)
        _print_paper(records[paper])
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", default=list(DEFAULT_MODULES))
    parser.add_argument("--jobs", type=int, default=1, help="mutmut --max-children")
    parser.add_argument("--keep", type=Path, default=None,
                        help="scratch directory to keep (default: a temporary one, removed)")
    parser.add_argument("--out", type=Path, default=None, help="default: reports/bench/"
                        "mutation.json, or mutation_papers.json with --paper")
    parser.add_argument("--paper", nargs="+", default=None,
                        help="per-paper mode: papers (e.g. 000) whose claim tests to score")
    parser.add_argument("--sample", type=int, default=40, help="mutants per paper (--paper)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample (--paper)")
    parser.add_argument("--rescore", action="store_true", help="recount the papers' stored "
                        "results with the current EQUIVALENT, without running (--paper)")
    parser.add_argument("--rerun-survivors", action="store_true", help="run only the stored "
                        "record's survivors again, keeping its killed mutants (--paper; the "
                        "code must be unchanged and the tests only strengthened)")
    parser.add_argument("--timeout-multiplier", type=float, default=4.0, help="(--paper)")
    parser.add_argument("--timeout-constant", type=float, default=10.0, help="s (--paper)")
    args = parser.parse_args(argv)
    if args.paper:
        return main_papers(args)
    args.out = args.out or ROOT / "reports" / "bench" / "mutation.json"
    records = []
    for module in args.modules:
        if not (ROOT / "tests" / "mechanisms" / f"test_{module}.py").is_file():
            print(f"{module}: no tests/mechanisms/test_{module}.py, skipped")
            continue
        if args.keep is not None:
            where = args.keep / module
            shutil.rmtree(where, ignore_errors=True)
            where.mkdir(parents=True)
            records.append(run_module(module, where, args.jobs))
        else:
            with tempfile.TemporaryDirectory(prefix=f"mutmut-{module}-") as tmp:
                records.append(run_module(module, Path(tmp), args.jobs))
        r = records[-1]
        print(f"{module}: {r['killed']}/{r['killed'] + r['survived']} killed "
              f"(score {r['score']:.3f}), {r['survived']} survived "
              f"({r['equivalent']} explained as equivalent), {len(r['other'])} other, "
              f"{r['seconds']} s")
        for s in r["survivors"]:
            why = f"  [equivalent: {s['equivalent']}]" if s["equivalent"] else ""
            print(f"  survivor {s['name']}{why}")
            print(f"    key: {s['key']}")
            print("    " + "\n    ".join(s["diff"].splitlines()[-6:]))
        for k in r["stale_equivalent"] or ():
            print(f"  stale explanation (no such mutant any more): {k}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
