"""README and docs/ blocks that quote the program exactly: what ``maxminq`` prints, the
options and files it names. Each test reads the page where its text lives (README.md or a
docs/ page, through ``docs_text``) and compares it with the running code, so the user guide
cannot drift from the program unnoticed."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from docs_text import (
    page,  # noqa: E402
    section,
)
from helpers import REPO

from maxminq.cli import main  # noqa: E402

ROOT = REPO


# Section title -> the page that holds it ("README" or docs/NAME.md).
PAGE_OF = {
    "Quick start": "README",
    "Layout": "README",
    "Operators": "operators-and-theory",
    "Theory": "operators-and-theory",
    "Environments": "environments",
    "Deep agents": "deep-agents",
    "Sweeps and results store": "sweeps",
    "Report and reproduction": "report",
}


def _section(title: str) -> str:
    """The text under heading ``title`` on its page, up to the next heading of its level."""
    return section(PAGE_OF[title], title)


def _blocks(text: str, lang: str = "") -> list[str]:
    """The fenced code blocks of ``text`` opened with ```` ```lang ````."""
    return [b.split("```", 1)[0] for b in text.split(f"```{lang}\n")[1:]]


def _options(command: str, capsys) -> set[str]:
    """The ``--options`` that ``maxminq COMMAND --help`` lists."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return set(re.findall(r"--[a-z][a-z0-9-]*", capsys.readouterr().out))


CONFIG_ERRORS = {
    # docs/sweeps.md's example error -> a config that makes it (a variants list; the rest fixed)
    "variants[2].n": "  - {algorithm: q_learning, n: 1}\n  - {algorithm: double_q, n: 2}\n"
    "  - {algorithm: maxmin, n: 0}\n",
    "variants[0].lr": "  - {agent: dqn, lr: abc}\n",
    "variants[0].steps": "  - {agent: dqn, steps: 0}\n",
}


def _normal_min_variance(n: int) -> float:
    """Var[min of n standard normals], by quadrature of its density."""
    from scipy import integrate, stats

    def moment(k: int) -> float:
        def f(x: float) -> float:
            return x**k * n * stats.norm.pdf(x) * stats.norm.sf(x) ** (n - 1)

        return integrate.quad(f, -np.inf, np.inf)[0]

    return moment(2) - moment(1) ** 2


# Published run -> the decimals of its measured bias over the second half, which
# docs/deep-results.md quotes as "mean +- SE" over seeds.
PUBLISHED_BIAS = {
    "catcher/dqn": 2,
    "catcher/maxmin-dqn": 2,
    "minatar-asterix/dqn": 2,
    "minatar-asterix/maxmin-dqn": 2,
    "minatar-breakout/dqn": 1,
    "minatar-breakout/maxmin-dqn": 2,
    "minatar-space-invaders/dqn": 1,
    "minatar-space-invaders/maxmin-dqn": 2,
    "minatar-seaquest/dqn": 2,
    "minatar-seaquest/maxmin-dqn": 3,
    "pixelcopter/dqn": 1,
    "pixelcopter/maxmin-dqn": 1,
    "pixelcopter/ddqn": 1,
    "pixelcopter/averaged-dqn": 1,
    "pixelcopter/maxmin-dqn-n2": 1,
    "pixelcopter/maxmin-dqn-n4": 1,
    "pixelcopter/maxmin-dqn-n8": 1,
    "lunarlander/dqn": 1,
    "lunarlander/maxmin-dqn": 1,
    "lunarlander/ddqn": 1,
    "lunarlander/averaged-dqn": 1,
}


def _second_half_bias(run: Path) -> tuple[float, float]:
    """Mean +- SE over seeds of each seed's probes pooled (weighted by bias_n) over the
    metrics intervals that start at or after steps // 2: the definition in
    docs/deep-agents.md, computed here from metrics.csv without maxminq."""
    import json

    import pandas as pd

    metrics = pd.read_csv(run / "metrics.csv")
    middle = json.loads((run / "config.json").read_text())["steps"] // 2
    per_seed = []
    for _, m in metrics.sort_values(["seed", "step"]).groupby("seed"):
        start = np.r_[0, m["step"].to_numpy()[:-1]]  # an interval starts where the last ended
        keep = (start >= middle) & (m["bias_n"].to_numpy() > 0)
        n, b = m["bias_n"].to_numpy()[keep], m["bias_mean"].to_numpy()[keep]
        per_seed.append(float((n * b).sum() / n.sum()))
    x = np.array(per_seed)
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(len(x)))


def test_compare_help_matches_the_readme_synopsis(capsys) -> None:
    """The synopsis in docs/deep-agents.md, ``maxminq compare RUN_DIR [RUN_DIR ...]
    [--baseline K] [--seed S] [--csv FILE]``, and the command's usage named the same options
    differently (``--seed SEED``, ``--csv PATH``); its epilog said n/a only for runs of one
    seed, while the table also prints n/a when no seed's score differs (CartPole's 500s)."""
    synopsis = (
        page("deep-agents").split("`maxminq compare RUN_DIR [RUN_DIR ...] ", 1)[1].split("`", 1)[0]
    )
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for option in synopsis.split("] ["):
        assert option.strip("[]") in text.split("RUN_DIR")[0], option  # in the usage line
    assert "when in each run every seed scored the same" in text


def test_envs_table_is_what_maxminq_envs_prints(capsys) -> None:
    block = next(b for b in _blocks(_section("Environments")) if b.startswith("env_id "))
    assert main(["envs"]) == 0
    assert capsys.readouterr().out == block


def test_layout_names_existing_paths() -> None:
    block = _blocks(_section("Layout"))[0]
    parent = ""
    names = []
    for line in block.splitlines():
        name = line.split()[0] if line.strip() else ""
        if not name.endswith((".py", "/")):
            continue  # a continued description
        if line.startswith("  "):
            names.append(parent + name)
        else:
            parent = name
            names.append(name)
    assert len(names) >= 13
    missing = [n for n in names if not (ROOT / n).exists()]
    assert not missing


def test_sweep_section_lists_every_shipped_config() -> None:
    text = _section("Sweeps and results store").split("Every paper figure is a sweep config", 1)[1]
    intro = text.split("each with a `quick` scale", 1)[0]
    listed = re.findall(r"`([a-z_]+)`", intro)
    shipped = sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))
    assert sorted(listed) == shipped
    assert "All eleven quick configs" in _section("Sweeps and results store")
    assert len(shipped) == 11


def test_dry_run_line_is_what_the_sweep_prints(tmp_path, monkeypatch, capsys) -> None:
    block = _blocks(_section("Sweeps and results store"), "bash")[0]
    documented = [ln.split("#", 1)[1].strip() for ln in block.splitlines() if ln.startswith("#")]
    monkeypatch.chdir(tmp_path)
    catcher = str(ROOT / "configs" / "catcher.yaml")
    argv = ["sweep", catcher, "--scale", "paper", "--out", "results/paper", "--dry-run"]
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines() == documented
    assert not (tmp_path / "results").exists()
    # the paper-scale Catcher grid: 90 settings x 20 seeds x 3.5e6 steps = 6.3e9 seed-steps
    assert "90 runs, 0 already done in results/paper, 90 to run: 6,300,000,000 " in documented[0]


@pytest.mark.parametrize("key", sorted(CONFIG_ERRORS))
def test_config_error_examples_are_what_the_sweep_prints(key, tmp_path, monkeypatch, capsys):
    errors = _blocks(_section("Sweeps and results store").split("**Config format.**")[1])
    documented = [ln for ln in errors[1].splitlines() if f"x.yaml: {key}:" in ln]
    assert len(documented) == 1
    head = (
        "name: x\nkind: toy_mdp\nfixed: {seed: 0, mu: 0.1, runs: 2, episodes: 2}\n"
        if key == "variants[2].n"
        else "name: x\nkind: deep\nfixed: {env_id: CartPole-v1, seeds: [0], steps: 100}\n"
    )
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "x.yaml").write_text(
        head + "variants:\n" + CONFIG_ERRORS[key] + "scales:\n  quick: {}\n  paper: {}\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "configs/x.yaml", "--out", "out"]) == 2
    assert capsys.readouterr().err.splitlines() == documented
    assert not (tmp_path / "out").exists()


def test_train_options_named_in_deep_agents_exist(capsys) -> None:
    text = _section("Deep agents").split("Every hyper-parameter not given (", 1)[1]
    named = set(re.findall(r"--[a-z][a-z0-9-]*", text.split(")", 1)[0]))
    assert len(named) == 16
    assert named <= _options("train", capsys)


def test_reproduce_options_paragraph_names_every_option(capsys) -> None:
    text = _section("Report and reproduction").split("Options (all checked", 1)[1]
    named = set(re.findall(r"--[a-z][a-z0-9-]*", text.split("Rerunning", 1)[0]))
    assert named == _options("reproduce", capsys) - {"--help"}


def test_environments_example_runs_as_its_comments_say() -> None:
    block = _blocks(_section("Environments"), "python")[0]
    ns: dict = {}
    exec(compile(block, "docs/environments.md", "exec"), ns)
    from gymnasium.vector import AutoresetMode

    from maxminq.envs import make
    from maxminq.envs.registry import EnvDefaults

    first, _ = ns["env"].reset()  # "seed used by the first reset()"
    again, _ = make("maxminq/Catcher-v0").reset(seed=0)
    assert first.tolist() == again.tolist()
    venv = ns["venv"]
    assert venv.num_envs == 64 and venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert not hasattr(venv, "envs")  # one batched kernel, not a SyncVectorEnv of 64 envs
    d = ns["d"]
    assert isinstance(d, EnvDefaults) and (d.env_id, d.max_episode_steps) == (
        "maxminq/Catcher-v0",
        2000,
    )


def test_theory_synopsis_names_every_option(capsys) -> None:
    line = next(ln for ln in _section("Theory").splitlines() if ln.startswith("`maxminq theory "))
    named = set(re.findall(r"--[a-z][a-z0-9-]*", line))
    assert named == _options("theory", capsys) - {"--help"}


def test_choose_n_table_is_the_least_biased_n() -> None:
    from scipy.special import gammaln

    rows = [ln for ln in _section("Theory").splitlines() if ln.startswith("| ")]
    ms = [int(x) for x in rows[0].strip("|").split("|")[1:]]
    documented = [int(x) for x in rows[1].strip("|").split("|")[1:]]
    n = np.arange(1, 201)
    expected = []
    for m in ms:  # E[Z_MN] / (gamma tau) = 1 - 2 Gamma(M+1) Gamma(1+1/N) / Gamma(M+1+1/N)
        t = np.exp(gammaln(m + 1) + gammaln(1 + 1 / n) - gammaln(m + 1 + 1 / n))
        expected.append(int(n[np.argmin(np.abs(1 - 2 * t))]))
    assert documented == expected


def test_normal_noise_variance_ratios_are_the_quoted_ones() -> None:
    text = " ".join(_section("Theory").split())
    pattern = r"grows with N \(([\d.]+) at N = 2, ([\d.]+) at N = 8, ([\d.]+) at N = 16"
    quoted = re.search(pattern, text)
    assert quoted
    # N estimators, each from 1/N of the samples (N times the variance): N Var[min of N]
    ratios = [round(n * _normal_min_variance(n), 2) for n in (2, 8, 16)]
    assert ratios == [float(v) for v in quoted.groups()]


def test_operators_table_names_every_operator() -> None:
    from maxminq.operators import OPERATORS

    rows = [ln for ln in _section("Operators").splitlines() if ln.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == list(OPERATORS)


def test_environments_table_matches_the_spaces_and_caps() -> None:
    from maxminq.envs import make

    rows = [ln for ln in _section("Environments").splitlines() if ln.startswith("| `")]
    checked = 0
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        env_id, obs, actions, cap = cells[0].strip("`"), cells[2], cells[3], cells[4]
        if "{" in env_id:  # maxminq/MinAtar-{Asterix,...}-v0
            head, rest = env_id.split("{")
            games, tail = rest.split("}")
            ids = [head + g + tail for g in games.split(",")]
        else:
            ids = [env_id]
        for one in ids:
            env = make(one)
            space = env.observation_space
            if obs.startswith("(C, 10, 10) uint8"):
                assert space.shape[1:] == (10, 10) and space.dtype == np.uint8
            else:
                size, dtype = obs.split()[:2]
                assert space.shape == (int(size),) and space.dtype == np.dtype(dtype)
            n = int(actions.split()[0]) if actions[0].isdigit() else len(actions.split(", "))
            assert env.action_space.n == n
            game = one.split("-")[1] if "MinAtar" in one else ""
            if cap.startswith("Seaquest"):  # "Seaquest 10,000, others none"
                want = 10_000 if game == "Seaquest" else None
            else:
                want = int(cap.replace(",", ""))
            assert env.spec.max_episode_steps == want
            env.close()
            checked += 1
    assert checked == 8


def test_quick_start_names_what_make_demo_runs() -> None:
    command = re.search(
        r"`make demo` runs the main job, `(maxminq [^`]+)`", _section("Quick start")
    )
    assert command
    recipe = (ROOT / "Makefile").read_text().split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert recipe.rstrip().endswith("/bin/" + command.group(1))
    assert re.search(r"^test: lint$", (ROOT / "Makefile").read_text(), re.M)  # "lint, then tests"


def test_quick_start_own_env_snippet_trains(tmp_path, monkeypatch, capsys) -> None:
    """Quick start's "your own Gymnasium environment" block, with the `my_envs.py` of
    docs/deep-agents.md in the current folder, trains both seeds and writes the run's tables;
    shortened to 1,500 steps (every other setting as written)."""
    block = _blocks(_section("Quick start"), "python")[0]
    module = _blocks(page("deep-agents").split("**Your own environment.**", 1)[1], "python")[0]
    assert 'env_id="my_envs:Corridor-v0"' in block and 'gym.register("Corridor-v0"' in module
    (tmp_path / "my_envs.py").write_text(module)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert block.count("steps=20_000") == 1
    ns: dict = {}
    exec(compile(block.replace("steps=20_000", "steps=1_500"), "README.md", "exec"), ns)
    tests = ns["tables"]["tests"]
    assert sorted(tests["seed"].unique().tolist()) == [0, 1]
    assert (tmp_path / "runs" / "corridor" / "runs.csv").is_file()
    printed = capsys.readouterr().out
    assert printed.splitlines()[0] == "seed" and len(printed.splitlines()) == 4


@pytest.mark.parametrize("run", sorted(PUBLISHED_BIAS))
def test_published_bias_numbers_are_the_runs(run: str) -> None:
    decimals = PUBLISHED_BIAS[run]
    mean, se = _second_half_bias(ROOT / "docs" / "runs" / run)
    quoted = f"{mean:+.{decimals}f} +- {se:.{decimals}f}"
    text = " ".join(page("deep-results").split())  # numbers may wrap across lines
    assert re.search(rf"(?<![\d.]){re.escape(quoted)}(?![\d])", text), quoted
