"""Seed 000 (Li, Wang, Ye, "Private Realizable-to-Agnostic Transformation with Near-Optimal
Sample Complexity"): executable stand-ins on thresholds over ``{0..N−1}``.

Modules
-------
core
    Count-level pieces of Algorithm 1 (prefix counts, score ``q``, labeling multiplicities).
tables
    The shared count-table laws behind every exact pmf (hypergeometric subsets, multinomial
    draws with replacement) and the subset sampler.
agnostic
    Algorithms 1–2 (``A_Relabel``, ``A_Agnostic``) with exact pmfs and vectorised samplers, the
    old baseline (``bug="baseline"``) and the buggy variants of the notes §7.
auxiliary
    Algorithm 3 (``A_Auxiliary``), exact pmf, for Claim 3.5.
empirical
    Procedure E (Lemmas 2.12 / 2.13), exact pmf (EM, RR and count base algorithms).
composite
    Theorem 3.6's learner: Algorithm 2 with Procedure E(A_PAC) as its base, exact pmf and
    vectorised sampler.
prediction
    Procedure P, the *reconstructed* Dwork–Feldman vote aggregator of Lemma 4.1.
agnostic_prediction
    ``A_AgnPred`` (Theorem 4.2: Algorithm 2 + Procedure P at privacy 1) and Procedure P as a
    mechanism on ``T^h``, exact pmfs, vectorised samplers, B2/B13 mutants.
bounds
    The paper's constants and those derived from its proofs.
buggy
    Variants with code of their own, kept out of the reference modules: Poisson sampling of
    ``T`` (B12, ``PoissonAgnostic``) and Procedure P's positional partition (B13,
    ``SortedPartitionP``, ``SortedPartitionPrediction``).

Decisions on the notes' open points (``shared/research/seed-000.md`` §6) are written where the
code makes them: §6.2, §6.3, §6.16, §6.17 in ``core``; §6.1 (order), §6.4 (ε is the internal ε;
the certified ε is ``bounds.lemma31_epsilon`` / ``bounds.theorem36_bounds``, no rescaling),
§6.5 (``ε ≤ 1/3``, ``εn ≥ 1``, ``ε_p ≤ 1``, enforced with ``InvalidArgument``), §6.7, §6.12 and
§6.15 in ``agnostic``, ``composite`` and ``bounds``; §6.10 (log = ln) and §6.11 (paper slips)
in ``bounds`` (the "By symmetry" slip also in ``agnostic``); §6.6 (odd sizes) in ``auxiliary``;
§6.1 (random partition), §6.6 (``n′ = ⌊|T|/r⌋``, leftovers dropped), §6.9 (coins: a fresh run
per query) and §6.11 (sum vs max for ``|W|``) in ``agnostic_prediction``; §6.8 in
``prediction``; §6.18 in ``agnostic``. Data are
integer ``(x, y)`` pairs; non-integers are refused (``core.as_dataset``).
"""

from .agnostic import BUGS, Agnostic
from .agnostic_prediction import AgnosticPrediction, ProcedureP
from .auxiliary import Auxiliary
from .composite import Composite
from .empirical import WithReplacement

__all__ = ["BUGS", "Agnostic", "AgnosticPrediction", "Auxiliary", "Composite", "ProcedureP",
           "WithReplacement"]
