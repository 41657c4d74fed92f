"""Noisy Mountain Car: dynamics and tile coder against hand-derived values, the vectorised
agent against the plain single-run loop, run independence and bad input."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import sweep_kinds as helpers
from reference_loops import mountain_car_reference

from maxminq.errors import UsageError
from maxminq.linear.mountain_car import (
    N_FEATURES,
    mountain_car_step,
    run_mountain_car,
    run_mountain_car_grid,
)
from maxminq.linear.tiles import TileCoder

CODER = TileCoder((-1.2, -0.07), (0.5, 0.07))


def test_step_from_rest_with_forward_throttle() -> None:
    # v' = 0.001 - 0.0025 cos(-1.5) = 0.001 - 0.0025 * 0.0707372016677029
    x, v, term = mountain_car_step(-0.5, 0.0, 2)
    assert v == pytest.approx(0.000823156995830743, abs=1e-15)
    assert x == pytest.approx(-0.499176843004169257, abs=1e-15)
    assert not term


def test_left_wall_stops_the_car() -> None:
    # v' = -0.02 - 0.001 - 0.0025 cos(-3.57) = -0.018726, x' = -1.208726 < -1.2
    assert mountain_car_step(-1.19, -0.02, 0) == (-1.2, 0.0, False)


def test_velocity_is_clipped() -> None:
    # cos(3 * (-pi/3)) = -1: v' = 0.0695 + 0.001 + 0.0025 = 0.073 -> 0.07
    x, v, term = mountain_car_step(-math.pi / 3, 0.0695, 2)
    assert v == 0.07 and x == pytest.approx(-0.9771975511965976, abs=1e-15) and not term


def test_goal_terminates() -> None:
    # cos(1.47) = sin(pi/2 - 1.47) = sin(0.1007963) ~ 0.1007963 - 0.1007963^3 / 6 = 0.1006256
    # v' = 0.02 - 0.0025 * 0.1006256 = 0.0197484, x' = 0.5097 >= 0.5: terminal at x = 0.5
    x, v, term = mountain_car_step(0.49, 0.02, 1)
    assert term and x == 0.5 and v == pytest.approx(0.0197484, abs=2e-7)


def test_tile_indices_hand_derived() -> None:
    # 8 tilings of 11 x 11 cells; tiling t shifted by t/8 (x) and 3t/8 (v) tile widths.
    assert CODER.n_features == N_FEATURES == 968
    assert CODER(-1.2, -0.07).tolist() == [0, 121, 242, 364, 485, 606, 728, 849]
    assert CODER(0.5, 0.07).tolist() == [96, 217, 338, 460, 581, 702, 824, 945]
    # scaled point (0.3, 0.3) tiles: ix = floor(0.3 + t/8), iy = floor(0.3 + 3t/8)
    x, v = -1.2 + 0.3 * 1.7 / 8, -0.07 + 0.3 * 0.14 / 8
    assert CODER(x, v).tolist() == [0, 121, 243, 364, 485, 607, 739, 860]


def test_tile_coder_properties() -> None:
    rng = np.random.default_rng(0)
    for x, v in zip(rng.uniform(-1.2, 0.5, 200), rng.uniform(-0.07, 0.07, 200), strict=True):
        idx = CODER(x, v)
        # one active tile per tiling, inside that tiling's block of 121 features
        assert np.array_equal(idx // 121, np.arange(8))
        # states one tile width apart in position share no tile; a 1/64 nudge shares most
        far = CODER(min(x + 1.7 / 8 + 1e-9, 0.5), v) if x + 1.7 / 8 < 0.5 else None
        if far is not None:
            assert not set(idx) & set(far)
        near = CODER(x + 1.7 / 64 * 0.999, v)
        assert len(set(idx) & set(near)) >= 7


@pytest.mark.parametrize(
    ("algorithm", "n", "episodes", "max_steps", "runs", "per"),
    [
        ("q_learning", 1, 3, 400, 2, "tiling"),
        ("double_q", 2, 3, 400, 2, "tiling"),
        ("maxmin", 3, 3, 400, 2, "total"),
        ("maxmin", 3, 3, 400, 1, "tiling"),
        ("averaged", 3, 2, 150, 1, "tiling"),
        ("ensemble", 3, 2, 200, 1, "tiling"),
        ("historical_best", 3, 2, 150, 1, "total"),
        ("q_learning", 1, 2, 5000, 1, "total"),  # the goal is reached: terminal replayed
    ],
)
def test_same_weights_as_single_run_reference_loop(
    algorithm: str, n: int, episodes: int, max_steps: int, runs: int, per: str
) -> None:
    kw = {"algorithm": algorithm, "n": n, "episodes": episodes, "seed": 3, "max_steps": max_steps,
          "step_size_per": per}  # fmt: skip
    step = 0.01 if per == "tiling" else 0.08
    df, w, cur = run_mountain_car_grid(
        sigma2=[10.0], step_sizes=[step], runs=runs, return_weights=True, **kw
    )
    for run in range(runs):
        steps, tables = mountain_car_reference(sigma2=10.0, step_size=step, run=run, **kw)
        assert df[df.run == run].steps.tolist() == steps
        for m, table in enumerate(tables):
            slot = (cur[run] - m) % n if algorithm in ("averaged", "historical_best") else m
            np.testing.assert_allclose(w[run, slot], np.ravel(table), rtol=0, atol=1e-10)
    if max_steps == 5000:  # the goal ended episode 1: episode 2's updates replay that
        assert steps[0] < 5000 and steps[1] > 100  # terminal transition (buffer of 100)


@pytest.mark.parametrize(("algorithm", "n", "u"), [("maxmin", 4, 3), ("ensemble", 2, 2)])
def test_update_members_follow_the_reference_loop_over_the_subset(algorithm, n, u) -> None:
    """update_members u > 1 (Algorithm 1's subset S): u distinct estimators per step, each on
    its own mini-batch, in turn; the same weights as the plain loop, other than with u = 1."""
    kw = {"algorithm": algorithm, "n": n, "episodes": 2, "seed": 4, "max_steps": 400}
    grid = {"sigma2": [10.0], "step_sizes": [0.04], "runs": 2, "return_weights": True}
    df, w, _ = run_mountain_car_grid(update_members=u, **grid, **kw)
    for run in range(2):
        steps, tables = mountain_car_reference(
            sigma2=10.0, step_size=0.04, run=run, update_members=u, **kw
        )
        assert df[df.run == run].steps.tolist() == steps
        for m, table in enumerate(tables):
            np.testing.assert_allclose(w[run, m], np.ravel(table), rtol=0, atol=1e-10)
    _, w1, _ = run_mountain_car_grid(**grid, **kw)
    assert not np.array_equal(w, w1)
    with pytest.raises(UsageError, match="update_members: q_learning updates one table"):
        run_mountain_car_grid(algorithm="q_learning", n=1, sigma2=[0.0], step_sizes=[0.01],
                              runs=1, episodes=1, seed=0, update_members=2)  # fmt: skip


@pytest.mark.parametrize(("algorithm", "n"), [("q_learning", 1), ("maxmin", 2), ("averaged", 2)])
def test_reference_with_other_gamma_epsilon_buffer_batch_and_init(algorithm: str, n: int) -> None:
    """The agent parameters the API takes besides the paper's values reach the kernel as the
    plain loop uses them (optimistic weights: 8 x 0.5 = 4 per action at the start)."""
    kw = {"algorithm": algorithm, "n": n, "episodes": 3, "seed": 6, "max_steps": 300,
          "gamma": 0.95, "epsilon": 0.25, "buffer_size": 9, "batch_size": 3, "init_weight": 0.5,
          "update_every": 2}  # fmt: skip
    df, w, cur = run_mountain_car_grid(
        sigma2=[4.0], step_sizes=[0.03], runs=2, return_weights=True, **kw
    )
    for run in range(2):
        steps, tables = mountain_car_reference(sigma2=4.0, step_size=0.03, run=run, **kw)
        assert df[df.run == run].steps.tolist() == steps
        for m, table in enumerate(tables):
            slot = (cur[run] - m) % n if algorithm == "averaged" else m
            np.testing.assert_allclose(w[run, slot], np.ravel(table), rtol=0, atol=1e-10)


def test_setting_results_do_not_depend_on_batch() -> None:
    kw = {"algorithm": "maxmin", "n": 2, "episodes": 3, "seed": 9, "max_steps": 300}
    grid = run_mountain_car_grid(sigma2=[0.0, 10.0], step_sizes=[0.02, 0.08], runs=3, **kw)
    one = run_mountain_car(sigma2=10.0, step_size=0.02, runs=2, **kw)
    sel = grid[(grid.sigma2 == 10.0) & (grid.step_size == 0.02) & (grid.run < 2)]
    cols = ["algorithm", "n", "sigma2", "step_size", "run", "episode", "steps"]
    assert list(one.columns) == cols
    np.testing.assert_array_equal(sel[cols].to_numpy(), one[cols].to_numpy())


def test_reward_noise_breaks_q_learning_but_not_maxmin() -> None:
    """Sec. 5.1 and Appendix C.2 at reduced scale (8 runs x 60 episodes, one step size, 0.02):
    without noise both learn (the first episodes wander, the last take the 150-250 steps of
    Sutton & Barto's tile-coded agents); with rewards ~ N(-1, 50) Q-learning's runs end at the
    5,000-step cap while Maxmin (N = 2) still reaches the goal in every run. At seeds 0-7
    Q-learning's last episodes were all capped and Maxmin's mean stayed below 360 steps."""
    last: dict[tuple[str, float], np.ndarray] = {}
    for algorithm, n in (("q_learning", 1), ("maxmin", 2)):
        df = run_mountain_car_grid(algorithm=algorithm, n=n, sigma2=[0.0, 50.0],
                                   step_sizes=[0.02], runs=8, episodes=60, seed=0)  # fmt: skip
        for sigma2, rows in df[df.episode > 55].groupby("sigma2"):
            last[algorithm, sigma2] = rows.steps.to_numpy()
        first = df[(df.sigma2 == 0.0) & (df.episode <= 3)].steps
        assert first.mean() > 600, algorithm
    assert last["q_learning", 0.0].mean() < 300 and last["maxmin", 0.0].mean() < 300
    assert (last["q_learning", 50.0] == 5000).mean() > 0.9
    assert last["maxmin", 50.0].max() < 5000 and last["maxmin", 50.0].mean() < 600


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"runs": -3}, "^runs:"),
        ({"algorithm": "dqn"}, "^algorithm:"),
        ({"sigma2": -1.0}, "^sigma2:"),
        ({"step_sizes": []}, "^step_sizes:"),
        ({"step_sizes": [0.0]}, "^step_sizes:"),
        ({"step_size_per": "weight"}, "^step_size_per:"),
        ({"init_weight": float("nan")}, "^init_weight: expected a finite number, got nan"),
        ({"init_weight": "a"}, "^init_weight:"),  # was float()'s bare ValueError
        ({"run_offset": -3}, "^run_offset:"),  # was SeedSequence's bare ValueError
        # a repeated value ran the setting twice: duplicate rows (twice the runs in its SE)
        ({"sigma2": [1, 1.0]}, "^sigma2: 1 is given twice"),
        ({"step_sizes": [0.01, 0.02, 0.01]}, "^step_sizes: 0.01 is given twice"),
    ],
)
def test_bad_input_raises_usage_error(kwargs: dict, option: str) -> None:
    args = {"algorithm": "maxmin", "n": 2, "sigma2": [1.0], "step_sizes": [0.01]}
    with pytest.raises(UsageError, match=option):
        run_mountain_car_grid(**{**args, **kwargs, "runs": kwargs.get("runs", 2)},
                              episodes=2, seed=0)  # fmt: skip


def test_cli_writes_csv_and_figures(tmp_path) -> None:
    from maxminq.cli import main

    out = tmp_path / "mc"
    status = main(
        ["experiment", "mountain-car", "--runs", "2", "--episodes", "3", "--max-steps", "200",
         "--sigma2", "0", "10", "--step-sizes", "0.08", "--algorithms", "q_learning", "maxmin:2",
         "--workers", "1", "--no-progress", "--out", str(out)]
    )  # fmt: skip
    assert status == 0
    import pandas as pd

    df = pd.read_csv(out / "mountain_car.csv")
    cols = ["algorithm", "n", "sigma2", "step_size", "step_size_per", "run", "episode", "steps"]
    assert list(df.columns) == cols and set(df.step_size_per) == {"tiling"}
    assert len(df) == 2 * 2 * 2 * 3 and df.steps.between(1, 200).all()
    for name in ("fig3a_mountain_car_sensitivity", "fig3b_mountain_car_curve",
                 "figC2_mountain_car_curves"):  # fmt: skip
        assert (out / f"{name}.png").stat().st_size > 1000


def test_cli_agent_settings_reach_the_runs(tmp_path) -> None:
    """--epsilon, --gamma and --buffer-size give the runs of run_mountain_car_grid with them."""
    import pandas as pd

    from maxminq.cli import main

    out = tmp_path / "mc"
    assert main(
        ["experiment", "mountain-car", "--runs", "2", "--episodes", "2", "--max-steps", "4000",
         "--sigma2", "1", "--step-sizes", "0.04", "--algorithms", "maxmin:2", "--workers", "1",
         "--no-progress", "--out", str(out), "--epsilon", "0.3", "--gamma", "0.95",
         "--buffer-size", "20"]
    ) == 0  # fmt: skip
    got = pd.read_csv(out / "mountain_car.csv")
    want = run_mountain_car_grid(algorithm="maxmin", n=2, sigma2=[1.0], step_sizes=[0.04],
                                 runs=2, episodes=2, seed=0, max_steps=4000, epsilon=0.3,
                                 gamma=0.95, buffer_size=20)  # fmt: skip
    assert got.steps.tolist() == want.steps.tolist()
    default = run_mountain_car_grid(algorithm="maxmin", n=2, sigma2=[1.0], step_sizes=[0.04],
                                    runs=2, episodes=2, seed=0, max_steps=4000)  # fmt: skip
    assert got.steps.tolist() != default.steps.tolist() and got.steps.max() < 4000
    import json

    saved = json.loads((out / "settings.json").read_text())
    assert saved["experiment"] == "mountain-car" and saved["sigma2"] == [1.0]
    assert (saved["epsilon"], saved["gamma"], saved["buffer_size"]) == (0.3, 0.95, 20)
    assert (saved["max_steps"], saved["step_size_per"], saved["step_sizes"]) == (
        4000,
        "tiling",
        [0.04],
    )


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["--runs", "-5"], "--runs"),
        (["--algorithms", "maxmin", "sarsa"], "--algorithms"),
        (["--sigma2", "1", "-2"], "--sigma2"),
        (["--step-sizes"], "--step-sizes"),
        (["--step-size-per", "feature"], "--step-size-per"),
        (["--algorithms", "double_q:3"], "--algorithms"),
        (["--epsilon", "-0.1"], "--epsilon"),
        (["--gamma", "2"], "--gamma"),
        (["--buffer-size", "x"], "--buffer-size"),
    ],
)
def test_cli_bad_input_one_line_exit_2_no_csv(tmp_path, capsys, argv, option) -> None:
    from maxminq.cli import main

    out = tmp_path / "bad"
    status = main(["experiment", "mountain-car", "--out", str(out), "--no-progress", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and option in err[0]
    assert not out.exists()


def test_total_step_size_is_shared_by_the_eight_tilings() -> None:
    # 0.08 in total moves each of the 8 active weights by 0.01 (0.08 / 8 == 0.01 in binary)
    kw = {"algorithm": "maxmin", "n": 2, "sigma2": [10.0], "runs": 2, "episodes": 2, "seed": 4,
          "max_steps": 300, "return_weights": True}  # fmt: skip
    total, w_total, _ = run_mountain_car_grid(step_sizes=[0.08], step_size_per="total", **kw)
    tiling, w_tiling, _ = run_mountain_car_grid(step_sizes=[0.01], **kw)
    assert total.steps.tolist() == tiling.steps.tolist()
    np.testing.assert_array_equal(w_total, w_tiling)
    bigger, w_big, _ = run_mountain_car_grid(step_sizes=[0.08], **kw)
    assert not np.array_equal(w_big, w_tiling)


def test_numpy_operator_path_equals_compiled_path() -> None:
    # op_kwargs send the operator through maxminq.operators (all lanes in lockstep); the
    # defaults use its compiled twin inside the per-lane kernel: same runs, same weights.
    kw = {"algorithm": "weighted_double_q", "n": 2, "sigma2": [10.0], "step_sizes": [0.02],
          "runs": 3, "episodes": 3, "seed": 5, "max_steps": 400}  # fmt: skip
    kw["return_weights"] = True
    fast, w_fast, _ = run_mountain_car_grid(**kw)
    numpy_path, w_numpy, _ = run_mountain_car_grid(op_kwargs={"c": 1.0}, **kw)
    assert fast.steps.tolist() == numpy_path.steps.tolist()
    np.testing.assert_array_equal(w_fast, w_numpy)
    other, _, _ = run_mountain_car_grid(op_kwargs={"c": 50.0}, **kw)  # c matters
    assert other.steps.tolist() != fast.steps.tolist()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("target", ["group", "parent", "group-at-start"])
def test_ctrl_c_stops_workers_promptly(tmp_path, target: str) -> None:
    # Each task (one step size) is 20 runs of 100,000 episodes, which Q-learning at
    # sigma^2 = 50 and these step sizes ends at the 5,000-step cap (Appendix C.2): about 10^10
    # steps. An interrupt that waited for the running (or all) tasks, or a hung pool, cannot
    # end within the 60 s hang guard, so no tight wall-clock bound (a loaded machine) is needed.
    # "group" is a terminal's Ctrl-C (the workers get SIGINT too); "parent" is kill -INT;
    # "group-at-start" is a Ctrl-C while the workers start Python and import numpy and pandas
    # (seconds on a loaded machine, so "group" can meet it too): it reaches the workers as
    # soon as they exist, and the whole group a second later, as when a busy parent takes
    # its SIGINT late. A worker that turned it into a KeyboardInterrupt printed a traceback
    # (under load, 4 "group" Ctrl-Cs in 10 at that moment did).
    out = tmp_path / "mc"
    cmd = [sys.executable, "-m", "maxminq.cli", "experiment", "mountain-car", "--runs", "20",
           "--episodes", "100000", "--sigma2", "50", "--algorithms", "q_learning",
           "--step-sizes", "0.02", "0.04", "0.08", "--workers", "2", "--no-progress",
           "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        workers = helpers.wait_for_workers(proc)
        assert len(workers) == 2, "the workers never started"
        if target == "group-at-start":
            for worker in workers:
                os.kill(worker, signal.SIGINT)
            time.sleep(1.0)
        else:
            time.sleep(2.0)  # let them import and get into their first tasks
        assert proc.poll() is None
        if target.startswith("group"):
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)  # raises TimeoutExpired: the test fails
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["maxminq experiment: interrupted"], err
    time.sleep(0.2)
    assert not [w for w in workers if helpers.alive(w)]
    assert not (out / "mountain_car.csv").exists() and not list(tmp_path.rglob("*.png"))


def test_bias_corrected_sigma_matches_reference_loop() -> None:
    kw = {"algorithm": "bias_corrected", "n": 1, "episodes": 2, "seed": 3, "max_steps": 300}
    grid = {"sigma2": [10.0], "step_sizes": [0.02], "runs": 1, "return_weights": True}
    df, w, _ = run_mountain_car_grid(op_kwargs={"sigma": 2.0}, **grid, **kw)
    steps, tables = mountain_car_reference(sigma2=10.0, step_size=0.02, run=0, sigma=2.0, **kw)
    assert df.steps.tolist() == steps
    np.testing.assert_allclose(w[0, 0], np.ravel(tables[0]), rtol=0, atol=1e-9)
    _, w_q, _ = run_mountain_car_grid(**grid, **{**kw, "algorithm": "q_learning"})
    assert np.abs(w_q - w).max() > 0.1  # sigma is used


@pytest.mark.parametrize(
    ("op_kwargs", "words"),
    [(None, "needs sigma"), ({"sigma": -1.0}, ">= 0"), ({"c": 1.0}, "takes sigma")],
)
def test_bias_corrected_needs_a_valid_sigma(op_kwargs, words) -> None:
    with pytest.raises(UsageError, match=words):
        run_mountain_car(algorithm="bias_corrected", n=1, sigma2=0.0, step_size=0.02, runs=1,
                         episodes=1, seed=0, op_kwargs=op_kwargs)  # fmt: skip


def test_cli_records_step_size_per_and_fig3b_sigma2(tmp_path, capsys) -> None:
    import pandas as pd

    from maxminq.analysis import classic_plots as cp
    from maxminq.analysis import tables as T
    from maxminq.cli import main
    from maxminq.commands.experiment import fig3b_figure

    out = tmp_path / "mc"
    status = main(
        ["experiment", "mountain-car", "--runs", "2", "--episodes", "3", "--max-steps", "150",
         "--sigma2", "0", "5", "--step-sizes", "0.08", "0.02", "--step-size-per", "total",
         "--algorithms", "q_learning", "--workers", "1", "--no-progress", "--out", str(out)]
    )  # fmt: skip
    assert status == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if "fig3b" in line]
    assert notes == ["mountain car: fig3b shows sigma^2 = 5 (the paper's 10 is not among --sigma2)"]
    df = pd.read_csv(out / "mountain_car.csv")
    assert set(df.step_size_per) == {"total"} and len(df) == 2 * 2 * 2 * 3
    # the readers of this CSV: the step-size table, the figures and the report's summary
    best = cp.mc_best_step_sizes(df)
    assert len(best) == 4 and best.best.sum() == 2
    fig = cp.mc_sensitivity_figure(df)
    assert fig.axes[0].get_title().endswith("episodes\nstep sizes per total")
    fig, note = fig3b_figure(df, [0.0, 5.0])
    assert fig._suptitle.get_text() == "Fig. 3(b) at σ² = 5, not 10, step sizes per total"
    assert fig.axes[0].get_title() == "reward ~ N(-1, 5)" and "sigma^2 = 5" in note
    fig, note = fig3b_figure(df.assign(sigma2=df.sigma2 * 2), [0.0, 10.0])
    assert note is None and fig._suptitle.get_text().startswith("Fig. 3(b): σ² = 10,")
    tables = T.classify({"mountain_car": df})
    summary = T.mountain_car_summary(tables.mountain_car, reps=50)
    assert len(summary) == 4
    import matplotlib.pyplot as plt

    plt.close("all")


def test_best_step_sizes_keep_operator_parameters_apart() -> None:
    """Stored sweeps carry ``op_kwargs``: two sigmas of bias_corrected are two settings, each
    with its own best step size (pooled, the mean of both would pick one for both)."""
    import pandas as pd

    from maxminq.analysis import classic_plots as cp

    steps = {('{"sigma":0.1}', 0.02): 100, ('{"sigma":0.1}', 0.08): 300,
             ('{"sigma":0.5}', 0.02): 400, ('{"sigma":0.5}', 0.08): 150}  # fmt: skip
    df = pd.DataFrame(
        [dict(algorithm="bias_corrected", n=1, op_kwargs=kw, sigma2=10.0, step_size=a,
              run_id=kw + str(a), run=r, episode=e, steps=s)
         for (kw, a), s in steps.items() for r in range(3) for e in (1, 2)]
    )  # fmt: skip
    best = cp.mc_best_step_sizes(df)
    picked = best[best.best].set_index("op_params")
    assert picked.step_size.to_dict() == {"sigma=0.1": 0.02, "sigma=0.5": 0.08}
    assert picked["mean"].to_dict() == {"sigma=0.1": 100.0, "sigma=0.5": 150.0}
    fig = cp.mc_learning_curve_figure(df)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == [
        "Bias-corrected Q (sigma=0.1), step 0.02",
        "Bias-corrected Q (sigma=0.5), step 0.08",
    ]
    import matplotlib.pyplot as plt

    plt.close("all")


def test_cli_appendix_figure_names_runs_and_step_size_reading(tmp_path, monkeypatch) -> None:
    """figC2 had no title: nothing on it said how its step sizes are read (tiling / total)."""
    from maxminq.analysis import classic_plots as cp
    from maxminq.cli import main

    titles: dict[str, str] = {}
    original = cp.save_figure

    def record(fig, path, dpi=130):  # type: ignore[no-untyped-def]
        titles[Path(path).name] = fig._suptitle.get_text() if fig._suptitle else ""
        return original(fig, path, dpi)

    monkeypatch.setattr(cp, "save_figure", record)
    status = main(
        ["experiment", "mountain-car", "--runs", "2", "--episodes", "3", "--max-steps", "100",
         "--sigma2", "0", "--step-sizes", "0.08", "--step-size-per", "total", "--algorithms",
         "q_learning", "--workers", "1", "--no-progress", "--out", str(tmp_path / "mc")]
    )  # fmt: skip
    assert status == 0
    assert titles["figC2_mountain_car_curves.png"] == (
        "Appendix C.2: noisy Mountain Car, 2 runs x 3 episodes, at most 100 steps per "
        "episode, step sizes per total"
    )


def test_step_size_table_counts_runs_at_the_cap_and_names_the_reading(tmp_path) -> None:
    """The paper's Mountain Car claim is about runs that never reach the goal within the
    5,000-step cap: the step-size table gives that fraction (``capped``) per setting, and
    says how its step sizes are read; the figures name the cap (a curve at the cap is one
    that fails)."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from maxminq.analysis import classic_plots as cp
    from maxminq.cli import main
    from maxminq.commands.experiment import fig3b_figure

    last = {0.02: [300, 300, 120, 80], 0.08: [90, 300, 100, 110]}  # last-episode steps
    df = pd.DataFrame(
        [dict(algorithm="q_learning", n=1, sigma2=50.0, step_size=a, step_size_per="total",
              run=r, episode=e, steps=300 if e == 1 else s[r])
         for a, s in last.items() for r in range(4) for e in (1, 2)]
    )  # fmt: skip
    table = cp.mc_best_step_sizes(df, max_steps=300).set_index("step_size")
    assert table.capped.to_dict() == {0.02: 0.5, 0.08: 0.25}
    assert table["mean"].to_dict() == {0.02: 200.0, 0.08: 150.0} and table.best[0.08]
    assert set(table.step_size_per) == {"total"}
    assert "capped" not in cp.mc_best_step_sizes(df).columns  # no cap given: no column
    fig = cp.mc_sensitivity_figure(df, max_steps=300)
    title = fig.axes[0].get_title()
    assert title == (
        "Mountain Car, 4 runs, 2 episodes\nat most 300 steps per episode, step sizes per total"
    )
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["50"]  # sigma^2 run
    plt.close(fig)
    fig, _ = fig3b_figure(df, [50.0], 300)
    assert fig._suptitle.get_text() == (
        "Fig. 3(b) at σ² = 50, not 10, at most 300 steps per episode, step sizes per total"
    )
    plt.close(fig)

    out = tmp_path / "mc"
    argv = ["experiment", "mountain-car", "--runs", "3", "--episodes", "2", "--max-steps", "120",
            "--sigma2", "50", "--step-sizes", "0.08", "--algorithms", "q_learning",
            "--workers", "1", "--no-progress", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    runs = pd.read_csv(out / "mountain_car.csv")
    table = pd.read_csv(out / "mountain_car_step_sizes.csv")
    final = runs[runs.episode == 2].steps
    assert list(table.columns) == ["algorithm", "n", "step_size_per", "sigma2", "step_size",
                                   "mean", "se", "capped", "best"]  # fmt: skip
    assert table.capped.iloc[0] == pytest.approx((final == 120).mean())
    assert table.step_size_per.iloc[0] == "tiling"
