"""Check an HTML report in headless Chromium: no horizontal overflow at a laptop width, every
in-page link resolves, and where the first screen's content ends; optionally a screenshot.

    python benchmarks/html_check.py reports/latest/audit.html [--width 1366] [--height 768]
                                    [--screenshot shot.png] [--json out.json]

Needs a Chromium binary (Debian: ``apt-get install chromium``; or set $CHROMIUM). Exit status 0
when the checks pass, 1 when one fails, 2 when Chromium is missing. The measurements are taken
by a small script appended to a temporary copy of the report, read back with ``--dump-dom``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

_PROBE = """
<script>
(function(){
 var de=document.documentElement, links=[].slice.call(document.querySelectorAll('a[href^="#"]'));
 var broken=links.map(function(a){return decodeURIComponent(a.getAttribute('href').slice(1));})
   .filter(function(id){return id && !document.getElementById(id);});
 var wide=[].slice.call(document.querySelectorAll('table,figure,pre,.banner,nav'))
   .filter(function(e){return e.getBoundingClientRect().right > de.clientWidth + 1;})
   .map(function(e){return e.tagName+(e.id?'#'+e.id:'');});
 var p=document.getElementById('problems'), v=document.getElementById('verdict');
 var out={scroll_width:de.scrollWidth, client_width:de.clientWidth,
  page_height:de.scrollHeight, links:links.length, broken:broken.slice(0,20),
  n_broken:broken.length, too_wide:wide.slice(0,20),
  verdict_bottom: v ? v.getBoundingClientRect().bottom : null,
  problems_top: p ? p.getBoundingClientRect().top : null};
 var pre=document.createElement('pre'); pre.id='dpcheck-probe';
 pre.textContent=JSON.stringify(out); document.body.appendChild(pre);
})();
</script>
"""


def chromium() -> str | None:
    """The Chromium binary ($CHROMIUM, chromium, chromium-browser, google-chrome), or None."""
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _run(binary: str, url: str, width: int, height: int, extra: list[str]) -> str:
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           f"--window-size={width},{height}", "--virtual-time-budget=5000", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False).stdout


def measure(html_file: str | os.PathLike[str], *, width: int = 1366, height: int = 768,
            screenshot: str | None = None) -> dict[str, Any]:
    """Measurements of ``html_file`` rendered at ``width`` × ``height`` (see the module doc)."""
    binary = chromium()
    if binary is None:
        raise FileNotFoundError("no chromium binary (apt-get install chromium, or set $CHROMIUM)")
    html = Path(html_file).read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.html"
        probe.write_text(html.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
        dom = _run(binary, probe.as_uri(), width, height, ["--dump-dom"])
    match = re.search(r'<pre id="dpcheck-probe">(.*?)</pre>', dom, re.S)
    if not match:
        raise RuntimeError("the probe did not run (Chromium output had no measurements)")
    out = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    out.update(width=width, height=height,
               horizontal_overflow=out["scroll_width"] > out["client_width"])
    if screenshot:
        _run(binary, Path(html_file).resolve().as_uri(), width, height,
             [f"--screenshot={Path(screenshot).resolve()}"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("html", help="the audit.html to check")
    ap.add_argument("--width", type=int, default=1366)
    ap.add_argument("--height", type=int, default=768)
    ap.add_argument("--screenshot", help="also write a PNG of the first screen")
    ap.add_argument("--json", help="write the measurements to this file")
    args = ap.parse_args(argv)
    try:
        out = measure(args.html, width=args.width, height=args.height,
                      screenshot=args.screenshot)
    except FileNotFoundError as exc:
        print(f"html_check: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    ok = not out["horizontal_overflow"] and out["n_broken"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
