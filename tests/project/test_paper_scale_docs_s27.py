"""What the docs say `--scale paper` runs, against the shipped configs' paper scale.

Counts are worked out here from the paper: Sec. 5.2 (DQN and Double DQN at 5 step sizes,
Averaged and Maxmin DQN at 5 step sizes x N = 2..9, 20 runs each) with the authors' training
lengths (REFERENCE: Catcher 3.5e6, Pixelcopter 2e6, LunarLander 1.5e6, MinAtar 5e6 steps),
and Sec. 5.1 / appendix C.2 (Mountain Car: 4 sigma^2 x 5 step sizes x Q-learning, Double Q,
Averaged Q, Maxmin Q).
"""

from __future__ import annotations

from pathlib import Path

from helpers import REPO

from maxminq.experiments.config import load_config

CONFIGS = REPO / "configs"
DOCS = REPO / "docs"

# config -> (name in docs/report.md, training steps of the authors' code)
DEEP = {
    "catcher": ("Catcher", 3_500_000),
    "lunarlander": ("LunarLander", 1_500_000),
    "pixelcopter": ("Pixelcopter", 2_000_000),
    "minatar_asterix": ("MinAtar", 5_000_000),
    "minatar_breakout": ("MinAtar", 5_000_000),
    "minatar_seaquest": ("MinAtar", 5_000_000),
    "minatar_space_invaders": ("MinAtar", 5_000_000),
}


def _flat(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


def test_the_full_reproduction_paragraph_is_the_paper_scale_plan() -> None:
    text = _flat(DOCS / "report.md").split('name="full-reproduction"', 1)[1].split("## ", 1)[0]
    settings = 2 * 5 + 2 * 8 * 5  # 90
    total, longest = 0, 0
    for name, (title, steps) in DEEP.items():
        runs = load_config(CONFIGS / f"{name}.yaml", "paper").runs
        assert len(runs) == settings, name
        sizes = [r.settings["steps"] * len(r.settings["seeds"]) for r in runs]
        assert sum(sizes) == settings * 20 * steps, name
        total += sum(sizes)
        longest = max(longest, *sizes)
        if title != "MinAtar":
            assert f"{title} {settings * 20 * steps / 1e9:.1f}e9" in text, name
    assert f"{settings} settings x 20 seeds" in text
    assert "each MinAtar game 9e9" in text
    assert total == 48_600_000_000 and "about 4.9e10 seed-steps in total" in text
    # One run is one single-thread task: no number of cores runs its 20 x 5e6 steps faster.
    assert longest == 100_000_000 and "(1e8 seed-steps" in text
    assert "single-thread task with its 20 seeds inside it" in text
    mc = load_config(CONFIGS / "mountain_car.yaml", "paper").runs
    assert len(mc) == 4 * 5 * (1 + 1 + 4 + 4) == 200 and "(200 settings" in text


def test_mountain_cars_n_at_each_scale_is_the_one_the_deviations_give() -> None:
    def ns(scale: str) -> dict[str, list[int]]:
        runs = load_config(CONFIGS / "mountain_car.yaml", scale).runs
        out: dict[str, set[int]] = {}
        for r in runs:
            out.setdefault(r.settings["algorithm"], set()).add(r.settings["n"])
        return {alg: sorted(v) for alg, v in out.items()}

    assert ns("quick") == {"q_learning": [1], "double_q": [2], "averaged": [4], "maxmin": [4]}
    paper = ns("paper")
    assert paper["averaged"] == paper["maxmin"] == [2, 4, 6, 8]
    text = _flat(DOCS / "deviations.md")
    assert "Mountain Car's N and K: 4 in `maxminq experiment mountain-car`" in text
    assert (
        "`--scale paper` (`maxminq reproduce`, `maxminq sweep mountain_car.yaml`) sweeps "
        "N = K = 2, 4, 6, 8" in text
    )
    # 4 sigma^2 x 5 step sizes x (1 + 1 + 4 + 4) against x 4 algorithms at N = K = 4
    assert "200 settings where N = K = 4 gives 80" in text
