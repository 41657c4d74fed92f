"""maxminq: Maxmin Q-learning and the Generalized Q-learning family (Lan et al., ICLR 2020).

Where things are (each subpackage is imported on its own; ``import maxminq`` loads only
the operators, with NumPy, and any other on first use: ``maxminq.theory.choose_n(100)``
after a bare ``import maxminq`` imports ``maxminq.theory`` then):

- ``maxminq.operators``: the G functions (``bootstrap``, ``action_values``, ``td_target``)
  on NumPy arrays or torch tensors of shape ``(..., N, A)``.
- ``maxminq.theory``: Theorem 1 and Corollary 1 in closed form and by Monte Carlo.
- ``maxminq.tabular.finite_mdp``, ``maxminq.tabular.toy_mdp``,
  ``maxminq.linear.mountain_car``: the tabular and tile-coding experiments.
- ``maxminq.envs``: ``make`` / ``make_vector`` for the paper's games and any Gymnasium id.
- ``maxminq.deep``: ``TrainConfig``, ``run_training``, ``read_tables``, ``pooled_bias``,
  ``load_agent``, ``evaluate_agent``.
- ``maxminq.experiments``: sweep configs, ``runner.run_sweep``, ``store.load_results``.
- ``maxminq.analysis``: ``compare_runs`` and ``plot_runs`` for finished deep runs.

A bad argument is a one-line ``ValueError`` (or ``TypeError``) naming it; where the
``maxminq`` command does the same job (training, sweeps, analysis, an unknown environment
id) it is the subclass ``maxminq.errors.UsageError``, worded as the command prints it
(``--lr: ...``), and a bad sweep config is a ``maxminq.experiments.config.ConfigError``
(a ``ValueError`` too). A results folder that cannot be used (no sweep's store in it, a
config name it has no runs of, another sweep's lock) is a
``maxminq.experiments.store.StoreError``, which is no ``ValueError``: all four are
``maxminq.errors.MaxminqError``. What maxminq warns you of is a
``maxminq.errors.MaxminqWarning`` (a ``UserWarning``).
"""

from typing import TYPE_CHECKING

from maxminq import operators
from maxminq._lazy import lazy_dir, submodules

__all__ = ["operators"]
__version__ = "0.1.0"

# The subpackages and modules ``maxminq.NAME`` imports on first use; ``maxminq.theory`` after
# a bare ``import maxminq`` was an AttributeError.
_SUBMODULES = ("analysis", "deep", "envs", "errors", "experiments", "linear", "tabular", "theory")

if TYPE_CHECKING:  # what type checkers see: the modules themselves
    from maxminq import analysis as analysis
    from maxminq import deep as deep
    from maxminq import envs as envs
    from maxminq import errors as errors
    from maxminq import experiments as experiments
    from maxminq import linear as linear
    from maxminq import tabular as tabular
    from maxminq import theory as theory

if not TYPE_CHECKING:  # a module __getattr__ seen by a type checker types every name Any

    def __getattr__(name: str) -> object:
        """``maxminq.NAME`` for a subpackage or module not imported yet (``maxminq.theory``,
        ``maxminq.cli``): imported now."""
        if name in _SUBMODULES or (not name.startswith("_") and name in submodules(__name__)):
            import importlib

            return importlib.import_module(f"{__name__}.{name}")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    __dir__ = lazy_dir(__name__, dict.fromkeys(_SUBMODULES, __name__))
