"""maxminq: Maxmin Q-learning and the Generalized Q-learning family (Lan et al., ICLR 2020)."""

from maxminq import operators

__all__ = ["operators"]
__version__ = "0.1.0"
