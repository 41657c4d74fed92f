"""Tile-coded (linear) Generalized Q-learning: tile coder and noisy Mountain Car, vectorised.

Modules: ``mountain_car`` (``run_mountain_car``, ``run_mountain_car_grid``: the paper's
Fig. 3) and ``tiles`` (the tile coder). Each is imported on first use, as ``from
maxminq.linear.mountain_car import run_mountain_car`` or as an attribute
(``maxminq.linear.mountain_car.run_mountain_car`` after ``import maxminq``).
"""

from typing import TYPE_CHECKING

from maxminq._lazy import lazy_attributes, lazy_dir

if TYPE_CHECKING:  # what type checkers see: the modules, as the lazy __getattr__ gives them
    from maxminq.linear import mountain_car as mountain_car
    from maxminq.linear import tiles as tiles

if not TYPE_CHECKING:  # a module __getattr__ (-> Any) seen by a type checker would make
    # every name it does not find here Any: a misspelt import passed mypy
    __getattr__ = lazy_attributes(__name__, {})
    __dir__ = lazy_dir(__name__, {}, modules=True)
