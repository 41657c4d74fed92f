"""Synthetic results with known values for the analysis tests: results tables of the toy
MDP, Mountain Car, the theory and deep runs, and a results store holding them."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from maxminq.experiments.config import RunSpec
from maxminq.experiments.store import ResultsStore

OWN = "my_ops:softmin_q"


def _toy_rows(betas: dict[str, int] | None = None) -> pd.DataFrame:
    """4 runs x 10 episodes per (mu, setting); maxmin N = 2 and 4 without parameters, and
    ``betas`` (op_kwargs JSON -> N) of a G of one's own."""
    settings = [("maxmin", 2, None), ("maxmin", 4, None)]
    settings += [(OWN, n, kw) for kw, n in (betas or {}).items()]
    rows = []
    for mu, (algo, n, kw), run, ep in itertools.product([0.1], settings, range(4), range(1, 11)):
        rows.append((mu, algo, n, kw, run, ep, 0.5, 0.5, 0.01 * n + 0.1 * run))
    cols = ["mu", "algorithm", "n", "op_kwargs", "run", "episode", "p_left", "distance"]
    return pd.DataFrame(rows, columns=[*cols, "q_a_left"])


ENVS = ("Catcher-v0", "Pixelcopter-v0")


AGENTS = {"dqn": [1], "ddqn": [1], "maxmin-dqn": [2, 4], "averaged-dqn": [2]}


def deep_results(
    *,
    seeds: int = 4,
    lrs: tuple[float, ...] = (1e-3, 1e-4),
    maxmin_shift: float = 10.0,
    rng_seed: int = 0,
    with_tests: bool = True,
) -> dict[str, pd.DataFrame]:
    """Deep tables shaped like the store's: returns grow linearly towards a known level.

    Known test level per setting: ``base(env) + 5 * [lr == 1e-3] + shift(agent) + seed``,
    with ``shift = maxmin_shift`` for Maxmin DQN (plus N) and 0 otherwise.
    """
    rng = np.random.default_rng(rng_seed)
    episodes, tests, metrics, runs = [], [], [], []
    for e_i, env in enumerate(ENVS):
        for agent, ns in AGENTS.items():
            for n in ns:
                for lr in lrs:
                    run_id = f"{env}-{agent}-{n}-{lr:g}"
                    level = 20.0 * e_i + 5.0 * (lr == 1e-3)
                    level += (maxmin_shift + n) if agent == "maxmin-dqn" else 0.0
                    bias = 1.0 if agent == "dqn" else (-0.2 if agent == "maxmin-dqn" else 0.4)
                    common = dict(
                        run_id=run_id,
                        config=f"deep_{env}",
                        kind="deep",
                        env_id=env,
                        agent=agent,
                        n=n,
                        lr=lr,
                        steps=1000,
                    )
                    for s in range(seeds):
                        final = level + s
                        steps = np.arange(1, 41) * 25
                        ret = final * steps / steps[-1] + rng.normal(0, 0.1, steps.size)
                        avg = pd.Series(ret).rolling(100, min_periods=1).mean().to_numpy()
                        for i in range(steps.size):
                            episodes.append(
                                common
                                | dict(
                                    seed=s,
                                    episode=i,
                                    step=int(steps[i]),
                                    **{"return": ret[i]},
                                    length=25,
                                    return_avg100=avg[i],
                                    terminated=True,
                                    truncated=False,
                                )
                            )
                        if with_tests:
                            for j in range(5):
                                tests.append(
                                    common
                                    | dict(
                                        seed=s, episode=j, length=10, **{"return": final + (j - 2)}
                                    )
                                )
                        for st in (250, 500, 750, 1000):
                            metrics.append(
                                common
                                | dict(
                                    seed=s,
                                    step=st,
                                    loss=0.1,
                                    q_mean=1.0,
                                    bias_mean=bias + rng.normal(0, 0.05),
                                    bias_std=0.1,
                                    bias_abs=abs(bias),
                                    epsilon=0.01,
                                    steps_per_s=1000.0,
                                )
                            )
                        runs.append(common | dict(seed=s, status="done", diverged_step=-1))
    out = {
        "episodes": pd.DataFrame(episodes),
        "metrics": pd.DataFrame(metrics),
        "runs": pd.DataFrame(runs),
    }
    if with_tests:
        out["tests"] = pd.DataFrame(tests)
    return out


def toy_results(
    *, runs: int = 30, episodes: int = 40, q_over: float = 0.3, seed: int = 0
) -> pd.DataFrame:
    """Toy MDP rows: Q-learning's Q(A,Left) ends at mu + q_over, Double Q's at mu - 0.2."""
    rng = np.random.default_rng(seed)
    rows = []
    settings = [("q_learning", 1), ("double_q", 2), ("maxmin", 2), ("maxmin", 8)]
    for mu in (0.1, -0.1):
        opt = 0.95 if mu > 0 else 0.05
        for alg, n in settings:
            # final distance: Q-learning best at mu>0; Double Q fastest at mu<0; larger N faster.
            if mu > 0:
                d_end = {"q_learning": 0.0, "double_q": 0.3}.get(alg, 0.1)
                rate = 0.2
            else:
                d_end = 0.0
                rate = {"double_q": 0.5, "q_learning": 0.05}.get(alg, 0.3 if n == 8 else 0.1)
            q_end = mu + (q_over if alg == "q_learning" else -0.2 if alg == "double_q" else 0.0)
            for r in range(runs):
                for ep in range(episodes):
                    decay = np.exp(-rate * ep)
                    dist = d_end + (0.9 - d_end) * decay + abs(rng.normal(0, 0.01))
                    q = q_end * (1 - decay) + rng.normal(0, 0.05)
                    rows.append(
                        dict(
                            run_id=f"toy-{mu}-{alg}-{n}",
                            config="toy_mdp",
                            kind="toy_mdp",
                            mu=mu,
                            algorithm=alg,
                            n=n,
                            run=r,
                            episode=ep,
                            p_left=opt - dist,
                            distance=dist,
                            q_a_left=q,
                        )
                    )
    return pd.DataFrame(rows)


def mc_results(*, runs: int = 10, maxmin_steps: float = 200.0, seed: int = 0) -> pd.DataFrame:
    """Mountain Car rows: last-episode steps per algorithm at the highest sigma^2 are known."""
    rng = np.random.default_rng(seed)
    rows = []
    for sigma2 in (0.0, 50.0):
        for alg, n in (("q_learning", 1), ("double_q", 2), ("averaged", 2), ("maxmin", 4)):
            for step_size in (0.01, 0.04):
                base = 150.0 if sigma2 == 0 else {"maxmin": maxmin_steps}.get(alg, 1000.0)
                base += 30.0 * (step_size == 0.04)  # the smaller step size is best
                for r in range(runs):
                    for ep in range(5):
                        steps = base * (1 + (4 - ep) * 0.5) + rng.normal(0, 5)
                        rows.append(
                            dict(
                                run_id=f"mc-{sigma2}-{alg}-{step_size}",
                                config="mountain_car",
                                kind="mountain_car",
                                algorithm=alg,
                                n=n,
                                sigma2=sigma2,
                                step_size=step_size,
                                run=r,
                                episode=ep,
                                steps=steps,
                            )
                        )
    return pd.DataFrame(rows)


def theory_files(
    path,
    *,
    monotone: bool = True,
    ratio8: float = 0.4,
    mc_shift: float = 0.0,
    simulated: bool = True,
) -> None:
    """bias.csv (M, N, expected_bias) and variance.csv (N, variance_ratio), known shapes,
    with the column names ``maxminq theory`` writes. With ``simulated`` the Monte-Carlo
    columns follow the closed form within +-1 SE (SE 0.01), shifted by ``mc_shift``."""
    path.mkdir(parents=True, exist_ok=True)
    wobble = [0.5, -0.8, 0.2, 0.9, -0.3, -0.6]  # fixed deviations, in SE
    rows = []
    for m in (2, 4, 8):
        for n in range(1, 7):
            b = 1.0 / n - 0.3 + 0.01 * m
            if not monotone and m == 4 and n == 5:
                b += 1.0
            row = dict(M=m, N=n, expected_bias=b)
            if simulated:
                row.update(mc_bias=b + mc_shift + 0.01 * wobble[n - 1], mc_bias_se=0.01)
            rows.append(row)
    pd.DataFrame(rows).to_csv(path / "bias.csv", index=False)
    ratios = [1.0, 0.7, 0.6, 0.55, 0.5, 0.47, 0.45, ratio8, 0.4, 0.39]
    var = pd.DataFrame(dict(N=list(range(1, 11)), variance_ratio=ratios))
    if simulated:
        var["mc_variance_ratio"] = var["variance_ratio"] + 0.002 * np.array(wobble[:5] * 2)
        var["mc_variance_ratio_se"] = 0.002
    var.to_csv(path / "variance.csv", index=False)


FRONT = ["run_id", "config", "kind"]


SETTINGS = {
    "deep": ["env_id", "agent", "n", "lr", "steps"],
    "toy_mdp": ["mu", "algorithm", "n"],
    "mountain_car": ["algorithm", "n", "sigma2", "step_size"],
}


def write_store(out: Path, results: dict[str, pd.DataFrame]) -> None:
    """Store every run of ``results`` through the real results store, as a sweep would."""
    runs: dict[str, tuple[RunSpec, dict[str, pd.DataFrame]]] = {}
    for table, df in results.items():
        for run_id, sub in df.groupby("run_id", sort=True):
            kind = sub["kind"].iloc[0]
            keys = SETTINGS[kind]
            settings = {
                k: getattr(v, "item", lambda v=v: v)() for k in keys for v in [sub[k].iloc[0]]
            }
            if kind == "deep":
                settings["seeds"] = sorted(int(s) for s in sub["seed"].unique())
            spec = RunSpec(run_id, kind, settings, sub["config"].iloc[0])
            own = sub.drop(columns=[*FRONT, *keys]).reset_index(drop=True)
            runs.setdefault(run_id, (spec, {}))[1][table] = own
    with ResultsStore(out) as store:
        store.register([spec for spec, _ in runs.values()])
        for spec, tables in runs.values():
            store.mark_running(spec.run_id)
            store.save_tables(spec, tables)
            store.mark_finished(spec.run_id, "done")


TINY_TOY = """
name: tiny_toy
kind: toy_mdp
fixed: {seed: 0, step_size: 0.01, epsilon: 0.1, buffer_size: 100}
grid: {mu: [0.1]}
variants:
  - {algorithm: q_learning, n: 1}
  - {algorithm: double_q, n: 2}
scales:
  quick: {fixed: {runs: 8, episodes: 20}}
  paper: {fixed: {runs: 5000, episodes: 1000}}
"""


def _store_runs(out: Path, runs: list[tuple[str, str, dict, dict[str, pd.DataFrame]]]) -> None:
    """Store (run_id, kind, settings, tables) through the real results store."""
    with ResultsStore(out) as store:
        for run_id, kind, settings, tables in runs:
            spec = RunSpec(run_id, kind, settings, f"{kind}_x")
            store.register([spec])
            store.mark_running(run_id)
            store.save_tables(spec, tables)
            store.mark_finished(run_id, "done")


def _run(
    folder: Path,
    agent: str,
    tests: dict[int, list[float]],
    *,
    bias: dict[int, tuple[float, float]] | None = None,
    env_id: str = "CartPole-v1",
    diverged: tuple[int, ...] = (),
    **settings: object,
) -> Path:
    """A finished run folder as 'maxminq train' writes it: seed s played the test episodes
    ``tests[s]`` (none: its training return, 10 more than the first test return would be,
    stands in); ``bias[s]`` = (bias of the first half, of the second half), the metrics rows
    at steps 500 and 1000 of a 1,000-step run; ``diverged`` seeds are marked so in runs.csv."""
    folder.mkdir()
    seeds = sorted(tests)
    cfg = {"agent": agent, "n": 2 if "maxmin" in agent else 1, "lr": 1e-3, "steps": 1000}
    (folder / "config.json").write_text(
        json.dumps(cfg | {"env_id": env_id, "seeds": seeds, "network": "mlp", **settings})
    )
    ep = pd.DataFrame(
        [[s, 1, 900, 7.0, 900, 7.0 + s, True, False] for s in seeds],
        columns=["seed", "episode", "step", "return", "length", "return_avg100"]
        + ["terminated", "truncated"],
    )
    ep.to_csv(folder / "episodes.csv", index=False)
    rows = [[s, j + 1, r, 10] for s in seeds for j, r in enumerate(tests[s])]
    t = pd.DataFrame(rows, columns=["seed", "episode", "return", "length"])
    t.to_csv(folder / "tests.csv", index=False)
    halves = bias or {s: (math.nan, math.nan) for s in seeds}
    m = pd.DataFrame(
        [[s, step, 0.1, 1.0, b, 1.0, abs(b), 0 if math.isnan(b) else 5, 0.01, 100.0]
         for s in seeds for step, b in zip((500, 1000), halves[s], strict=True)],
        columns=["seed", "step", "loss", "q_mean", "bias_mean", "bias_std", "bias_abs"]
        + ["bias_n", "epsilon", "steps_per_s"],
    )  # fmt: skip
    m.to_csv(folder / "metrics.csv", index=False)
    status = ["diverged" if s in diverged else "done" for s in seeds]
    r = pd.DataFrame({"seed": seeds, "status": status, "diverged_step": -1})
    r.to_csv(folder / "runs.csv", index=False)
    return folder


def _welch(x: list[float], y: list[float]) -> tuple[float, float, float]:
    """Welch's t, its Welch-Satterthwaite df and two-sided p, from the formulas."""
    n, m = len(x), len(y)
    vx, vy = np.var(x, ddof=1) / n, np.var(y, ddof=1) / m
    t = (np.mean(x) - np.mean(y)) / math.sqrt(vx + vy)
    df = (vx + vy) ** 2 / (vx**2 / (n - 1) + vy**2 / (m - 1))
    return t, df, 2 * stats.t.sf(abs(t), df)


PAPER_IDS = {"Catcher-v0": "maxminq/Catcher-v0", "Pixelcopter-v0": "maxminq/Pixelcopter-v0"}


def _paper_deep_results(pixelcopter_steps: int = 1000) -> dict:
    """Synthetic deep tables (test_analysis_tables.deep_results, 1,000 steps per run) on the
    paper's Catcher and Pixelcopter ids; Pixelcopter's runs at ``pixelcopter_steps``."""

    results = {}
    for name, df in deep_results(seeds=3, lrs=(1e-3,)).items():
        df = df.assign(env_id=df["env_id"].map(PAPER_IDS), config="my_study")
        df.loc[df["env_id"] == "maxminq/Pixelcopter-v0", "steps"] = pixelcopter_steps
        results[name] = df
    return results


def _toy(gone: bool = True) -> pd.DataFrame:
    """4 runs x 10 episodes of Q-learning and Maxmin N = 2 at mu = +0.1; final Q(A, Left)
    0.1 * run. With ``gone``: Q-learning run 0's distance NaN from episode 5 while its
    Q(A, Left) stays finite (1e300: its Q(A, Right) diverged), run 1's Q(A, Left) inf from 8."""
    rows = []
    for (algo, n), run, ep in itertools.product([("q_learning", 1), ("maxmin", 2)], range(4),
                                                range(1, 11)):  # fmt: skip
        rows.append([0.1, algo, n, run, ep, 0.5, 0.2 + 0.1 * run, 0.1 * run])
    df = pd.DataFrame(
        rows, columns=["mu", "algorithm", "n", "run", "episode", "p_left", "distance", "q_a_left"]
    )
    if gone:
        q = df.algorithm == "q_learning"
        df.loc[q & (df.run == 0) & (df.episode >= 5), ["distance", "p_left"]] = np.nan
        df.loc[q & (df.run == 0) & (df.episode >= 5), "q_a_left"] = 1e300
        df.loc[q & (df.run == 1) & (df.episode >= 8), "q_a_left"] = np.inf
    return df


def percentile_iqm_ci(x: np.ndarray, reps: int, stream: list[int]) -> tuple[float, float]:
    """The documented IQM interval, by hand: ``reps`` resamples of the runs with replacement
    (indices from ``numpy.random.default_rng(stream)``), each one's mean after cutting
    floor(n / 4) values from each end, and the 2.5% and 97.5% quantiles of those."""
    n, cut = x.size, x.size // 4
    idx = np.random.default_rng(stream).integers(0, n, size=(reps, n))
    boot = np.sort(x[idx], axis=1)[:, cut : n - cut].mean(axis=1)
    low, high = np.quantile(boot, [0.025, 0.975])
    return float(low), float(high)
