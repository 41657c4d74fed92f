"""A Ray task whose answer Ray lost after the run finished (``ObjectLostError`` and its
kinds: the node holding it died, its owner died, it could not be fetched) is not the run's
own error: the run runs once more, as one whose worker died does (``ray_loss``, which
``_RayBackend.wait`` marks such an answer ``broken`` by, and whose words ``_drive`` puts in
the run's pending note). Before, only the deaths of a worker, raylet or node were
requeued, and a run that was fine was recorded ``failed`` with ``ObjectLostError``.

No Ray is started: the errors are Ray's own classes, made as Ray makes them (losing an
object on purpose needs a second node, seconds of a test's time); the requeue itself is
tested with a worker's real death in test_ray_worker_deaths.py.
"""

from __future__ import annotations

from ray import exceptions as rx

from maxminq.experiments.runner import ray_loss

REF = "ab" * 14  # an object id's hex


def test_lost_answers_run_again_like_dead_workers_and_the_runs_own_errors_do_not():
    # every kind of lost object
    lost = [
        rx.ObjectLostError(REF, b"", "call site"),
        rx.OwnerDiedError(REF, b"", "call site"),
        rx.ObjectReconstructionFailedError(REF, b"", "call site"),
        rx.ObjectFetchTimedOutError(REF, b"", "call site"),
    ]
    for err in lost:
        assert ray_loss(err) == "Ray lost its answer", type(err).__name__
    # the deaths requeued before, in their words as before
    for err in (rx.WorkerCrashedError(), rx.NodeDiedError("node gone")):
        assert ray_loss(err) == "its Ray worker died", type(err).__name__
    # the run's own error or a cancellation (an interrupted sweep's): not requeued here
    for err in (rx.TaskCancelledError(), rx.RaySystemError("bad"), ValueError("x")):
        assert ray_loss(err) == "", type(err).__name__
