"""Leftovers of session 20's closing note: the report told a claim undecided for want of
seeds from one undecided for want of bias probes by searching its evidence for the words
"though they ran all"; ..."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from test_analysis_tables import deep_results, mc_results

from maxminq.analysis import claims as C
from maxminq.analysis import report as R
from maxminq.analysis import tables as T
from maxminq.cli import main

# ------------------------------------------- 1. why a claim is undecided, as a field


def test_an_undecided_claim_carries_why_set_where_it_was_judged() -> None:
    """Each 'insufficient data' says why in ``Claim.undecided``: 2 seeds per deep setting
    want seeds; 3 seeds of 1,000 steps probed every 1,000 steps ran all their steps without
    a second-half probe (the journey of session 20); Mountain Car at sigma^2 = 0 only is
    outside what the paper claims; a folder without toy runs has no data."""
    few = C.deep_claims(T.classify(deep_results(seeds=2, lrs=(1e-3,))))
    assert few and all(c.status == C.INSUFFICIENT for c in few)
    assert {c.undecided for c in few} == {C.Undecided.FEW_RUNS}

    deep = deep_results(seeds=3, lrs=(1e-3,))
    results = {k: v.assign(bias_every=1000) for k, v in deep.items()}
    results["metrics"] = results["metrics"][results["metrics"]["step"] == 1000]
    claims = C.deep_claims(T.classify(results))
    bias = [c for c in claims if "measured estimation bias" in c.text]
    assert len(bias) == 4
    assert {c.undecided for c in bias} == {C.Undecided.RAN_ALL}
    assert all(c.undecided is None for c in claims if c not in bias)  # decided on 3 seeds

    mc = mc_results(runs=5)
    flat = C.mountain_car_claims(mc[mc["sigma2"] == 0.0])
    assert {c.undecided for c in flat} == {C.Undecided.NOT_COVERED}
    assert {c.undecided for c in C.toy_claims(None)} == {C.Undecided.NO_DATA}
    # a decided claim has no reason; an undecided one without a reason is refused
    assert all(c.undecided is None for c in C.mountain_car_claims(mc))
    with pytest.raises(ValueError, match="insufficient data"):
        C.Claim("Toy MDP", "t", C.INSUFFICIENT, "2 runs (need 3)")


def test_the_report_reads_the_reason_not_the_evidences_words() -> None:
    """The seeds advice follows ``undecided``: words in the evidence neither give it nor
    take it away."""
    ran_all = C.Claim("Deep RL", "t", C.INSUFFICIENT, "0 and 3 runs (need 3)",
                      undecided=C.Undecided.RAN_ALL)  # fmt: skip
    few = C.Claim("Deep RL", "t", C.INSUFFICIENT, "bias n/a", undecided=C.Undecided.FEW_RUNS)
    assert not R._wants_seeds(ran_all)
    assert R._wants_seeds(few)


# ------------------- 2. an option before the sub-command whose value is a sub-command's name


@pytest.mark.parametrize(
    ("argv", "example"),
    [
        # 'toy-mdp' is the folder: the sub-command is mountain-car (was 'experiment toy-mdp
        # --out mountain-car', which writes a toy MDP run into a folder named mountain-car)
        (["--out", "toy-mdp", "mountain-car"], "mountain-car --out toy-mdp"),
        (["--quick", "--out", "toy-mdp", "mountain-car", "--runs", "3"],
         "mountain-car --quick --out toy-mdp --runs 3"),
        (["--out=toy-mdp", "mountain-car"], "mountain-car --out=toy-mdp"),
        # a variadic option's values end nowhere before the sub-command: as before
        (["--sigma2", "1", "10", "mountain-car"], "mountain-car --sigma2 1 10"),
    ],
)  # fmt: skip
def test_the_example_puts_the_sub_command_first_not_an_options_value(
    argv: list[str], example: str, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["experiment", *argv]) == 2
    out = capsys.readouterr()
    option = argv[0].partition("=")[0]
    assert out.err.splitlines() == [
        f"maxminq experiment: error: {option}: put the sub-command first, e.g. maxminq "
        f"experiment {example}"
    ]
    assert out.out == "" and list(tmp_path.iterdir()) == []


# ------------------------------------------------- 3. Mountain Car's summary line counts


def test_mountain_cars_summary_counts_one_of_a_kind_in_the_singular(tmp_path, capsys) -> None:
    """One algorithm, step size, run and episode (20 agent steps): the line said '1
    algorithms x 1 sigma2 x 1 step sizes (per tiling) x 1 runs x 1 episodes'."""
    argv = ["experiment", "mountain-car", "--algorithms", "q_learning", "--runs", "1"]
    argv += ["--episodes", "1", "--max-steps", "20", "--sigma2", "0", "--step-sizes", "0.1"]
    assert main([*argv, "--workers", "1", "--no-progress", "--out", str(tmp_path / "mc")]) == 0
    (line,) = [s for s in capsys.readouterr().out.splitlines() if "agent steps in" in s]
    assert line.startswith(
        "mountain car: 1 algorithm x 1 sigma2 x 1 step size (per tiling) x 1 run x 1 episode "
        "= 20 agent steps in "
    ), line


# ------------------------- 4. 'maxminq envs' on an environment that truncates itself


class _OwnClock(gym.Env):
    """Registered without max_episode_steps, it ends every episode itself after 3 steps
    with truncated=True (a clock of its own)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.zeros(2, np.float32), 0.0, False, self.t >= 3, {}


def _cap_line(env_id: str, capsys) -> str:
    assert main(["envs", "--env", env_id]) == 0
    out = capsys.readouterr().out.splitlines()
    (line,) = [s for s in out if s.startswith("  --max-episode-steps")]
    return line.removeprefix("  --max-episode-steps").strip()


def test_envs_says_no_time_limit_only_where_that_is_known(capsys) -> None:
    """'none (no time limit)' was said of every id without a registered cap: of Freeway,
    which truncates its episodes itself at its timer's end, and of an environment of one's
    own that may do so (only running it would tell: the listing says what is known)."""
    from maxminq.envs.api import OWN_TIME_LIMITS

    gym.register("Leftovers21OwnClock-v0", entry_point=_OwnClock)
    try:
        own = _cap_line("Leftovers21OwnClock-v0", capsys)
    finally:
        del gym.registry["Leftovers21OwnClock-v0"]
    assert own == (
        "none registered (no time limit unless the environment truncates its episodes "
        "itself; --max-episode-steps sets one)"
    )
    assert _cap_line("maxminq/MinAtar-Freeway-v0", capsys) == (
        "none (the game truncates its episodes itself at 2,501 steps: its timer)"
    )
    assert _cap_line("maxminq/MinAtar-Breakout-v0", capsys) == (
        "none (no time limit: episodes end at game over)"
    )
    assert _cap_line("maxminq/Catcher-v0", capsys) == "2,000"
    # Freeway's number is what the game does: 2,501 steps, the last truncated
    env = gym.make("maxminq/MinAtar-Freeway-v0")
    env.reset(seed=0)
    ends = [env.step(1)[2:4] for _ in range(2_501)]
    env.close()
    assert OWN_TIME_LIMITS == {"maxminq/MinAtar-Freeway-v0": 2_501}
    assert ends[-1] == (False, True) and not any(any(e) for e in ends[:-1])


def test_freeway_is_not_said_to_take_the_feature_environments_settings(capsys) -> None:
    """Freeway (not in the paper) is offered with the paper's MinAtar settings, as the
    lines below its header show; the header said 'the paper's feature-environment settings
    with LunarLander-v3's step sizes and N'."""
    assert main(["envs", "--env", "maxminq/MinAtar-Freeway-v0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        "maxminq/MinAtar-Freeway-v0: not in the paper, offered with the paper's MinAtar settings",
        "(the step sizes and N are assumed)",
    ]
    assert "  --network            minatar_cnn" in out
    # the agents' column lines up, generalized-dqn's too
    rows = [s for s in out if " --lr " in s and s.startswith("  ")]
    assert len(rows) == 6 and len({s.index("--lr") for s in rows}) == 1, rows


# ------------------------------------------ 5. report and status on what they cannot read


def test_report_on_an_empty_results_store_says_so_and_writes_nothing(tmp_path, capsys) -> None:
    """A results.sqlite of 0 bytes (a sweep stopped before setting it up, a lost registry)
    read as no store: 'maxminq report' wrote a report of nothing and exited 0, where
    'maxminq status' called the store damaged. With theory tables beside it the report
    held the theory alone, silently without the sweep's runs."""
    (tmp_path / "results.sqlite").write_bytes(b"")
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"maxminq report: error: DIR: {tmp_path / 'results.sqlite'} is empty (a sweep stopped "
        f"before setting it up, or a lost registry): no runs to report; run the sweep into "
        f"{tmp_path} again (the runs whose tables verify are kept, the others run again)"
    ]
    (tmp_path / "theory").mkdir()
    (tmp_path / "theory" / "bias.csv").write_text("M,N,expected_bias\n1,1,0.5\n")
    assert main(["report", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith("; or move it aside to report the theory alone"), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.sqlite", "theory"]


def test_status_names_what_reads_a_theory_folder(tmp_path, capsys) -> None:
    """'maxminq status' on the folder of 'maxminq theory' said 'no results.sqlite here; is
    this a sweep output folder?', naming no command that reads it."""
    (tmp_path / "bias.csv").write_text("M,N,expected_bias\n1,1,0.5\n")
    assert main(["status", str(tmp_path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"maxminq status: error: DIR: {tmp_path} holds the tables of 'maxminq theory', no "
        f"sweep's runs; 'maxminq report {tmp_path}' reads them"
    ]


def test_status_config_guesses_a_name_typed_in_another_case(tmp_path, capsys) -> None:
    """'--config deep_catcher' for deep_Catcher-v0: the list of names, and no guess."""
    from test_report import write_store

    write_store(tmp_path, deep_results(seeds=1, lrs=(1e-3,)))
    assert main(["status", str(tmp_path), "--config", "deep_catcher"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq status: error: --config: no config 'deep_catcher' here (did you mean "
        "deep_Catcher-v0?); known: deep_Catcher-v0, deep_Pixelcopter-v0"
    ]
    assert main(["status", str(tmp_path), "--config", "zzz"]) == 2
    assert "'zzz' here; known: deep_Catcher-v0" in capsys.readouterr().err


# ---------------------------------------------------------- 5. plot --panels, published runs


def test_plot_names_each_unknown_panel_with_a_guess(tmp_path, capsys) -> None:
    """'--panels RETURN,biass' said 'expected names from ..., got 'RETURN,biass'': which
    name was wrong, and what was meant, was left to the reader."""
    from run_folders import finished_run

    run = finished_run(tmp_path / "run", [(0, 1000, -1.0, 5)], steps=1000,
                       train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    assert main(["plot", str(run), "--panels", "RETURN,q,biass,zzz"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq plot: error: --panels: unknown 'RETURN' (did you mean return?), 'biass' (did "
        "you mean bias?), 'zzz'; expected names from return, eval, bias, bias_abs, bias_std, q, "
        "loss, bias_dist"
    ]
    assert sorted(p.name for p in run.iterdir() if p.suffix in (".png", ".svg")) == []


def test_report_counts_one_published_run_in_the_singular(tmp_path, capsys) -> None:
    """'published (not re-run, no claims): CartPole-v1: 1 runs'."""
    from run_folders import finished_run

    finished_run(tmp_path / "pub" / "cart" / "dqn", [(0, 1000, -1.0, 5)], steps=1000,
                 train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    theory = tmp_path / "theory"
    theory.mkdir()
    (theory / "bias.csv").write_text("M,N,expected_bias\n1,1,0.5\n1,2,0.2\n")
    argv = ["report", str(theory), "--reps", "100", "--published", str(tmp_path / "pub")]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  published (not re-run, no claims): CartPole-v1: 1 run" in out, out


def test_a_sweep_folder_without_its_store_is_named_so(tmp_path, capsys) -> None:
    """A sweep's folder whose results.sqlite was lost or moved (its tables/<run_id>/ with
    their manifests left): report and status called it a folder of 'maxminq train' runs
    and offered --published; with theory/ beside it the report held the theory alone."""
    folder = tmp_path / "sweep"
    run = folder / "tables" / "deep-0123"
    run.mkdir(parents=True)
    (run / "manifest.json").write_text('{"run_id": "deep-0123", "kind": "deep"}')
    (run / "runs.csv").write_text("seed,status,diverged_step\n0,done,-1\n")
    why = (
        f"DIR: {folder} holds a sweep's run tables (tables/) but no results.sqlite (lost or "
        "moved): {again}; it takes the runs whose tables verify as done and runs only the others"
    )
    again = f"run the same sweep (or 'maxminq reproduce') into {folder} again"
    for command in ("report", "status"):
        assert main([command, str(folder)]) == 2
        assert capsys.readouterr().err.splitlines() == [
            f"maxminq {command}: error: " + why.format(again=again)
        ]
    (folder / "theory").mkdir()
    (folder / "theory" / "bias.csv").write_text("M,N,expected_bias\n1,1,0.5\n1,2,0.2\n")
    (folder / "reproduce.json").write_text('{"command": "maxminq reproduce --out sweep"}')
    assert main(["report", str(folder)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq report: error: " + why.format(again="run 'maxminq reproduce --out sweep' again")
    ]
    assert not (folder / "report.md").exists()


def test_envs_refuses_an_environment_train_refuses(capsys) -> None:
    """'maxminq envs --env Pendulum-v1' (continuous actions) listed 'what maxminq train
    --env Pendulum-v1 uses for an option not given', a command that refuses it."""
    assert main(["envs", "--env", "Pendulum-v1"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.splitlines() == [
        "maxminq envs: error: --env: 'maxminq train --env Pendulum-v1' refuses it: "
        "Pendulum-v1 needs a discrete action space, has Box(-2.0, 2.0, (1,), float32); "
        "discretize it with gymnasium.wrappers.DiscretizeAction(env, bins) in an entry point "
        "of yours that returns the wrapped environment"
    ]
    assert main(["envs", "--env", "CartPole-v1"]) == 0  # discrete: listed as before
    assert capsys.readouterr().out.startswith("CartPole-v1: not a paper environment")


def test_report_refuses_outputs_it_cannot_write_before_any_work(tmp_path, capsys) -> None:
    """figures/ a file: every figure 'not drawn' in the report, exit 0; report.md a folder:
    'report.md: Is a directory' after the figures and tables were written."""
    theory = tmp_path / "theory"
    theory.mkdir()
    (theory / "bias.csv").write_text("M,N,expected_bias\n1,1,0.5\n1,2,0.2\n")
    (theory / "figures").write_text("")
    assert main(["report", str(theory), "--reps", "100"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"maxminq report: error: DIR: {theory / 'figures'} exists and is not a folder"
    ]
    (theory / "figures").unlink()
    (theory / "report.md").mkdir()
    assert main(["report", str(theory), "--reps", "100"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"maxminq report: error: DIR: {theory / 'report.md'} is a folder; the report writes a "
        "file there"
    ]
    assert sorted(p.name for p in theory.iterdir()) == ["bias.csv", "report.md"]


def test_a_slip_in_a_config_name_gets_a_guess(tmp_path, monkeypatch, capsys) -> None:
    """'maxminq sweep catchr' and 'sweep configs/my_gird.yaml' said only 'no such file';
    'reproduce --only catchr' listed every name without saying which was meant."""
    own = tmp_path / "own"
    (own / "configs").mkdir(parents=True)
    (own / "configs" / "my_grid.yaml").write_text("name: my_grid\n")
    monkeypatch.chdir(own)
    assert main(["sweep", "configs/my_gird.yaml", "--dry-run"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq sweep: error: configs/my_gird.yaml: no such file (did you mean "
        "configs/my_grid.yaml?)"
    ]
    bare = tmp_path / "bare"  # no ./configs: the shipped configs are the ones meant
    bare.mkdir()
    monkeypatch.chdir(bare)
    assert main(["sweep", "catchr", "--dry-run"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq sweep: error: catchr: no such file (did you mean the shipped config 'catcher'? "
        "'maxminq reproduce --only catcher' runs it)"
    ]
    assert main(["reproduce", "--only", "catchr,zzz", "--out", str(bare / "out")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(
        "maxminq reproduce: error: --only: unknown name(s) catchr (did you mean catcher?), zzz; "
        "expected comma-separated names from: asterix_varying_n, catcher, "
    ), line
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["bare", "configs", "my_grid.yaml", "own"]
