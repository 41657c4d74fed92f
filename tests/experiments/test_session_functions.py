"""A sweep naming a G written in a notebook or a ``python -`` session (``'__main__:...'``):
its worker processes cannot import it, so ``run_sweep`` refuses it before any work."""

import json

from helpers import stdin_session

SESSION = """
import json, pathlib
import numpy as np
from maxminq.errors import UsageError
from maxminq.experiments.runner import run_sweep

def median_q(q):
    return np.median(q, axis=-2).max(axis=-1)

config = {
    "name": "session_g", "kind": "toy_mdp",
    "fixed": {"seed": 7, "episodes": 5, "runs": 3, "mu": 0.1},
    "variants": [{"algorithm": "q_learning", "n": 1}, {"algorithm": "__main__:median_q", "n": 2}],
    "scales": {"quick": {}},
}
try:
    run_sweep(config, "out", workers=2, progress=False)
    said = None
except UsageError as error:
    said = str(error)
print(json.dumps({"said": said, "out": pathlib.Path("out").exists()}))
"""


def test_a_sweep_refuses_a_g_of_the_session_before_any_run(tmp_path):
    """Every run of that G was recorded failed ("module '__main__' has no 'median_q'"),
    after the workers started, while the user had just defined it."""
    result = json.loads(stdin_session(SESSION, cwd=tmp_path).stdout.strip().splitlines()[-1])
    assert result["said"] == (
        "algorithm: __main__:median_q is defined in this session (a notebook, an interactive "
        "Python, python -), which the sweep's worker processes cannot import; define "
        "median_q in a module of yours (e.g. my_ops.py on PYTHONPATH) and name it "
        "'my_ops:median_q' in the config"
    )
    assert result["out"] is False  # nothing registered, no folder made
