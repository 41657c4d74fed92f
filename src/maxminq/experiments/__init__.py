"""Sweeps as data: configs, run registry, local/Ray runner and the SQLite results store.

Public entry points: :func:`maxminq.experiments.config.load_config`,
``SweepConfig.runs`` (the expanded runs), :func:`maxminq.experiments.runner.run_sweep`,
:class:`maxminq.experiments.store.ResultsStore` and
:func:`maxminq.experiments.store.load_results`. Modules are imported on demand, as ``from
maxminq.experiments.runner import run_sweep`` or as an attribute
(``maxminq.experiments.runner.run_sweep`` after ``import maxminq``): the CLI's ``status``
does not need pydantic or pandas-heavy imports beyond the store.
"""

from typing import TYPE_CHECKING

from maxminq._lazy import lazy_attributes, lazy_dir

if TYPE_CHECKING:  # what type checkers see: the modules, as the lazy __getattr__ gives them
    from maxminq.experiments import config as config
    from maxminq.experiments import merge as merge
    from maxminq.experiments import registry as registry
    from maxminq.experiments import runner as runner
    from maxminq.experiments import shard as shard
    from maxminq.experiments import software as software
    from maxminq.experiments import store as store
    from maxminq.experiments import workers as workers

if not TYPE_CHECKING:  # a module __getattr__ (-> Any) seen by a type checker would make
    # every name it does not find here Any: a misspelt import passed mypy
    __getattr__ = lazy_attributes(__name__, {})
    __dir__ = lazy_dir(__name__, {}, modules=True)
