"""The deep claims quote the report table's IQM interval of the runs they compare also
where the table splits a setting (docs/report.md, Statistics): the table's setting i counts
its extra rows, so the claims' own summary (fewer rows) drew the same runs' interval from
another stream. Intervals recomputed by hand with plain NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_results import _store_runs, percentile_iqm_ci

from maxminq.analysis.report import build_report


@pytest.mark.usefixtures("unrendered_figures")  # checks numbers, not pictures
def test_deep_claims_quote_the_split_tables_interval_of_the_same_runs(tmp_path: Path) -> None:
    seeds = list(range(6))
    rng = np.random.default_rng(11)

    def tables(returns: np.ndarray) -> dict[str, pd.DataFrame]:
        # one test episode per seed: a seed's score is its return
        ep = pd.DataFrame({"seed": seeds, "step": 100, "return": 0.0})
        return {
            "episodes": ep,
            "tests": pd.DataFrame({"seed": seeds, "episode": 0, "return": returns}),
        }

    values = {
        "q0": rng.normal(5.0, 2.0, 6),  # DQN at gamma 0.9
        "q1": rng.normal(5.0, 2.0, 6),  # DQN at gamma 0.99
        "m2": rng.normal(8.0, 2.0, 6),  # Maxmin N = 2, update_members 1 (the default)
        "m2u": rng.normal(9.0, 2.0, 6),  # Maxmin N = 2, update_members 2
        "m4": rng.normal(12.0, 2.0, 6),  # Maxmin N = 4, update_members 1: Maxmin's best
    }
    base = {"env_id": "Pixelcopter-v0", "lr": 1e-3, "steps": 100, "seeds": seeds}
    dqn = base | {"agent": "dqn", "n": 1, "update_members": 1}
    mm = base | {"agent": "maxmin-dqn", "gamma": 0.99}
    _store_runs(
        tmp_path,
        [
            ("q0", "deep", dqn | {"gamma": 0.9}, tables(values["q0"])),
            ("q1", "deep", dqn | {"gamma": 0.99}, tables(values["q1"])),
            ("m2", "deep", mm | {"n": 2, "update_members": 1}, tables(values["m2"])),
            ("m2u", "deep", mm | {"n": 2, "update_members": 2}, tables(values["m2u"])),
            ("m4", "deep", mm | {"n": 4, "update_members": 1}, tables(values["m4"])),
        ],
    )
    reps = 400
    claims = {c.text: c for c in build_report(tmp_path, reps=reps).claims}
    # The table's rows, in sorted (env, agent, N, step size, gamma, update_members) order:
    # 0 DQN gamma 0.9, 1 DQN gamma 0.99, 2 Maxmin N=2 u=1, 3 Maxmin N=2 u=2, 4 Maxmin N=4.
    table = pd.read_csv(tmp_path / "summary" / "deep_final.csv")
    assert len(table) == 5
    by_hand = {name: percentile_iqm_ci(values[name], reps, [0, i]) for i, name in
               enumerate(["q0", "q1", "m2", "m2u", "m4"])}  # fmt: skip
    assert np.allclose(table[["iqm_low", "iqm_high"]].to_numpy(), list(by_hand.values()))
    # The claims use u = 1 only and pool DQN's two gammas (no default: 12 runs, which no
    # row of the table holds): their own summary's rows 0 DQN, 1 Maxmin N=2, 2 Maxmin N=4.
    pooled = percentile_iqm_ci(np.concatenate([values["q0"], values["q1"]]), reps, [0, 0])
    nums = claims["Maxmin DQN ≥ DQN on Pixelcopter"].numbers
    assert np.allclose((nums["maxmin_low"], nums["maxmin_high"]), by_hand["m4"], rtol=1e-12)
    assert np.allclose((nums["dqn_low"], nums["dqn_high"]), pooled, rtol=1e-12)
    text = "Pixelcopter: Maxmin DQN with larger N (N=4) reaches final performance ≥ smaller N (N=2)"
    nums = claims[text].numbers
    assert np.allclose((nums["N4_low"], nums["N4_high"]), by_hand["m4"], rtol=1e-12)  # not [0, 2]
    assert np.allclose((nums["N2_low"], nums["N2_high"]), by_hand["m2"], rtol=1e-12)


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_toy_claims_section_names_the_runs_gone_non_finite_it_left_out(tmp_path: Path) -> None:
    from analysis_results import toy_results, write_store

    toy = toy_results(runs=6, episodes=20)
    # Q-learning's run 0 goes NaN at episode 10 (at both mu): the claims compare 5 runs of
    # it with 6 of the others ('5 vs 6 runs'), which alone did not say why
    bad = (toy["algorithm"] == "q_learning") & (toy["run"] == 0) & (toy["episode"] >= 10)
    toy.loc[bad, ["distance", "p_left", "q_a_left"]] = np.nan
    out = tmp_path / "res"
    write_store(out, {"toy_mdp": toy})
    report = build_report(out, reps=50)
    assert any("5 vs 6 runs" in c.evidence for c in report.claims)
    md = (out / "report.md").read_text()
    start = md.index("### Toy MDP (", md.index("## Claims checked"))
    section = md[start : md.index("\n#", start + 1)]
    assert (
        "Runs that went non-finite (NaN or inf), left out of these checks (every episode of "
        "each; as from the toy table): Q-learning: 1 of 6 runs at mu = +0.1 and at mu = -0.1 "
        "went non-finite, at episode 10." in section
    )
