"""The documentation is tested: ``docs/`` builds with Sphinx with warnings as errors, every
```` ```python ```` example of ``README.md`` and of the docs pages runs, and where a page shows the
printed output, the printed output is that; the ``>>>`` examples of the docstrings that the API
reference renders run as doctests; the built index.html opens in headless Chromium (skipped
where none is installed).

How a page's examples run (the page is a session, like a doctest file):

- the ```` ```python ```` blocks of one page run in order in one namespace;
- the output a block prints is checked when the block is followed by a ```` ```text ```` block
  (or, in README.md, by "prints (...)" and a bare ```` ``` ```` block); ``...`` in the shown
  output matches anything (doctest's ELLIPSIS: used for OpenDP, which cannot be seeded);
- a block with a ``# raises dpcheck.NAME`` comment must raise that exception (its output up to
  the raise is still checked);
- a block that defines ``test_*`` functions using the plugin's fixtures is a test file: it runs
  under pytest (pytester) and all its tests must pass.

``python tests/test_docs.py --json PAGE`` runs one page (the test runs each page so, in a fresh
interpreter); ``python tests/test_docs.py --update`` rewrites the shown outputs of the docs pages from a run
(blocks whose shown output has ``...`` are left alone).
"""

from __future__ import annotations

import contextlib
import doctest
import importlib.util
import io
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)]

pytest_plugins = ["pytester"]

_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
_BETWEEN_OK = re.compile(r"\A\s*(prints[^\n]*)?\s*\Z")
_RAISES = re.compile(r"#\s*raises\s+dpcheck\.(\w+)")


@dataclass
class Example:
    page: Path
    line: int
    code: str
    output: str | None  # the shown output, or None when the page shows none
    output_span: tuple[int, int] | None  # where the shown output sits in the page text

    @property
    def is_test_file(self) -> bool:
        return bool(re.search(r"^def test_\w*\(", self.code, re.M))

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def examples(page: Path) -> list[Example]:
    """The ```python blocks of ``page`` with their shown outputs."""
    text = page.read_text(encoding="utf-8")
    fences = list(_FENCE.finditer(text))
    out = []
    for i, f in enumerate(fences):
        if f.group(1).strip() != "python":
            continue
        output = span = None
        if i + 1 < len(fences):
            nxt = fences[i + 1]
            lang = nxt.group(1).strip()
            between = text[f.end():nxt.start()]
            if lang in ("text", "") and _BETWEEN_OK.match(between) and (
                    lang == "text" or "prints" in between):
                output, span = nxt.group(2), (nxt.start(2), nxt.end(2))
        out.append(Example(page, text.count("\n", 0, f.start()) + 1, f.group(2), output, span))
    return out


ALL = [e for p in PAGES for e in examples(p)]


def matches(shown: str, printed: str) -> bool:
    shown, printed = shown.strip() + "\n", printed.strip() + "\n"
    return doctest.OutputChecker().check_output(shown, printed, doctest.ELLIPSIS)


def run_page(page: Path) -> list[tuple[Example, str]]:
    """Run the examples of ``page`` in one namespace (test files aside: they run under pytest);
    returns (example, printed output)."""
    import dpcheck

    namespace: dict = {"__name__": "__docs__"}
    done = []
    for ex in examples(page):
        if ex.is_test_file:
            continue
        buf = io.StringIO()
        raises = _RAISES.search(ex.code)
        with contextlib.redirect_stdout(buf):
            if raises:
                with pytest.raises(getattr(dpcheck, raises.group(1))):
                    exec(compile(ex.code, str(ex), "exec"), namespace)
            else:
                exec(compile(ex.code, str(ex), "exec"), namespace)
        done.append((ex, buf.getvalue()))
    return done


# -- the tests -------------------------------------------------------------------------------


def test_the_pages_have_examples():
    assert len([e for e in ALL if e.page.name != "README.md"]) >= 15
    assert sum(e.output is not None for e in ALL) >= 10


@pytest.mark.parametrize("page", [p for p in PAGES if examples(p)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_run_and_print_what_the_page_shows(page):
    """Each page runs in a fresh interpreter, as a reader would run it: the Dask example starts
    and stops an in-process cluster, which must not meet the state other tests of this process
    left behind (an in-process pytester run restores sys.modules afterwards, and a cluster
    started after that never shuts down)."""
    proc = subprocess.run([sys.executable, __file__, "--json", str(page)], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-5000:]
    printed = {line: out for line, out in json.loads(proc.stdout.splitlines()[-1])}
    shown = examples(page)
    assert sorted(printed) == [e.line for e in shown if not e.is_test_file]
    for ex in shown:
        if ex.output is not None:
            assert matches(ex.output, printed[ex.line]), (
                f"{ex}: the page shows\n{ex.output}\nthe example printed\n{printed[ex.line]}")


@pytest.mark.parametrize("ex", [e for e in ALL if e.is_test_file], ids=str)
def test_test_file_examples_pass_under_the_plugin(ex, pytester):
    """In a subprocess: an in-process pytest run restores sys.modules afterwards, which leaves
    later in-process Dask clusters of this session unable to shut down."""
    name = f"test_{ex.page.stem.replace('-', '_')}_{ex.line}"
    pytester.makepyfile(**{name: ex.code})
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--dpcheck-report", "none",
                                           f"{name}.py")
    outcomes = result.parseoutcomes()
    assert result.ret == 0 and outcomes.get("passed", 0) >= 1, (str(ex), outcomes)


#: Modules whose docstrings the API reference renders (docs/api.md, docs/api/*.md) and that hold
#: ``>>>`` examples: the examples run as doctests.
API_MODULES = ["dpcheck.core.audit", "dpcheck.core.audit_pairs", "dpcheck.core.results",
               "dpcheck.generalization.closeness", "dpcheck.integrations",
               "dpcheck.integrations.scalar", "dpcheck.integrations.diffprivlib",
               "dpcheck.integrations.opendp", "dpcheck.strategies", "dpcheck.validation"]


@pytest.mark.parametrize("name", API_MODULES)
def test_api_reference_examples_run(name):
    import importlib

    module = importlib.import_module(name)
    if name.endswith(("diffprivlib", "opendp")):
        pytest.importorskip(name.rsplit(".", 1)[1])
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(module) if t.examples]
    assert tests, f"{name} has no docstring examples: drop it from API_MODULES"
    out = io.StringIO()
    for t in tests:
        runner.run(t, out=out.write)
    assert runner.failures == 0, out.getvalue()


@pytest.fixture(scope="module")
def built_docs(tmp_path_factory):
    """``sphinx-build -W --keep-going -b html docs <tmp>``: (completed process, output dir)."""
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    pytest.importorskip("myst_parser")
    tmp = tmp_path_factory.mktemp("docs")
    out = tmp / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "html", "-d", str(tmp / "doctrees"), str(DOCS), str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    return proc, out


def test_docs_build_without_warnings(built_docs):
    start = time.perf_counter()
    proc, out = built_docs
    assert proc.returncode == 0, proc.stderr[-5000:]
    for name in ("index", "tutorial", "explanation", "api", "benchmarks", "howto/index",
                 "howto/libraries", "howto/floating-point", "howto/approximate-dp",
                 "howto/large-audits", "howto/generalization", "howto/catalogue",
                 "howto/reports", "api/dpcheck.validation", "api/dpcheck.integrations"):
        assert (out / f"{name}.html").is_file(), name
    api = (out / "api.html").read_text(encoding="utf-8")
    import types

    import dpcheck

    pages = api + "".join(p.read_text(encoding="utf-8") for p in (out / "api").glob("*.html"))
    missing = [n for n in dpcheck.__all__
               if (f'id="module-dpcheck.{n}"' if isinstance(getattr(dpcheck, n), types.ModuleType)
                   else f'id="dpcheck.{n}"') not in pages]
    assert not missing, f"public names without an API entry: {missing}"
    bench = (out / "benchmarks.html").read_text(encoding="utf-8")
    assert "Design decisions" in bench  # benchmarks/README.md is included
    assert time.perf_counter() - start < 120


def _html_check():
    spec = importlib.util.spec_from_file_location("html_check",
                                                  ROOT / "benchmarks" / "html_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_built_docs_open_in_a_browser(built_docs):
    """index.html in headless Chromium: it renders (title, navigation), its in-page links
    resolve, nothing overflows a 1366-px laptop screen."""
    html_check = _html_check()
    if html_check.chromium() is None:
        pytest.skip("no chromium (apt-get install chromium)")
    proc, out = built_docs
    assert (out / "index.html").is_file(), proc.stderr[-2000:]
    page = html_check.measure(out / "index.html", width=1366, height=768)
    assert page["n_broken"] == 0, page["broken"]
    assert not page["horizontal_overflow"], page["too_wide"]
    dom = html_check._run(html_check.chromium(), (out / "index.html").as_uri(), 1366, 768,
                          ["--dump-dom"])
    assert "<title>dpcheck" in dom and "Tutorial" in dom and "How-to guides" in dom


def test_ci_installs_chromium_for_the_browser_tests():
    """.ci/run installs Debian's chromium where it is missing and it runs as root with apt-get,
    before the quick-start commands, so these browser tests run in CI."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install = script.index("apt-get install -y -qq")
    assert "DEBIAN_FRONTEND=noninteractive" in script and '"$(id -u)" -eq 0' in script
    assert install < script.index('for line in "${commands[@]}"')
    assert script.index("--print-commands\" ]") < install  # --print-commands installs nothing


# -- python tests/test_docs.py --update ------------------------------------------------------


def _update() -> None:
    for page in PAGES:
        if page.name == "README.md" or not examples(page):
            continue
        text = page.read_text(encoding="utf-8")
        edits = []
        for ex, printed in run_page(page):
            if ex.output is not None and "..." not in ex.output and not matches(ex.output,
                                                                                printed):
                edits.append((ex.output_span, printed.rstrip("\n") + "\n"))
        for (a, b), new in sorted(edits, reverse=True):
            text = text[:a] + new + text[b:]
        page.write_text(text, encoding="utf-8")
        print(f"{page.relative_to(ROOT)}: {len(edits)} output(s) updated")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        _update()
    elif sys.argv[1:2] == ["--json"]:
        done = run_page(Path(sys.argv[2]).resolve())
        print(json.dumps([[ex.line, printed] for ex, printed in done]))
    else:
        for page in PAGES:
            for ex, printed in run_page(page):
                print(f"--- {ex}\n{printed}", end="")
