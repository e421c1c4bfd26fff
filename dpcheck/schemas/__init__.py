"""JSON Schemas (draft 2020-12) of the documents dpcheck writes; see
:mod:`dpcheck.report.strict_json`."""
