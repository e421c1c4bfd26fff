"""Which candidate should hold the lead share of a pure audit's α? Counterfactual on the zoo.

The weights of :func:`dpcheck.events.slots.lead_weighted` do not change which events are
confirmed or their counts, only the level each is certified at. So one run of each audit gives
its bound under every weighting: the confirmed counts are recorded (by wrapping
``DPCertifier.certify``) and certified again by the certifier itself with the weights changed. Compared, over the zoo's pure entries through
``audit_pairs(confirm="best")`` at α = 0.05:

* ``as_run`` — the weights the code under test gave;
* ``strong_lead`` — the lead on the candidate :func:`~dpcheck.events.slots.strong_last_slot`
  put in (short shortlists), or with ``--diverse`` on the extra candidate of long shortlists
  (``EXTRA_STRONG``), when there is one (else as run);
* ``equal`` — every ranked candidate at weight 1 (support candidates keep theirs).

The candidate put in is matched by its event's description and direction (the wrappers record
it during exploration); two events with the same description can be confused (2 of 156 audits
at 10⁵ in stop 39). Stop 39's figures (``benchmarks/README.md``, "The lead goes to the strong
slot's candidate"): ``--samples 1e5 --seeds 0 1 2 3`` and ``--samples 1e6 --seeds 0 1``.

Usage::

    python benchmarks/lead_counterfactual.py --samples 1e5 --seeds 0 1 2 3
    python benchmarks/lead_counterfactual.py --samples 1e5 --seeds 0 1 2 3 --diverse

References
----------
S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6 (1979)
(weighted Bonferroni); the weights depend on the exploration sample only, so the family stays at
level α (``shared/design.md`` §4).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import sys
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dpcheck  # noqa: E402
import dpcheck.core.certify as certify  # noqa: E402
import dpcheck.events.select as select  # noqa: E402
from algorithms.zoo import entries  # noqa: E402

#: The certifier of pure and (ε, δ) claims as dpcheck defines it (before it is wrapped below).
CERTIFY = certify.DPCertifier.certify
PUT_IN: list[tuple[str, str]] = []
CALLS: list[tuple[Any, list[Any], list[Any], float]] = []


def _record_strong(original: Any) -> Any:
    def strong_last_slot(short: Any, strong: Any, chosen: list[Any], *args: Any) -> Any:
        out, taken = original(short, strong, chosen, *args)
        if out and (len(out) != len(chosen) or out[-1] is not chosen[-1]):
            PUT_IN.append((out[-1].event.describe(), out[-1].direction))
        return out, taken
    return strong_last_slot


def _record_extra(original: Any) -> Any:
    def fill_slots(short: Any, rankings: list[Any], quotas: list[int], diverse: bool,
                   ratio: bool, picked: list[int] | None = None) -> Any:
        out, taken = original(short, rankings, quotas, diverse, ratio, picked=picked)
        if diverse and len(rankings) >= 2 and quotas[1] > 0:
            mild, _ = original(short, rankings[:1], quotas[:1], diverse, ratio)
            if len(out) > len(mild):
                PUT_IN.append((out[len(mild)].event.describe(), out[len(mild)].direction))
        return out, taken
    return fill_slots


def _record_certify(original: Any) -> Any:
    def certify_(self: Any, claim: Any, chosen: Any, counts: Any, alpha: float) -> Any:
        CALLS.append((claim, list(chosen), list(counts), alpha))
        return original(self, claim, chosen, counts, alpha)
    return certify_


def certified(claim: Any, chosen: list[Any], counts: list[Any], alpha: float,
              weights: list[float]) -> Any:
    """The certifier's own result for the confirmed ``counts`` with the candidates re-weighted
    (each at ``alpha · w / Σw``)."""
    reweighted = [dataclasses.replace(c, weight=w) for c, w in zip(chosen, weights)]
    return CERTIFY(certify.DPCertifier(pure=True), claim, reweighted, counts, alpha)


def one(entry: Any, samples: int, seed: int) -> dict[str, Any]:
    PUT_IN.clear()
    CALLS.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dpcheck.audit_pairs(entry.mechanism, entry.pairs, entry.claim, samples=samples,
                            seed=seed, alpha=0.05, features=entry.features,
                            float_features=entry.float_features, confirm="best")
    claim, chosen, counts, alpha = CALLS[-1]
    weights = [c.weight for c in chosen]
    ranked = [i for i, c in enumerate(chosen) if c.weight >= 1.0]
    put_in = set(PUT_IN)
    strong = [i for i in ranked if (chosen[i].event.describe(), chosen[i].direction) in put_in]
    equal = [1.0 if i in ranked else w for i, w in enumerate(weights)]
    lead = list(weights)
    if strong and len(ranked) > 2:
        lead = list(equal)
        lead[strong[0]] = max(weights[i] for i in ranked)
    as_run = certified(claim, chosen, counts, alpha, weights)
    return {"mechanism": entry.name, "seed": seed, "samples": samples,
            "as_run": as_run.epsilon_lower,
            "strong_lead": certified(claim, chosen, counts, alpha, lead).epsilon_lower,
            "equal": certified(claim, chosen, counts, alpha, equal).epsilon_lower,
            "put_in": strong[0] if strong else None,
            "confirmed_best": as_run.best, "ranked": len(ranked)}


def summary(records: list[dict[str, Any]]) -> None:
    ok = [r for r in records if all(math.isfinite(r[k]) and r[k] > 0
                                    for k in ("as_run", "strong_lead", "equal"))]
    moved = [r for r in ok if r["put_in"] is not None]
    print(f"{len(records)} audits, {len(moved)} with a put-in candidate; it is the confirmed "
          f"best in {sum(r['confirmed_best'] == r['put_in'] for r in moved)}, the first in "
          f"{sum(r['confirmed_best'] == 0 for r in moved)}")
    for name in ("strong_lead", "equal"):
        rel = [r[name] / r["as_run"] - 1 for r in moved]
        if rel:
            print(f"  {name} vs as run (those audits): mean {100 * statistics.fmean(rel):+.2f} %, "
                  f"median {100 * statistics.median(rel):+.2f} %, up {sum(x > 1e-12 for x in rel)}"
                  f", down {sum(x < -1e-12 for x in rel)}, worst {100 * min(rel):+.1f} %")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=float, default=1e5, help="per side per pair")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--diverse", action="store_true",
                        help="the extra candidate of long shortlists instead of the strong slot")
    parser.add_argument("--out", type=Path,
                        default=ROOT / "reports" / "bench" / "lead_counterfactual.jsonl")
    args = parser.parse_args(argv)
    if args.diverse:
        select.fill_slots = _record_extra(select.fill_slots)
    else:
        select.strong_last_slot = _record_strong(select.strong_last_slot)
    certify.DPCertifier.certify = _record_certify(certify.DPCertifier.certify)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    records = []
    with args.out.open("w") as out:
        for entry in entries():
            if not isinstance(entry.claim, dpcheck.PureDP):
                continue
            for seed in args.seeds:
                records.append(one(entry, int(args.samples), seed))
                out.write(json.dumps(records[-1]) + "\n")
                out.flush()
    summary(records)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
