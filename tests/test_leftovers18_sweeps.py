"""Session 18 leftovers of sweeps, the results store and Ray.

1. A deep run's id no longer depends on ``checkpoint_every`` or ``tensorboard`` (they cannot
   change its results): changing them in a config retrained every run. Runs at their
   defaults keep the ids they always had, and a store whose runs were swept with other
   values resumes as before (its runs are taken under their stored ids).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from maxminq.commands.sweep import dry_run, stale_run_ids
from maxminq.experiments.config import (
    MAX_NODES,
    ConfigError,
    RunSpec,
    expanded_size,
    load_config,
    parse_document,
)
from maxminq.experiments.runner import run_sweep
from maxminq.experiments.store import ResultsStore

REPO = Path(__file__).resolve().parents[1]

DEEP = """
name: ck
kind: deep
fixed: {{env_id: CartPole-v1, agent: dqn, steps: 300, seeds: [0], learning_starts: 40,
        eval_episodes: 2{extra}}}
scales: {{quick: {{}}}}
"""


def _config(tmp_path: Path, extra: str = "", name: str = "ck.yaml"):
    path = tmp_path / name
    path.write_text(DEEP.format(extra=extra))
    return load_config(path, "quick")


def _hash_id(kind: str, settings: dict) -> str:
    """The run id as every version before this one made it: the SHA-256 of kind and all
    the settings (written out here, not taken from the package)."""
    text = json.dumps({"kind": kind, "settings": settings}, sort_keys=True, separators=(",", ":"))
    return f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


# ----------------------------------------------------------------------------- 1. run ids
def test_checkpoint_every_and_tensorboard_do_not_change_a_deep_run_id(tmp_path) -> None:
    """Before: checkpoint_every 50 and tensorboard true gave another id, so the sweep
    trained the run again though its tables cannot differ."""
    plain = _config(tmp_path).runs[0]
    other = _config(tmp_path, ", checkpoint_every: 50, tensorboard: true", "b.yaml").runs[0]
    assert other.settings["checkpoint_every"] == 50 and other.settings["tensorboard"] is True
    assert other.run_id == plain.run_id
    # a setting that changes results still changes the id
    assert _config(tmp_path, ", lr: 0.01", "c.yaml").runs[0].run_id != plain.run_id


def test_runs_at_the_default_checkpoint_settings_keep_their_ids(tmp_path) -> None:
    """The ids of published configs and of every run swept at the defaults are those of
    before (checkpoint_every max(10,000, steps / 20) and tensorboard false hashed as they
    are): pinned for two shipped configs (quick: checkpoint_every 10,000; paper: 3.5e6
    steps, 175,000), and equal to the full-settings hash for a small run."""
    catcher = load_config(REPO / "configs" / "catcher.yaml", "quick").runs
    assert [r.run_id for r in catcher[:2]] == ["deep-cf546d08f466", "deep-dd6e15a5a62d"]
    paper = load_config(REPO / "configs" / "catcher.yaml", "paper").runs[0]
    assert paper.settings["checkpoint_every"] == 175_000
    assert paper.run_id == "deep-4666e76985b6"
    breakout = load_config(REPO / "configs" / "minatar_breakout.yaml", "quick").runs
    assert breakout[0].run_id == "deep-495c3632f660"
    run = _config(tmp_path).runs[0]
    assert run.run_id == _hash_id("deep", run.settings)


def test_a_grid_over_checkpoint_every_alone_is_one_run_given_twice(tmp_path) -> None:
    """Two runs that differ only in checkpoint_every compute the same thing: the config
    says so (it ran both before)."""
    path = tmp_path / "grid.yaml"
    path.write_text(DEEP.format(extra="") + "grid: {checkpoint_every: [100, 200]}\n")
    with pytest.raises(ConfigError, match=r"grid: makes the same run as another"):
        load_config(path, "quick")


def _store_finished(out: Path, run: RunSpec) -> None:
    """``run`` stored finished in ``out`` as a sweep stores it (made-up tables)."""
    with ResultsStore(out, lock=True) as store:
        store.register([run])
        store.mark_running(run.run_id)
        store.save_tables(run, {"runs": pd.DataFrame({"seed": [0], "test_return": [9.5]})})
        store.mark_finished(run.run_id, "done")


def test_a_store_swept_with_other_checkpoint_settings_resumes_as_before(tmp_path) -> None:
    """A user's store of runs swept with checkpoint_every 50 (stored under the id every
    earlier version gave them, the hash of all settings): the same config, and the config
    with checkpoint_every changed, find the run finished (dry run, sweep: nothing trained,
    no stale runs), under its stored id."""
    old = _config(tmp_path, ", checkpoint_every: 50", "old.yaml").runs[0]
    legacy = RunSpec(_hash_id("deep", old.settings), old.kind, old.settings, old.config)
    assert legacy.run_id != old.run_id  # what the store holds is not today's id
    out = tmp_path / "out"
    _store_finished(out, legacy)
    for extra in (", checkpoint_every: 50", ", checkpoint_every: 70, tensorboard: true", ""):
        config = _config(tmp_path, extra, "now.yaml")
        assert "1 already done" in dry_run(config, out), extra
        assert stale_run_ids(out, [config]) == set()
        summary = run_sweep(config, out, workers=1, progress=False)
        assert (summary.skipped, summary.done, summary.failed) == (1, 0, 0), extra
    with ResultsStore(out, create=False) as store:
        assert [r.run_id for r in store.records()] == [legacy.run_id]
        assert [r.status for r in store.records()] == ["done"]


# ----------------------------------------------------------------------------- 2. alias bombs
def _laughs(levels: int, width: int = 9) -> list[str]:
    """Lines of nested anchors: level k holds ``width`` aliases of level k - 1."""
    lines = [f"  x0: &a0 [{', '.join(['lol'] * width)}]"]
    for k in range(1, levels):
        lines.append(f"  x{k}: &a{k} [{', '.join([f'*a{k - 1}'] * width)}]")
    return lines


BOMBS = {
    # a setting, a name (its error message printed the value), a grid axis, merge keys
    "fixed": "name: b\nkind: toy_mdp\nfixed:\n{laughs}\nscales: {{quick: {{}}}}\n",
    "name": "kind: toy_mdp\nfixed:\n{laughs}\nname: *a8\nscales: {{quick: {{}}}}\n",
    "grid": "name: b\nkind: toy_mdp\nfixed:\n{laughs}\ngrid:\n  mu: *a8\nscales: {{quick: {{}}}}\n",
}
MERGES = "\n".join(
    ["  m0: &m0 {k0: 1, k1: 2}"]
    + [f"  m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], z{i}: 1}}" for i in range(1, 30)]
)


@pytest.mark.parametrize("where", [*BOMBS, "merge"])
def test_an_alias_bomb_is_refused_in_one_line_naming_the_file(tmp_path, where: str) -> None:
    """Nine levels of nine aliases (9^9 values) or 29 levels of doubling merge keys, each
    file well under the size limit: one line naming the file and what to do. (Before, the
    checks walked the expanded values or printed them in an error: no answer within
    minutes, gigabytes of memory.)"""
    text = (
        f"name: b\nkind: toy_mdp\nfixed:\n{MERGES}\nscales: {{quick: {{}}}}\n"
        if where == "merge"
        else BOMBS[where].format(laughs="\n".join(_laughs(9)))
    )
    path = tmp_path / f"{where}.yaml"
    path.write_text(text)
    assert path.stat().st_size < 2_000
    with pytest.raises(ConfigError) as err:
        load_config(path, "quick")
    message = str(err.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert f"expand to more than {MAX_NODES:,} values" in message
    assert "write the values out" in message


def test_expanded_size_counts_each_use_of_an_anchor() -> None:
    """The count the limit applies to, on documents small enough to count by hand: an
    anchored list of 2 used twice in a list is 1 + 2 * (1 + 2) = 7 nodes; a mapping is
    itself plus its keys and values; a merge counts the merged mapping once more."""

    def size(text: str, limit: int = MAX_NODES) -> int | None:
        return expanded_size(yaml.compose(text, Loader=yaml.SafeLoader), limit)

    assert size("[&a [1, 2], *a]") == 7
    assert size("{k: &a [1, 2], j: *a}") == 1 + 2 * 1 + 2 * 3
    assert size("{b: &b {x: 1}, c: {<<: *b, y: 2}}") == 1 + 2 + 3 + (1 + 2 + 3 + 1)
    assert size("[&a [1, 2], *a]", limit=6) is None  # over the limit
    assert size("&a [1, *a]") is None  # endless


def test_configs_with_a_few_aliases_still_load(tmp_path) -> None:
    """Anchors, aliases and merge keys as configs use them are unchanged: a scale that
    reuses the top level's grid, and a variant merged from a base."""
    doc = parse_document(
        "name: t\nkind: toy_mdp\ngrid: &g {mu: [0.1, -0.1]}\n"
        "fixed: {runs: 2, episodes: 3, seed: 1}\n"
        "variants:\n  - &base {algorithm: q_learning, n: 1}\n  - {<<: *base, algorithm: maxmin,"
        " n: 2}\nscales: {quick: {grid: *g}}\n"
    )
    assert doc["variants"][1] == {"algorithm": "maxmin", "n": 2}
    path = tmp_path / "ok.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert len(load_config(path, "quick").runs) == 4
