"""The examples' --out: where it goes, a folder still to make, and an --out that is or lies
under a file refused in one line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from helpers import REPO

EXAMPLES = REPO / "examples"


def _example(script: str):  # noqa: ANN202 - a module loaded from a file
    spec = importlib.util.spec_from_file_location(f"_second18b_{script[:-3]}", EXAMPLES / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_help_says_where_out_goes(script: str, capsys) -> None:
    """Each example's ``--out OUT`` had no help text, so ``--help`` did not say where the
    files land by default; now it names the default folder (checked against the parser's
    own default) and that the folder is created."""
    spec = importlib.util.spec_from_file_location(f"_journey18_{script[:-3]}", EXAMPLES / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    default = module.parse_args([]).out
    with pytest.raises(SystemExit):
        module.parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default {default})" in text
    assert "--out OUT output folder, created if needed" in text


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_refuses_an_out_that_is_a_file(script: str, tmp_path, capsys) -> None:
    """``python examples/NAME.py --out FILE`` (a typo, or an existing file's name) ended in
    a FileExistsError or StoreError traceback, in four of the five scripts after their
    work; now the options are refused in one line naming --out, before any work."""
    spec = importlib.util.spec_from_file_location(f"_journey18o_{script[:-3]}", EXAMPLES / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    with pytest.raises(SystemExit) as stop:
        module.parse_args(["--quick", "--out", str(target)])
    assert stop.value.code == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .splitlines()[-1]
        .endswith(f"error: --out: {target} exists and is not a folder")
    )
    assert target.read_text() == "mine\n"


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
