"""A warning that a sweep's run gave in its worker points, in the caller of ``run_sweep``,
at the caller's own line: it named ``maxminq/experiments/runner.py`` (a fixed stacklevel,
one frame short of the user's code), so Python's default output showed a line of maxminq's
source as the place to look, and a filter by module could not select the user's script."""

from __future__ import annotations

import inspect
import warnings

from test_sweep_warnings import DOC, MESSAGE, warn_kind  # noqa: F401 - the kind's fixture

from maxminq.deep.config import EnvWarning
from maxminq.experiments.config import config_from_document
from maxminq.experiments.runner import run_sweep


def test_a_runs_warning_points_at_the_line_that_called_run_sweep(tmp_path, warn_kind) -> None:  # noqa: F811
    config = config_from_document(DOC, tmp_path / "warns.yaml")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
        summary = run_sweep(config, tmp_path / "out", workers=1, progress=False)
    assert summary.done == 4
    (ours,) = [w for w in caught if issubclass(w.category, EnvWarning)]
    assert str(ours.message) == MESSAGE
    assert (ours.filename, ours.lineno) == (__file__, line)
