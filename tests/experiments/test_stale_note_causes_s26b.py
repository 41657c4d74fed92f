"""The note of a sweep into a folder that holds runs its config no longer makes names every
cause: the config edited, another scale, or an older maxminq that resolved the same config's
settings otherwise (a default it did not fill in). It said "swept before an edit or at
another scale", which is untrue for an unedited config swept again after an upgrade."""

from __future__ import annotations

from pathlib import Path

from test_sweep import TOY  # the tiny toy-MDP sweep of the sweep tests (4 runs)

from maxminq.commands.sweep import stale_note
from maxminq.experiments.config import RunSpec, load_config
from maxminq.experiments.store import ResultsStore


def test_the_note_names_an_older_maxminqs_settings_as_a_cause(tmp_path: Path) -> None:
    path = tmp_path / "toy.yaml"
    path.write_text(TOY.format(runs=2, episodes=5))
    config = load_config(path, "quick")
    run = config.runs[0]
    # the same run as an older maxminq stored it: one setting it did not fill in
    dropped = sorted(run.settings)[0]
    older = {k: v for k, v in run.settings.items() if k != dropped}
    with ResultsStore(tmp_path / "out") as store:
        store.register([RunSpec("toy_mdp-0123456789ab", run.kind, older, config.name)])
    note = stale_note(tmp_path / "out", config)
    assert note is not None
    assert f"also holds 1 run(s) of config {config.name} that it does not make" in note
    assert "(swept before an edit, at another scale, or by an older maxminq that resolved " in note
    assert f"they differ in {dropped} unset" in note, note
