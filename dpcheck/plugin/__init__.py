"""The pytest plugin (entry point ``dpcheck`` → :mod:`dpcheck.plugin.hooks`).

:mod:`~dpcheck.plugin.hooks` holds the pytest hooks, :mod:`~dpcheck.plugin.options` the option
parsers, :mod:`~dpcheck.plugin.fixtures` the fixtures (``dp_audit``, ``dp_accuracy``, …),
:mod:`~dpcheck.plugin.state` the per-run and per-test state, :mod:`~dpcheck.plugin.records`
verdicts and records, :mod:`~dpcheck.plugin.controller` the run document and report, and
:mod:`~dpcheck.plugin.workers` the executor tests may share. Importing this package does not
register the plugin; pytest loads :mod:`dpcheck.plugin.hooks` through the entry point.
"""
