"""Second reading of session 18's commits (h8): what the first fixes left out.

1. The examples refuse an ``--out`` that lies under a file (``--out notes.txt/figs``) in one
   line before any work, as they refuse one that is a file: it ended in a
   NotADirectoryError traceback.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _example(script: str):  # noqa: ANN202 - a module loaded from a file
    spec = importlib.util.spec_from_file_location(f"_second18b_{script[:-3]}", EXAMPLES / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_refuses_an_out_under_a_file(script: str, tmp_path, capsys) -> None:
    """``--out notes.txt/figs``: the folder cannot be made in a file. Before, the check
    looked at the path itself only (it does not exist) and the script ended in a
    NotADirectoryError traceback, for some after their work."""
    module = _example(script)
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine\n")
    target = blocker / "figs" / "v1"
    with pytest.raises(SystemExit) as stop:
        module.parse_args(["--quick", "--out", str(target)])
    assert stop.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith(f"error: --out: cannot create the folder {target} (Not a directory)")
    assert blocker.read_text() == "mine\n"


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_takes_an_out_folder_still_to_make(script: str, tmp_path) -> None:
    """The check refuses no folder that can be made (nested, not there yet) and makes none."""
    module = _example(script)
    target = tmp_path / "a.b" / "figs"
    args = module.parse_args(["--quick", "--out", str(target)])
    assert Path(args.out) == target
    assert not (tmp_path / "a.b").exists()


def test_envs_prints_the_lr_n_and_intervals_that_train_resolves() -> None:
    """``maxminq envs --env ID`` shows what ``maxminq train`` then uses (an agent's --lr and
    --n, --bias-every and --checkpoint-every, --steps, --eps-decay-steps), for every
    registered environment and agent: read back from the printed text, so a listing that
    rounds a step size, drops an agent or shows the registry's field instead of the
    resolved value fails."""
    import re

    from maxminq.commands.envs import defaults_text
    from maxminq.deep.config import AGENT_NAMES, TrainConfig
    from maxminq.envs.registry import PAPER_ENVS, get_env_defaults

    for env_id in [*PAPER_ENVS, "CartPole-v1"]:
        text = defaults_text(get_env_defaults(env_id))
        for agent in AGENT_NAMES:
            op = "maxmin" if agent == "generalized-dqn" else None  # its required G
            resolved = TrainConfig(env_id=env_id, agent=agent, operator=op).resolve()
            row = re.search(rf"^  {agent} +--lr (\S+) +--n (\d+)", text, re.M)
            assert row is not None, (env_id, agent)
            assert (float(row[1]), int(row[2])) == (resolved.lr, resolved.n), (env_id, agent)
        for option, value in (
            ("--bias-every", resolved.bias_every),
            ("--checkpoint-every", resolved.checkpoint_every),
            ("--steps", resolved.steps),
            ("--eps-decay-steps", resolved.eps_decay_steps),
        ):
            shown = re.search(rf"^  {option} +([\d,]+)", text, re.M)
            assert shown is not None and int(shown[1].replace(",", "")) == value, (env_id, option)
