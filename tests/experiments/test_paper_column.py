"""The paper-scale column of ``maxminq reproduce`` (``commands.reproduce.paper_difference``)
writes an operator's parameters as the report's settings list and legends do."""

from pathlib import Path

from maxminq.commands.reproduce import paper_difference
from maxminq.experiments.config import RunSpec, SweepConfig


def _config(scale: str, settings: list[dict]) -> SweepConfig:
    specs = [RunSpec(f"r{i}", "toy_mdp", s, "demo") for i, s in enumerate(settings)]
    return SweepConfig("demo", "toy_mdp", scale, Path("demo.yaml"), runs=specs)


def test_paper_column_writes_op_kwargs_as_labels_in_value_order() -> None:
    base = {"algorithm": "weighted_double_q", "runs": 4}
    quick = _config("quick", [{**base, "op_kwargs": {"c": 1.0}}])
    paper = _config("paper", [{**base, "op_kwargs": {"c": c}} for c in (100.0, 10.0, 1.0)])
    # as the settings list: c=1, c=10, c=100 (not {"c": 1.0} as JSON text, 100 before 1)
    assert paper_difference(quick, paper) == (
        "3 settings x 4 runs (here 1 x 4); op_kwargs: c=1, c=10, c=100"
    )
