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
no test can observe, e.g. an error *message* replaced by ``None`` when the tests only check the
exception type); the explanations are kept in ``EQUIVALENT`` below, keyed by mutant name.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MODULES = ("primitives", "selection", "sparse_vector")
COPY = ("algorithms", "dpcheck", "tests/mechanisms", "properties", "pyproject.toml")
PYTEST_ARGS = ["-p", "no:randomly", "-n", "0", "--dpcheck-report", "none", "-p",
               "no:cacheprovider", "-x", "-q"]
#: mutmut's exit codes in ``*.meta`` (the test run's exit code; 1 = a test failed = killed)
KILLED, SURVIVED = (1, 3), (0,)
#: survivors judged equivalent (no observable behaviour changes), with the reason
_P = "algorithms.mechanisms.primitives."
_KIND = "a dtype kind is one lowercase letter: padding the kinds string with 'X' changes nothing"
_SYMMETRIC = "the noise is symmetric about 0: total − Z has the law of total + Z"
EQUIVALENT: dict[str, str] = {
    _P + "x__records__mutmut_19": _KIND,
    _P + "x__records__mutmut_21": _KIND,
    _P + "x_bounded_sum__mutmut_3": "integer=None is falsy exactly like integer=False",
    _P + "xǁLaplaceSumǁsample__mutmut_6": _SYMMETRIC,
    _P + "xǁGeometricSumǁsample__mutmut_21": _SYMMETRIC,
    _P + "xǁGeometricSumǁlog_pmf__mutmut_9": _KIND,
    _P + "xǁGeometricSumǁlog_pmf__mutmut_28": _KIND,
    _P + "xǁGeometricSumǁlog_pmf__mutmut_29": "integer values then take the float branch, "
    "which computes the same |v − Σ| for every int64 value",
    _P + "xǁGeometricSumǁlog_pmf__mutmut_31": "astype(None) is astype(float64)",
    _P + "xǁGeometricSumǁlog_pmf__mutmut_34": "v.astype(None) is float64: |v − Σ| is the same "
    "for integer values within 2^53",
    _P + "xǁGeometricSumǁlog_pmf__mutmut_55": "out is already float64",
    _P + "xǁGeometricSumǁlog_pmf__mutmut_57": "out is already float64",
    _P + "xǁRandomizedResponseǁsample__mutmut_8": "`<=` and `<` differ only when the uniform "
    "draw equals keep_probability exactly (probability ≤ 2^-53)",
    _P + "xǁRandomizedResponseǁsample__mutmut_25": "x − U and x + U (mod k) have the same law "
    "for U uniform on {1, …, k−1}",
}


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


def _prepare(module: str, where: Path) -> None:
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
    (where / "pyproject.toml").write_text(text + _config(module))


def _diff(where: Path, name: str) -> str:
    out = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=where,
                         capture_output=True, text=True, check=False)
    return out.stdout.strip()


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
    explained = [k for k in survived if k in EQUIVALENT]
    scored = len(killed) + len(survived)
    return {"module": module, "mutants": len(codes), "killed": len(killed),
            "survived": len(survived), "other": other, "equivalent": len(explained),
            "score": len(killed) / scored if scored else None,
            "score_without_equivalent": (len(killed) / (scored - len(explained))
                                         if scored > len(explained) else None),
            "seconds": round(seconds, 1),
            "survivors": [{"name": k, "equivalent": EQUIVALENT.get(k), "diff": _diff(where, k)}
                          for k in survived]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", default=list(DEFAULT_MODULES))
    parser.add_argument("--jobs", type=int, default=1, help="mutmut --max-children")
    parser.add_argument("--keep", type=Path, default=None,
                        help="scratch directory to keep (default: a temporary one, removed)")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "bench" / "mutation.json")
    args = parser.parse_args(argv)
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
            print("    " + "\n    ".join(s["diff"].splitlines()[-6:]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
