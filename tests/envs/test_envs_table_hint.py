"""``maxminq envs`` (the table) ends by saying how to see one id in full, and the table in
docs/environments.md is what it prints."""

from __future__ import annotations

import pytest
from helpers import REPO

from maxminq.cli import main

HINT = "maxminq envs --env ID: one id's observation, actions and every default."


def test_the_table_ends_with_how_to_see_one_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["envs"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip("\n").splitlines()[-1] == HINT
    docs = (REPO / "docs" / "environments.md").read_text()
    assert f"```\n{out.rstrip()}\n```" in docs
