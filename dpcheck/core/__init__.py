"""The auditor's core: explore → confirm → certify.

:mod:`~dpcheck.core.audit` (:func:`dpcheck.audit`) runs one audit as a short template:
:mod:`~dpcheck.core.explore` validates the arguments and chooses the events on the exploration
sample, :mod:`~dpcheck.core.confirm` counts them on fresh confirmation samples (in chunks,
through :mod:`~dpcheck.core.executor`, resumable from :mod:`~dpcheck.core.checkpoint`), and
:mod:`~dpcheck.core.certify` turns the counts into the bounds of the claim (one certifier per
claim type). :mod:`~dpcheck.core.results` holds :class:`~dpcheck.AuditResult`;
:mod:`~dpcheck.core.audit_pairs` audits several pairs under one α;
:mod:`~dpcheck.core.accuracy` checks (α, β)-accuracy claims;
:mod:`~dpcheck.core.sampler_check` tests a sampler against its own pmf.

The names are public through :mod:`dpcheck`; this face re-exports nothing, so that
``dpcheck.core.audit`` and ``dpcheck.core.audit_pairs`` stay the modules (not the functions of
the same names).
"""
