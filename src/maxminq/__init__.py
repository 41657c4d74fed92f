"""maxminq: Maxmin Q-learning and the Generalized Q-learning family (Lan et al., ICLR 2020).

Where things are (each subpackage is imported on its own; ``import maxminq`` loads only
the operators, with NumPy):

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
(``--lr: ...``).
"""

from maxminq import operators

__all__ = ["operators"]
__version__ = "0.1.0"
