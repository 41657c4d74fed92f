"""The claim checks: each test pins a bug found in the verdict logic of
:mod:`maxminq.analysis.claims` or its report, with expected values worked out by hand from
textbook quantiles, not by the code under test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from analysis_results import deep_results, mc_results, write_store

from maxminq.analysis import claims as C
from maxminq.analysis import report as R
from maxminq.analysis import tables as T
from maxminq.analysis.report import build_report
from maxminq.cli import main

# Student's t 97.5% quantiles (tables): 2 and 4 degrees of freedom.
T975_DF2 = 4.302653


T975_DF4 = 2.776445


def _stop_early(results: dict, seeds: list[int], env: str = "Catcher-v0") -> dict:
    """``results`` with the best Maxmin DQN setting's (N=4, step size 1e-3) ``seeds`` stopped
    (diverged) at step 500 of 1,000, their last probes' bias exploding to 50: the store
    then holds no metrics of theirs in the second half."""
    m = results["metrics"]
    mine = (m["env_id"] == env) & (m["agent"] == "maxmin-dqn") & (m["n"] == 4)
    mine &= (m["lr"] == 1e-3) & m["seed"].isin(seeds)
    m = m[~(mine & (m["step"] > 500))].copy()
    m.loc[mine & (m["step"] == 500), "bias_mean"] = 50.0
    r = results["runs"]
    hit = (r["env_id"] == env) & (r["agent"] == "maxmin-dqn") & (r["n"] == 4)
    hit &= (r["lr"] == 1e-3) & r["seed"].isin(seeds)
    r = r.copy()
    r.loc[hit, "status"] = "diverged"
    return results | {"metrics": m, "runs": r}


def test_few_runs_widen_the_interval_to_students_t_not_the_normal_one():
    """Runs 0, 1, 2 (mean 1, SE 1/sqrt(3)) against the same shifted by d: the difference's
    SE is sqrt(2/3) = 0.8165 with Welch df = 4, so its 95% half-width is 2.776 * 0.8165 =
    2.267 (the normal one, 1.96 * 0.8165 = 1.600, passed d = 2 as significant)."""
    a = np.array([0.0, 1.0, 2.0])
    half = T975_DF4 * np.sqrt(2.0 / 3.0)
    assert abs(half - 2.2670) < 1e-3
    for shift, verdict in ((2.0, C.NOT_SUPPORTED), (2.4, C.SUPPORTED)):
        status, evidence, _ = C.compare_means(
            a, a + shift, lower_is_claimed=True, name_a="a", name_b="b"
        )
        assert status == verdict, shift
        assert "± 2.27 at 95%" in evidence
    # Against a value: mean 1, half-width t(2) / sqrt(3) = 2.484; 1 - 2.484 = -1.484.
    assert C.compare_to_value(a, -1.0, above=True, name="a")[0] == C.NOT_SUPPORTED
    assert C.compare_to_value(a, -1.6, above=True, name="a")[0] == C.SUPPORTED
    assert abs(1 - T975_DF2 / np.sqrt(3) - (-1.484)) < 1e-3


def test_equal_means_pass_as_different_at_most_at_the_nominal_rate():
    """3 runs against 3 runs of the same normal law, 4,000 times (fixed seed): a claim "A
    below B" may be supported at most about 2.5% of the time (one side of a 95% interval);
    the normal quantile gave about 6%. 3.5% is 4 binomial SEs above 2.5%."""
    rng = np.random.default_rng(14)
    draws = rng.normal(size=(4000, 2, 3))
    supported = sum(
        C.compare_means(x[0], x[1], lower_is_claimed=True, name_a="a", name_b="b")[0] == C.SUPPORTED
        for x in draws
    )
    assert supported / len(draws) < 0.035, supported


def test_deep_verdicts_name_the_settings_they_rest_on():
    """Like the Mountain Car verdicts, each deep verdict names the settings it compares: in
    the builder's tables the best step size is 1e-3 for every agent (+5) and Maxmin's best N
    is 4 (its level grows with N), so Catcher's 'Maxmin DQN ≥ DQN' rests on Maxmin DQN
    (N=4) at 0.001 and DQN at 0.001; the varying-N claim on Pixelcopter on N=4 and N=2, both
    at 0.001; the bias claims on the same rows (best by return)."""
    claims = C.deep_claims(T.classify(deep_results(seeds=4)))
    (vs_dqn,) = [c for c in claims if c.text == "Maxmin DQN ≥ DQN on Catcher"]
    assert vs_dqn.evidence.endswith(
        "; settings: Maxmin DQN (N=4) step size 0.001; DQN step size 0.001"
    )
    (by_n,) = [c for c in claims if "larger N" in c.text and "final performance" in c.text]
    assert by_n.evidence.endswith(
        "; settings: Maxmin DQN (N=4) step size 0.001; Maxmin DQN (N=2) step size 0.001"
    )
    bias = [c for c in claims if "measured estimation bias is below DQN's" in c.text]
    assert bias and all(
        c.evidence.endswith(
            "; settings (best by return): Maxmin DQN (N=4) step size 0.001; DQN step size 0.001"
        )
        for c in bias
    )


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_insufficient_checks_say_what_would_decide_them(tmp_path: Path):
    """A folder of deep runs with 2 seeds per setting (as at quick scale): every deep check
    is 'insufficient data' for want of a third run, and the report says how many runs would
    decide them and which command gives them."""
    write_store(tmp_path, deep_results(seeds=2))
    build_report(tmp_path, reps=50)
    text = (tmp_path / "report.md").read_text()
    assert "2 and 2 runs (need 3)" in text
    assert "decided by at least 3 runs (seeds) of each setting compared" in text
    assert "`maxminq reproduce --scale paper` (20 seeds per deep setting)" in text


def test_mountain_car_is_not_judged_at_a_variance_where_the_paper_claims_no_advantage():
    """Runs at sigma^2 = 0 only, where all four algorithms need the same 150 steps: the paper
    says they are comparable at small variance, so 'Maxmin below Q-learning' is none of its
    claims there; it was reported 'not supported' as if the paper's claim had failed."""
    mc = mc_results(runs=5)
    claims = C.mountain_car_claims(mc[mc["sigma2"] == 0.0])
    assert len(claims) == 3
    assert all(c.status == C.INSUFFICIENT for c in claims), [c.line() for c in claims]
    assert all("highest σ² here is 0" in c.evidence for c in claims)
    assert all("σ² ≥ 10 decide it" in c.evidence for c in claims)
    # At sigma^2 = 50 in the same tables the check runs as before.
    assert C.mountain_car_claims(mc)[0].status == C.SUPPORTED


def test_theorem_1_is_not_supported_by_a_table_of_one_n(tmp_path: Path, capsys):
    """'maxminq theory --n-max 1' writes one N per M: nothing shows the bias falling with N,
    yet the check said 'supported' with a largest change of -inf (the maximum of none)."""
    out = tmp_path / "theory"
    argv = ["theory", "--out", str(out), "--n-max", "1", "--m-max", "4", "--samples", "200"]
    assert main([*argv, "--variance-samples", "2000", "--no-progress"]) == 0
    bias, variance = C.theory_claims(out)
    assert bias.status == C.INSUFFICIENT, bias.line()
    assert "only N = 1" in bias.evidence and "--n-max 2" in bias.evidence
    assert "inf" not in bias.evidence
    assert variance.status == C.INSUFFICIENT  # no N >= 8 either


def test_bias_verdicts_name_the_seeds_that_diverged_before_the_second_half():
    """8 seeds per setting; Maxmin DQN's bias is -0.2, DQN's 1.0. When 4 of Maxmin's 8 seeds
    stop at the midpoint with an exploding bias, the comparison rests on the 4 survivors:
    the verdict must say that 4 of 8 were left out (it only said '4 vs 8 runs'). With all
    8 stopped the check is 'insufficient data', not silently dropped from the report."""
    needle = "Catcher (beyond the paper): Maxmin DQN's measured estimation bias is below DQN's"
    half = C.deep_claims(T.classify(_stop_early(deep_results(seeds=8), [0, 1, 2, 3])))
    (claim,) = [c for c in half if c.text == needle]
    assert "(mean ± SE; 4 vs 8 runs" in claim.evidence
    assert claim.evidence.endswith(
        "; left out, no bias probe in the second half (stopped early, e.g. diverged): "
        "4 of 8 Maxmin DQN seeds"
    )
    every = C.deep_claims(T.classify(_stop_early(deep_results(seeds=8), list(range(8)))))
    (claim,) = [c for c in every if c.text == needle]
    assert claim.status == C.INSUFFICIENT
    assert "8 of 8 Maxmin DQN seeds" in claim.evidence
    # Nothing stopped early: nothing said.
    (claim,) = [c for c in C.deep_claims(T.classify(deep_results(seeds=8))) if c.text == needle]
    assert "left out" not in claim.evidence


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_report_says_best_settings_are_picked_on_the_runs_they_are_judged_on(tmp_path: Path):
    """The claims at each agent's best setting select and test on the same runs (selection
    bias in favour of the agent with more settings, Maxmin with its N): the report said
    nothing of it, only the README did."""
    write_store(tmp_path, deep_results(seeds=3))
    build_report(tmp_path, reps=50)
    text = " ".join((tmp_path / "report.md").read_text().split())
    claims_part = text[text.index("## Claims checked") : text.index("## Settings and scale")]
    assert "pick it on the same runs they then judge" in claims_part
    assert "such a 'supported' is optimistic" in claims_part


def test_an_undecided_claim_carries_why_set_where_it_was_judged() -> None:
    """Each 'insufficient data' says why in ``Claim.undecided``: 2 seeds per deep setting
    want seeds; 3 seeds of 1,000 steps probed every 1,000 steps ran all their steps without
    a second-half probe; Mountain Car at sigma^2 = 0 only is
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
