"""Tile-coded (linear) Generalized Q-learning: tile coder and noisy Mountain Car, vectorised.

Modules are imported explicitly (``from maxminq.linear.mountain_car import run_mountain_car``).
"""
