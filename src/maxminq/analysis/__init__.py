"""Tables, figures and the reproduction report, computed from stored results.

For finished deep runs (folders of ``maxminq train``, or a sweep's ``OUT/tables/<run_id>``)
from Python: ``compare_runs`` (``maxminq compare``'s table) and ``plot_runs`` (``maxminq
plot``'s figure)::

    from maxminq.analysis import compare_runs, plot_runs
"""

from typing import TYPE_CHECKING

from maxminq._lazy import lazy_attributes, lazy_dir

if TYPE_CHECKING:  # what type checkers see: the real signatures, not the lazy Any;
    # "X as X" re-exports them under mypy --strict (no implicit re-export)
    from maxminq.analysis.compare import CompareWarning as CompareWarning
    from maxminq.analysis.compare import compare_runs as compare_runs
    from maxminq.analysis.runs import PlotWarning as PlotWarning
    from maxminq.analysis.runs import plot_runs as plot_runs

# Imported on first use: ``maxminq.analysis.tables`` (read by every command) must not pull
# in matplotlib and the figure code.
_API = {
    "compare_runs": "maxminq.analysis.compare",
    "CompareWarning": "maxminq.analysis.compare",
    "plot_runs": "maxminq.analysis.runs",
    "PlotWarning": "maxminq.analysis.runs",
}
__all__ = list(_API)


if not TYPE_CHECKING:  # a module __getattr__ (-> Any) seen by a type checker would make
    # every name it does not find here Any: a misspelt import passed mypy
    __getattr__ = lazy_attributes(__name__, _API)
    __dir__ = lazy_dir(__name__, _API)
