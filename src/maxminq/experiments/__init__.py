"""Sweeps as data: configs, run registry, local/Ray runner and the SQLite results store.

Public entry points: :func:`maxminq.experiments.config.load_config`,
``SweepConfig.runs`` (the expanded runs), :func:`maxminq.experiments.runner.run_sweep`,
:class:`maxminq.experiments.store.ResultsStore` and
:func:`maxminq.experiments.store.load_results`. Modules are imported on demand (the CLI's
``status`` does not need pydantic or pandas-heavy imports beyond the store).
"""
