"""Tables, figures and the reproduction report, computed from stored results.

For finished deep runs (folders of ``maxminq train``, or a sweep's ``OUT/tables/<run_id>``)
from Python: ``compare_runs`` (``maxminq compare``'s table) and ``plot_runs`` (``maxminq
plot``'s figure)::

    from maxminq.analysis import compare_runs, plot_runs
"""

from typing import Any

# Imported on first use: ``maxminq.analysis.tables`` (read by every command) must not pull
# in matplotlib and the figure code.
_API = {
    "compare_runs": "maxminq.analysis.compare",
    "CompareWarning": "maxminq.analysis.compare",
    "plot_runs": "maxminq.analysis.runs",
    "PlotWarning": "maxminq.analysis.runs",
}
__all__ = list(_API)


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'maxminq.analysis' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_API[name]), name)
