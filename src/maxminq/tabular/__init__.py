"""Tabular Generalized Q-learning: finite-MDP solvers and small toy problems.

Modules are imported explicitly (``from maxminq.tabular.finite_mdp import ...``); this package
file stays minimal so that several modules can be added independently.
"""
