"""deep.config.OPERATOR_N (the N a generalized-dqn run of a fixed-N library G gets when no
--n is given) states again what tabular.agent.ALGORITHMS' fixed_n says, so that the deep
config need not import the numba kernels: the two must not drift apart."""

from maxminq.deep.config import OPERATOR_N
from maxminq.tabular.agent import ALGORITHMS


def test_operator_n_is_the_tabular_algorithms_fixed_n() -> None:
    fixed = {name: spec.fixed_n for name, spec in ALGORITHMS.items() if spec.fixed_n is not None}
    assert fixed == OPERATOR_N
    assert fixed == {"q_learning": 1, "bias_corrected": 1, "double_q": 2, "weighted_double_q": 2}
