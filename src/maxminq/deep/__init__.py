"""Deep Generalized Q-learning agents (DQN, Double DQN, Maxmin, Averaged and Ensemble DQN,
and Generalized DQN with any operator G, one of your own too: ``TrainConfig.operator``).

The N networks of an agent and the S independent seeds of an experiment are held as one
stacked model with a leading member axis of size S x N, evaluated with batched matrix
products (``torch.baddbmm``; the convolution as ``torch.bmm`` on im2col patches), trained
with per-member optimisers that leave the state of members not updated untouched.

Modules: ``nets`` (stacked networks), ``optim`` (per-member RMSprop / Adam), ``replay``
(S preallocated replay buffers), ``agents`` (the learner: acting values, targets through
``maxminq.operators``, updates), ``config`` (``TrainConfig``), ``train`` (``run_training``:
the training loop, its metrics and test episodes), ``bias_probes`` (which bias probes
count; the warning when the time limit leaves much of a run unmeasured), ``env_checks``
(an environment checked against what the agents need), ``run_folder`` (a run's tables,
checkpoint, options and lock), ``step_boundary`` (Ctrl-C and SIGTERM between steps) and
``policy`` (a trained agent: ``load_agent``, ``evaluate_agent``).

What a script needs is importable from here: ``TrainConfig``, ``run_training``,
``read_tables`` (a run folder's tables), ``pooled_bias`` (a run's measured bias per seed,
``second_half=True`` as ``maxminq compare`` counts it), ``load_agent``, ``evaluate_agent``.
"""

from typing import TYPE_CHECKING

from maxminq._lazy import lazy_attributes, lazy_dir

if TYPE_CHECKING:  # what type checkers see: the real signatures, not the lazy Any;
    # "X as X" re-exports them under mypy --strict (no implicit re-export)
    from maxminq.analysis.tables import pooled_bias as pooled_bias
    from maxminq.deep.config import TrainConfig as TrainConfig
    from maxminq.deep.policy import TrainedAgent as TrainedAgent
    from maxminq.deep.policy import evaluate_agent as evaluate_agent
    from maxminq.deep.policy import load_agent as load_agent
    from maxminq.deep.run_folder import read_tables as read_tables
    from maxminq.deep.train import run_training as run_training

# The user-facing API, imported on first use so that ``maxminq.deep.config`` (read by the
# sweep runner) does not pull in torch and the training loop.
_API = {
    "TrainConfig": "maxminq.deep.config",
    "run_training": "maxminq.deep.train",
    "read_tables": "maxminq.deep.run_folder",
    "pooled_bias": "maxminq.analysis.tables",
    "load_agent": "maxminq.deep.policy",
    "evaluate_agent": "maxminq.deep.policy",
    "TrainedAgent": "maxminq.deep.policy",
}
__all__ = list(_API)


if not TYPE_CHECKING:  # a module __getattr__ (-> Any) seen by a type checker would make
    # every name it does not find here Any: a misspelt import passed mypy
    __getattr__ = lazy_attributes(__name__, _API)
    __dir__ = lazy_dir(__name__, _API)
