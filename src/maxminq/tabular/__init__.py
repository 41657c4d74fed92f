"""Tabular Generalized Q-learning: finite-MDP solvers and small toy problems.

Modules: ``finite_mdp`` (``FiniteMDP``, ``random_mdp``, ``episodic_mdp``,
``generalized_q_learning``: Theorem 2's setting), ``toy_mdp`` (``run_toy_mdp``: the paper's
Fig. 2) and ``agent`` (the vectorised tabular learners both use). Each is imported on first
use, as ``from maxminq.tabular.finite_mdp import random_mdp`` or as an attribute
(``maxminq.tabular.finite_mdp.random_mdp`` after ``import maxminq``); this package file
stays minimal so that several modules can be added independently.
"""

from typing import TYPE_CHECKING

from maxminq._lazy import lazy_attributes, lazy_dir

if TYPE_CHECKING:  # what type checkers see: the modules, as the lazy __getattr__ gives them
    from maxminq.tabular import agent as agent
    from maxminq.tabular import finite_mdp as finite_mdp
    from maxminq.tabular import toy_mdp as toy_mdp

if not TYPE_CHECKING:  # a module __getattr__ (-> Any) seen by a type checker would make
    # every name it does not find here Any: a misspelt import passed mypy
    __getattr__ = lazy_attributes(__name__, {})
    __dir__ = lazy_dir(__name__, {}, modules=True)
