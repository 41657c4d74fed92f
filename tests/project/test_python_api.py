"""The Python API a researcher reaches for: one call per job, agreeing with the command
that does the same job (hand-made run folders, expected numbers worked out here)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from run_folders import finished_run


def _run_folder(folder: Path, metrics: list[tuple[int, int, float, int]], steps: int) -> Path:
    """A finished 'maxminq train' folder of DQN on CartPole-v1: seeds 0-2 scoring their seed
    number in one test episode, and the metrics rows (seed, step, bias_mean, bias_n)."""
    seeds = [0, 1, 2]
    return finished_run(
        folder, metrics, steps=steps, train={s: (steps - 10, 9.0) for s in seeds},
        tests={s: float(s) for s in seeds}, extra={"network": "mlp"},
    )  # fmt: skip


# An 8,000-step run logging every 2,000 steps: the midpoint is 4,000, so the intervals
# (4,000, 6,000] and (6,000, 8,000] count, (2,000, 4,000] (ending at it) does not.
# Seed 0: 1 probe of 1.0 and 3 of 4.0 -> 13 / 4 = 3.25; seed 1: -2 throughout -> -2.0;
# seed 2 stopped at 2,000 (no second half).
METRICS = [
    (0, 2000, 9.0, 5), (0, 4000, 8.0, 5), (0, 6000, 1.0, 1), (0, 8000, 4.0, 3),
    (1, 2000, 9.0, 5), (1, 4000, 8.0, 5), (1, 6000, -2.0, 2), (1, 8000, -2.0, 2),
    (2, 2000, 9.0, 5),
]  # fmt: skip


def _second_run(folder: Path) -> Path:
    """A Maxmin DQN run beside :data:`METRICS`' DQN one, no bias measured in any seed."""
    _run_folder(folder, [(s, step, math.nan, 0) for s in (0, 1, 2) for step in (4000, 8000)], 8000)
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(cfg | {"agent": "maxmin-dqn", "n": 2}))
    return folder


def _svg_words(path: Path) -> list[str]:
    """The texts of an SVG figure other than tick labels, in drawing order (matplotlib
    writes each text as glyph paths after a ``<!-- text -->`` comment)."""
    import re

    texts = re.findall(r"<!-- (.*?) -->", path.read_text())
    return [t for t in texts if not re.fullmatch(r"[\u2212\d.k]+", t)]


# What the figure of the DQN run and the Maxmin one, panels return and bias, must show: each
# panel's axis labels and title, the figure's title (their environment and seeds), the legend.
BOTH_WORDS = [
    "environment steps", "return (100-episode average)", "training return",
    "environment steps", "estimate - MC return", "estimation bias (above 0: over)",
    "CartPole-v1, 3 seeds per run", "DQN", "Maxmin DQN (N=2)",
]  # fmt: skip


def _tiny(**kw: object):
    """A CartPole-v1 DQN run of a few hundred steps (a few seconds on this machine)."""
    from maxminq.deep import TrainConfig

    base: dict = dict(env_id="CartPole-v1", agent="dqn", lr=1e-3, steps=300, seeds=[0])
    base |= dict(eval_episodes=1, bias_every=100, learning_starts=100, buffer_size=300)
    return TrainConfig(**(base | kw))


def test_second_half_bias_per_seed_is_what_compare_runs_reports(tmp_path) -> None:
    from maxminq.analysis.compare import compare_runs
    from maxminq.analysis.tables import pooled_bias
    from maxminq.deep.train import read_tables

    folder = _run_folder(tmp_path / "run", METRICS, steps=8000)
    per_seed = pooled_bias(read_tables(folder)["metrics"], second_half=True)
    assert per_seed["seed"].tolist() == [0, 1, 2]
    assert per_seed["bias_mean"].iloc[:2].tolist() == pytest.approx([3.25, -2.0])
    assert per_seed["bias_n"].tolist() == [4, 4, 0] and math.isnan(per_seed["bias_mean"].iloc[2])
    row = compare_runs([folder]).iloc[0]
    assert row["bias_seeds"] == 2
    assert row["bias_mean"] == pytest.approx((3.25 - 2.0) / 2)
    assert row["bias_se"] == pytest.approx(abs(3.25 + 2.0) / 2)  # sd / sqrt(2) of two values
    # after=b counts the intervals *ending* after b: after=3000 takes in (2,000, 4,000]
    # across the midpoint, 5 + 1 + 3 = 9 probes of seed 0.
    assert pooled_bias(read_tables(folder)["metrics"], after=3000)["bias_n"].tolist() == [9, 9, 0]


def test_second_half_cannot_be_combined_with_after() -> None:
    from maxminq.analysis.tables import pooled_bias

    m = pd.DataFrame(METRICS, columns=["seed", "step", "bias_mean", "bias_n"])
    m = m.assign(bias_std=0.0, bias_abs=m["bias_mean"].abs())
    with pytest.raises(ValueError, match="after or second_half"):
        pooled_bias(m, after=100, second_half=True)
    assert np.isfinite(pooled_bias(m, second_half=True)["bias_mean"]).sum() == 2


def test_a_runs_tables_and_bias_are_importable_from_maxminq_deep() -> None:
    import maxminq.deep
    from maxminq.analysis import tables
    from maxminq.deep import pooled_bias, read_tables, train

    assert pooled_bias is tables.pooled_bias is train.pooled_bias  # README's older import
    assert read_tables is train.read_tables
    assert {"pooled_bias", "read_tables"} <= set(maxminq.deep.__all__)


def test_compare_runs_and_plot_runs_are_importable_from_maxminq_analysis() -> None:
    from maxminq.analysis import compare, compare_runs, plot_runs, runs

    assert compare_runs is compare.compare_runs and plot_runs is runs.plot_runs


def test_python_dash_m_maxminq_is_the_command(tmp_path) -> None:
    """``python -m maxminq`` passes its arguments to the command and its exit status back."""
    import subprocess
    import sys

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "maxminq", *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )

    from maxminq import __version__

    assert run("--version").stdout.strip() == f"maxminq {__version__}"
    folder = _run_folder(tmp_path / "run", METRICS, steps=8000)
    done = run("compare", str(folder))
    assert done.returncode == 0, done.stderr
    assert "DQN" in done.stdout and "+0.62" in done.stdout  # the second-half bias, (3.25 - 2) / 2
    missing = run("compare", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert "RUN_DIR:" in missing.stderr


def test_plot_runs_writes_what_the_command_writes(tmp_path, capsys) -> None:
    import warnings

    from maxminq.analysis import PlotWarning, plot_runs
    from maxminq.cli import main

    dqn = _run_folder(tmp_path / "dqn", METRICS, steps=8000)
    maxmin = _second_run(tmp_path / "maxmin")
    (tmp_path / "cli").mkdir()
    assert main(["plot", str(dqn), str(maxmin), "--out", str(tmp_path / "cli" / "both.png"),
                 "--panels", "return,bias"]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert err.startswith("maxminq plot: warning: no bias measured in ") and str(maxmin) in err
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paths = plot_runs([dqn, maxmin], tmp_path / "py" / "both", panels=["return", "bias"])
    assert paths == [tmp_path / "py" / "both.png", tmp_path / "py" / "both.svg"]
    assert [w.category for w in caught] == [PlotWarning] and str(maxmin) in str(caught[0].message)
    assert err.strip() == f"maxminq plot: warning: {caught[0].message}"
    for suffix in (".png", ".svg"):
        assert not list((tmp_path / "py").glob(f".*{suffix}*"))  # no temporary left
    # The command calls plot_runs, so both figures are checked against what they must show
    # (comparing one with the other could not fail).
    for folder in ("cli", "py"):
        assert (tmp_path / folder / "both.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert _svg_words(tmp_path / folder / "both.svg") == BOTH_WORDS, folder
    # Own labels and title are drawn; a wrong number of labels names the option.
    with pytest.warns(PlotWarning):
        mine = plot_runs(
            [dqn, maxmin], tmp_path / "own", labels=["plain", "min of 2"], title="Mine"
        )
    svg = mine[1].read_text()
    assert "plain" in svg and "min of 2" in svg and "Mine" in svg and "DQN (N=2)" not in svg
    from maxminq.errors import UsageError

    with pytest.raises(UsageError, match="^labels: expected 2 strings"):
        plot_runs([dqn, maxmin], tmp_path / "bad", labels=["one"])
    with pytest.raises(UsageError, match="^--panels: "):
        plot_runs([dqn], tmp_path / "bad", panels=["returns"])


def test_learn_with_q_star_records_without_record_every() -> None:
    """The reproducer that recorded nothing (``res.biases[-1]`` an IndexError): 100 sweeps
    record at every update by default (100 // 100), the last at the end, where the error and
    Maxmin's bias are recomputed here from the final tables."""
    from maxminq.tabular.finite_mdp import random_mdp

    mdp = random_mdp(4, 2, np.random.default_rng(0))
    q = mdp.q_star()
    res = mdp.learn("maxmin", 2, 1, 100, np.random.default_rng(1), q_star=q)
    assert res.error_updates.tolist() == list(range(1, 101))
    assert res.errors[-1] == pytest.approx(np.max(np.abs(res.q - q[None])))
    g = res.q.min(axis=0).max(axis=1)  # Maxmin, K = 1: max_a min_i Q^i(s, a); no terminal
    assert res.biases[-1] == pytest.approx(np.mean(g - q.max(axis=1)))
    longer = mdp.learn("maxmin", 2, 1, 1000, np.random.default_rng(1), q_star=q)
    assert longer.error_updates[:2].tolist() == [10, 20] and len(longer.errors) == 100
    none = mdp.learn("maxmin", 2, 1, 100, np.random.default_rng(1), q_star=q, record_every=0)
    assert none.errors.size == 0  # asked for no record
    with pytest.raises(ValueError, match="^record_every needs q_star"):
        mdp.learn("maxmin", 2, 1, 100, np.random.default_rng(1), record_every=10)


def test_run_training_overwrite_replaces_a_run_with_other_options(tmp_path) -> None:
    """Re-running a script with other options into its folder: refused by default (naming
    overwrite=True), replaced with it, old checkpoint and figure gone, other files kept."""
    from maxminq.deep import run_training
    from maxminq.errors import UsageError

    out = tmp_path / "run"
    run_training(_tiny(checkpoint_every=100), out, progress=False)
    assert (out / "checkpoint" / "state.pt").exists()
    (out / "curves.png").write_bytes(b"old figure")
    (out / "notes.txt").write_text("mine")
    new = _tiny(lr=5e-4, checkpoint_every=0)  # no checkpoint of its own: the old one must go
    with pytest.raises(UsageError, match=r"other options: .*--lr .*overwrite=True"):
        run_training(new, out, progress=False)
    tables = run_training(new, out, overwrite=True, progress=False)
    assert json.loads((out / "config.json").read_text())["lr"] == 5e-4
    assert not (out / "checkpoint").exists() and not (out / "curves.png").exists()
    assert (out / "notes.txt").read_text() == "mine"
    assert int(tables["metrics"]["step"].max()) == 300
    # Read back as a finished run of these options (resume, the default), not retrained: a
    # retrained run would give equal tables, but write them anew (new files, new inodes).
    files = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in out.glob("*.csv")}
    assert run_training(new, out, progress=False)["runs"].equals(tables["runs"])
    assert {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in out.glob("*.csv")} == files


def test_run_training_overwrite_refuses_a_folder_another_run_trains_in(tmp_path) -> None:
    """The folder's lock held by a run in another thread (as by another process): overwrite
    is a one-line UsageError and deletes nothing."""
    import threading

    from maxminq.deep import run_training
    from maxminq.deep.run_folder import folder_lock
    from maxminq.errors import UsageError

    out = tmp_path / "run"
    out.mkdir()
    (out / "runs.csv").write_text("seed,status,diverged_step\n0,done,-1\n")
    held, release = threading.Event(), threading.Event()

    def other_run() -> None:
        with folder_lock(out):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=other_run)
    holder.start()
    try:
        assert held.wait(30)
        with pytest.raises(UsageError, match="in use by another training run"):
            run_training(_tiny(), out, overwrite=True, progress=False)
        assert (out / "runs.csv").exists()
    finally:
        release.set()
        holder.join()


def test_an_env_id_no_other_process_can_rebuild_is_warned_before_training(tmp_path) -> None:
    """'__main__:EnvId' and a bare id registered by the calling script train, but 'maxminq
    evaluate' could not rebuild them: an EnvIdWarning naming module:EnvId comes before the
    run touches its folder (raised as an error here, so nothing trains); ids another
    process knows are not warned about."""
    import warnings

    import gymnasium as gym
    from gymnasium.envs.classic_control import CartPoleEnv

    from maxminq.deep import run_training
    from maxminq.deep.config import EnvIdWarning, env_id_elsewhere

    if "ApiOnlyHere-v0" not in gym.registry:  # as a user's script registers its own env
        gym.register("ApiOnlyHere-v0", entry_point=CartPoleEnv, max_episode_steps=50)
    for env_id, says in (
        ("__main__:ApiOnlyHere-v0", "names the module run as the main script"),
        ("ApiOnlyHere-v0", "registered in this process only"),
    ):
        out = tmp_path / env_id.replace(":", "_")
        with warnings.catch_warnings():
            warnings.simplefilter("error", EnvIdWarning)
            with pytest.raises(EnvIdWarning, match=says) as caught:
                run_training(_tiny(env_id=env_id), out, progress=False)
        assert "'my_envs:ApiOnlyHere-v0' (module:EnvId)" in str(caught.value)
        assert not out.exists()
    for env_id in ("CartPole-v1", "LunarLander-v3", "maxminq/Catcher-v0", "line_env:Line-v0"):
        assert env_id_elsewhere(env_id) is None, env_id


def test_every_id_maxminq_registers_is_known_to_be_rebuilt_elsewhere() -> None:
    """The ids of ``register_envs`` are listed once (``envs.api.OUR_IDS``): an id missing
    there would be asked of a fresh interpreter (which does not import maxminq) and warned
    about as registered in this process only."""
    import gymnasium as gym

    import maxminq.envs  # noqa: F401 - registers maxminq's ids
    from maxminq.deep.config import env_id_elsewhere
    from maxminq.envs.api import OUR_IDS, known_ids

    assert {k for k in gym.registry if k.startswith("maxminq/")} == set(OUR_IDS)
    assert len(OUR_IDS) == 7 and known_ids()[: len(OUR_IDS) + 1] == [*OUR_IDS, "LunarLander-v3"]
    assert [i for i in OUR_IDS if env_id_elsewhere(i) is not None] == []
