"""Analysis tables: mean, SE, IQM and bootstrap CIs against hand-computed values, on
synthetic results with known values (also used by the report tests)."""

from __future__ import annotations

from itertools import product

import numpy as np
import pandas as pd
import pytest
from analysis_results import deep_results, mc_results, toy_results

from maxminq.analysis import report as R
from maxminq.analysis import tables as T


def test_iqm_mean_se_hand_computed():
    # 1..8: cut floor(0.25*8) = 2 from each end -> mean(3,4,5,6) = 4.5.
    assert T.iqm(np.arange(1, 9)) == pytest.approx(4.5)
    # 10 values: cut 2 each end -> mean of 3..8 sorted values, outlier removed.
    x = np.array([100.0, 1, 2, 3, 4, 5, 6, 7, 8, -50])
    assert T.iqm(x) == pytest.approx(np.mean([2, 3, 4, 5, 6, 7]))
    mean, se = T.mean_se([2.0, 4.0, 6.0, 8.0])
    assert mean == 5.0
    # sample sd = sqrt(20/3); SE = sd / 2
    assert se == pytest.approx(np.sqrt(20.0 / 3.0) / 2.0)
    assert np.isnan(T.mean_se([3.0])[1])


def test_bootstrap_ci_is_stratified():
    # Two strata with very different levels; a stratified resample keeps 5 runs of each,
    # so the mean's bootstrap distribution stays centred at 50 with no mixing variance.
    a, b = np.zeros(5), np.full(5, 100.0)
    lo, hi = T.stratified_bootstrap_ci([a, b], statistic=lambda s: s.mean(axis=-1), reps=500)
    assert lo == pytest.approx(50.0) and hi == pytest.approx(50.0)
    lo, hi = T.stratified_bootstrap_ci(
        np.concatenate([a, b]), statistic=lambda s: s.mean(axis=-1), reps=500
    )
    assert lo < 35 and hi > 65  # unstratified mixing does vary


def test_iqm_ci_coverage_near_nominal():
    """Over repeated synthetic draws the 95% CI contains the true IQM about 95% of the time."""
    rng = np.random.default_rng(123)
    true_iqm = 3.0  # symmetric distribution: the population IQM equals the centre
    hits, draws = 0, 300
    for i in range(draws):
        x = true_iqm + rng.standard_t(df=5, size=20)
        lo, hi = T.stratified_bootstrap_ci(x, reps=600, rng=np.random.default_rng([7, i]))
        hits += lo <= true_iqm <= hi
    coverage = hits / draws
    # Percentile bootstrap with 20 runs is slightly liberal; binomial sd at 300 draws ~ 1.3%.
    assert 0.87 <= coverage <= 0.99, coverage


def test_ema_and_last_k_average():
    x = np.array([1.0, 1.0, 1.0])
    assert np.allclose(T.ema(x, 0.9), 1.0)  # debiased: a constant stays constant
    y = T.ema([0.0, 10.0], 0.5)
    # s1 = 0, s2 = 0.5*0 + 0.5*10 = 5; norm = 0.5*0.5 + 0.5 = 0.75 -> 6.667
    assert y[1] == pytest.approx(5.0 / 0.75)
    assert np.allclose(T.last_k_average([1, 2, 3, 4], k=2), [1, 1.5, 2.5, 3.5])


def test_deep_summary_and_best_settings():
    tables = T.classify(deep_results(seeds=4))
    summary = T.deep_summary(tables, reps=300)
    # one row per (env, agent, n, lr): 2 envs * 5 (agent, n) * 2 lrs
    assert len(summary) == 2 * 5 * 2
    row = summary[
        (summary.env_id == "Pixelcopter-v0")
        & (summary.agent == "maxmin-dqn")
        & (summary.n == 4)
        & np.isclose(summary.lr, 1e-3)
    ].iloc[0]
    # test returns per seed: 20 + 5 + 10 + 4 + s for s = 0..3 (tests are symmetric around it)
    per_seed = np.array([39.0, 40.0, 41.0, 42.0])
    assert row["runs"] == 4
    assert row["mean"] == pytest.approx(per_seed.mean())
    assert row["se"] == pytest.approx(per_seed.std(ddof=1) / 2)
    assert row["iqm"] == pytest.approx(40.5)  # cut one from each end
    # The exact bootstrap distribution of the IQM (all 4^4 resamples, enumerated here): its
    # 2.5% / 97.5% quantiles are 39 and 42, its 10% / 90% ones 39.5 and 41.5. The sampled
    # 95% interval (300 replicates) lies between those; a 50% one ([40, 41]) would not.
    resampled = [np.sort(per_seed[list(i)])[1:3].mean() for i in product(range(4), repeat=4)]
    assert np.quantile(resampled, [0.025, 0.1, 0.9, 0.975]).tolist() == [39, 39.5, 41.5, 42]
    assert 39.0 <= row["iqm_low"] <= 39.5 and 41.5 <= row["iqm_high"] <= 42.0
    best = T.deep_best(summary)
    assert len(best) == 2 * 4
    mm = best[(best.env_id == "Catcher-v0") & (best.agent == "maxmin-dqn")].iloc[0]
    assert (mm["n"], mm["lr"]) == (4, 1e-3)


def test_deep_final_falls_back_to_last100_training_average():
    tables = T.classify(deep_results(seeds=2, with_tests=False))
    scores = T.deep_final_scores(tables)
    assert set(scores["source"]) == {"train_last100"}
    ep = tables.episodes
    one = ep[(ep.run_id == "Catcher-v0-dqn-1-0.001") & (ep.seed == 1)]
    expected = one["return"].mean()  # 40 episodes < 100: the average of all of them
    got = scores[
        (scores.env_id == "Catcher-v0")
        & (scores.agent == "dqn")
        & np.isclose(scores.lr, 1e-3)
        & (scores.seed == 1)
    ]["score"].iloc[0]
    assert got == pytest.approx(expected)


def test_deep_final_is_the_mean_test_return_per_seed_else_the_training_average():
    """Seed 0 was tested (returns 0, 0, 9: mean 3, where a median or IQM gives 0); seed 1 of
    the same run was not (diverged before testing): its score is its last training
    return_avg100 (6), marked as such; seed 0's training average is not used."""
    run = dict(run_id="r", env_id="E-v0", agent="dqn", n=1, lr=1e-3)
    episodes = pd.DataFrame(
        [run | dict(seed=s, step=t, **{"return": r}, return_avg100=a)
         for s, t, r, a in ((0, 10, 1.0, 1.0), (0, 20, 3.0, 2.0), (1, 10, 5.0, 5.0),
                            (1, 20, 7.0, 6.0))]
    )  # fmt: skip
    tests = pd.DataFrame([run | dict(seed=0, episode=j, **{"return": r}) for j, r in
                          enumerate((0.0, 0.0, 9.0))])  # fmt: skip
    runs = pd.DataFrame([run | dict(seed=0, status="done"), run | dict(seed=1, status="diverged")])
    tables = T.classify({"episodes": episodes, "tests": tests, "runs": runs})
    scores = T.deep_final_scores(tables).set_index("seed")
    assert scores.loc[0, "score"] == 3.0 and scores.loc[0, "source"] == "test"
    assert scores.loc[1, "score"] == 6.0 and scores.loc[1, "source"] == "train_last100"
    assert scores["diverged"].tolist() == [False, True]


def test_deep_curves_step_function_mean():
    tables = T.classify(deep_results(seeds=3))
    curves = T.deep_curves(tables.episodes, points=10)
    c = curves[
        (curves.env_id == "Catcher-v0") & (curves.agent == "dqn") & np.isclose(curves.lr, 1e-4)
    ].sort_values("step")
    assert len(c) == 10 and c["runs"].min() == 3
    ep = tables.episodes
    sub = ep[(ep.run_id == "Catcher-v0-dqn-1-0.0001")]
    # at the last grid step (1000) every seed's value is its last return_avg100
    last = sub[sub.step == 1000]["return_avg100"].to_numpy()
    assert c["mean"].iloc[-1] == pytest.approx(last.mean())
    assert c["se"].iloc[-1] == pytest.approx(last.std(ddof=1) / np.sqrt(3))


def test_mountain_car_best_step_size_and_final_steps():
    mc = mc_results(runs=6)
    summary = T.mountain_car_summary(mc, reps=200)
    best = T.mountain_car_best(summary)
    assert set(best["step_size"]) == {0.01}
    row = best[(best.algorithm == "maxmin") & (best.sigma2 == 50.0)].iloc[0]
    # the last episode (ep = 4) of each of the 6 runs: base 200 plus noise (sd 5)
    last = mc[(mc.algorithm == "maxmin") & (mc.sigma2 == 50.0) & (mc.step_size == 0.01)]
    steps = last[last.episode == 4]["steps"].to_numpy()
    assert row["runs"] == 6 and np.abs(steps - 200.0).max() < 20
    assert row["mean"] == pytest.approx(steps.mean())
    assert row["se"] == pytest.approx(steps.std(ddof=1) / np.sqrt(6))
    assert row["iqm"] == pytest.approx(np.sort(steps)[1:5].mean())  # 6 runs: cut 1 each end
    final = T.mountain_car_final(mc)
    assert len(final) == 2 * 4 * 2 * 6


def test_toy_final_averages_last_tenth():
    toy = toy_results(runs=5, episodes=40)
    fin = T.toy_final(toy, "q_a_left")
    one = toy[(toy.mu == 0.1) & (toy.algorithm == "q_learning") & (toy.run == 2)]
    expected = one[one.episode >= 39 - 3.9]["q_a_left"].mean()
    got = fin[(fin.mu == 0.1) & (fin.algorithm == "q_learning") & (fin.run == 2)]["q_a_left"]
    assert got.iloc[0] == pytest.approx(expected)


def test_deep_curves_of_one_train_run_hold_each_seeds_last_value() -> None:
    """No setting columns (one 'maxminq train' run): seed 0 ends episodes at steps 10 and 30
    (averages 1, 3), seed 1 at step 20 (5); on the grid 10, 20, 30 the held values are
    (1, -), (1, 5), (3, 5)."""
    episodes = pd.DataFrame(
        {"seed": [0, 0, 1], "step": [10, 30, 20], "return_avg100": [1.0, 3.0, 5.0]}
    )
    band = T.deep_curves(episodes, keys=(), points=3)
    np.testing.assert_allclose(band["step"], [10, 20, 30])
    np.testing.assert_allclose(band["mean"], [1.0, 3.0, 4.0])
    # SE = sd / sqrt(2): (1, 5) -> sd 2 sqrt(2) -> 2; (3, 5) -> sd sqrt(2) -> 1; one seed: NaN
    np.testing.assert_allclose(band["se"], [np.nan, 2.0, 1.0])
    assert band["runs"].tolist() == [1, 2, 2]


def test_tabular_runs_of_two_run_ids_with_the_same_keys_stay_separate() -> None:
    """Two stored run ids with the same (mu, algorithm, n), e.g. two configs differing only
    in their seed, each number their runs from 0. Their run 0s are two independent runs:
    4 per-run rows, not 2 rows averaging A's run 0 with B's. Run id A has 10 episodes,
    B 20; the last tenth of each run is its own (A: episodes >= 10 - 0.9, i.e. 10;
    B: >= 20 - 1.9, i.e. 19 and 20)."""
    rows = []
    for rid, episodes, base in (("A", 10, 0.0), ("B", 20, 100.0)):
        for run in (0, 1):
            for ep in range(1, episodes + 1):
                value = base + 10 * run + ep
                rows.append(("toy", rid, 0.1, "maxmin", 2, run, ep, value, value))
    toy = pd.DataFrame(
        rows,
        columns=[
            "kind",
            "run_id",
            "mu",
            "algorithm",
            "n",
            "run",
            "episode",
            "distance",
            "q_a_left",
        ],
    )
    fin = T.toy_final(toy, "distance").sort_values(["run_id", "run"])
    assert len(fin) == 4
    np.testing.assert_allclose(fin["distance"], [10.0, 20.0, 119.5, 129.5])
    auc = T.toy_auc(toy, "distance").sort_values(["run_id", "run"])
    # mean of base + 10 run + 1..E: base + 10 run + (E + 1) / 2
    np.testing.assert_allclose(auc["distance"], [5.5, 15.5, 110.5, 120.5])
    mc = pd.DataFrame(
        {
            "run_id": ["A", "A", "B", "B"],
            "algorithm": "maxmin",
            "n": 2,
            "sigma2": 10.0,
            "step_size": 0.1,
            "run": [0, 0, 0, 0],
            "episode": [1, 2, 1, 2],
            "steps": [500, 300, 700, 400],
        }
    )
    last = T.mountain_car_final(mc).sort_values("run_id")
    assert last["steps"].tolist() == [300, 400]


def test_figure_titles_count_pooled_runs_per_setting():
    """Two stored run ids of one setting each number their runs from 0: the toy and Mountain
    Car figures count (run_id, run) pairs, and report the fewest runs of any setting."""
    import matplotlib.pyplot as plt

    from maxminq.analysis import classic_plots as cp

    toy = pd.DataFrame(
        [
            dict(
                mu=0.1,
                algorithm="q_learning",
                n=1,
                run_id=rid,
                run=r,
                episode=e,
                distance=0.1,
                q_a_left=0.0,
            )  # fmt: skip
            for rid in ("a", "b")
            for r in range(3)
            for e in (1, 2)
        ]
        + [
            dict(
                mu=0.1,
                algorithm="maxmin",
                n=2,
                run_id="c",
                run=r,
                episode=e,
                distance=0.1,
                q_a_left=0.0,
            )  # fmt: skip
            for r in range(7)
            for e in (1, 2)
        ]
    )
    fig = cp.toy_distance_figure(toy)
    assert fig.axes[0].get_title() == "μ = +0.1  (6 runs)"  # 3 + 3 pooled q_learning, 7 maxmin
    plt.close(fig)
    mc = pd.DataFrame(
        [
            dict(
                algorithm="maxmin",
                n=2,
                sigma2=10.0,
                step_size=0.1,
                run_id=rid,
                run=r,
                episode=e,
                steps=100,
            )  # fmt: skip
            for rid in ("x", "y")
            for r in range(2)
            for e in (1, 2)
        ]
    )
    fig = cp.mc_sensitivity_figure(mc)
    assert fig.axes[0].get_title().startswith("Mountain Car, 4 runs, 2 episodes")
    plt.close(fig)


def test_toy_gammas_are_the_column_with_the_papers_one_where_unset() -> None:
    """Runs stored before a sweep set gamma have no value: the paper's gamma = 1."""
    assert T.toy_gammas(pd.DataFrame({"mu": [0.1, -0.1]})).tolist() == [1.0, 1.0]
    mixed = pd.DataFrame({"mu": [0.1, 0.1], "gamma": [0.5, np.nan]})
    assert T.toy_gammas(mixed).tolist() == [0.5, 1.0]


def test_second_half_bias_leaves_out_the_interval_straddling_the_midpoint() -> None:
    """A 4,000-step run logging every 1,500 steps (rows at 1,500, 3,000 and a last partial
    one at 4,000): the midpoint 2,000 lies inside (1,500, 3,000], whose probes may come from
    step 1,500 on, so only (3,000, 4,000] counts; a 3,000-step run logging every 1,000
    steps pools (2,000, 3,000] alone, not 1,000-3,000; a seed that diverged before the
    midpoint has no second-half value."""
    cols = ["seed", "step", "bias_mean", "bias_std", "bias_abs", "bias_n"]

    def table(rows: list[tuple[int, int, float, int]]) -> pd.DataFrame:
        return pd.DataFrame([[s, step, m, 0.0, abs(m), n] for s, step, m, n in rows], columns=cols)

    m = table([
        (0, 1500, 9.0, 4), (0, 3000, 7.0, 4), (0, 4000, 1.0, 2),
        (1, 1500, 9.0, 4), (1, 3000, 7.0, 4), (1, 4000, -3.0, 5),
        (2, 1500, 9.0, 4),  # diverged at 1,500
    ])  # fmt: skip
    got = T.second_half_bias(m, pd.Series(dtype=object), ())
    assert sorted(got) == [-3.0, 1.0]
    m = table([(0, 1000, 5.0, 3), (0, 2000, 4.0, 1), (0, 3000, 2.0, 1)])
    assert list(T.second_half_bias(m, pd.Series(dtype=object), ())) == [2.0]  # not 3.0


def test_claims_and_tables_write_huge_numbers_with_an_exponent() -> None:
    from maxminq.analysis import claims as C

    assert C._fmt(-1.6e303) == "-1.6e+303"
    assert R._f(8.2e306) == "8.2e+306"
    assert C._fmt(12345.6) == "12346" and R._f(12345.6) == "12346"  # everyday: as before
