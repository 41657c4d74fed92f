"""``pooled_bias`` given what is not a metrics table (a run folder's path, as one passes to
``read_tables``) failed with a bare AttributeError ('str' object has no attribute
'columns'); it now says what it takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from maxminq.analysis.tables import pooled_bias


@pytest.mark.parametrize("given", ["runs/lunar_maxmin", Path("runs/lunar_maxmin"), None])
def test_what_is_no_metrics_table_is_named(given: object) -> None:
    with pytest.raises(TypeError, match=r"^pooled_bias: metrics must be a run's metrics table"):
        pooled_bias(given)  # type: ignore[arg-type]
