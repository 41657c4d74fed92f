"""Tables, figures and the reproduction report, computed from stored results.

For finished deep runs (folders of ``maxminq train``, or a sweep's ``OUT/tables/<run_id>``)
from Python: ``compare_runs`` (``maxminq compare``'s table) and ``plot_runs`` (``maxminq
plot``'s figure)::

    from maxminq.analysis import compare_runs, plot_runs
"""

from maxminq._lazy import lazy_attributes

# Imported on first use: ``maxminq.analysis.tables`` (read by every command) must not pull
# in matplotlib and the figure code.
_API = {
    "compare_runs": "maxminq.analysis.compare",
    "CompareWarning": "maxminq.analysis.compare",
    "plot_runs": "maxminq.analysis.runs",
    "PlotWarning": "maxminq.analysis.runs",
}
__all__ = list(_API)


__getattr__ = lazy_attributes(__name__, _API)
