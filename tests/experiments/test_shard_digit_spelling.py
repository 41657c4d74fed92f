"""``--shard K/M`` takes K and M in ASCII digits: '١/٢' (Arabic-Indic digits) was read as 1/2,
numbers nobody typed, and '²/2' was refused only because ``int('²')`` happens to fail."""

from __future__ import annotations

import pytest

from maxminq.errors import UsageError
from maxminq.experiments.shard import Shard, parse_shard


@pytest.mark.parametrize("text", ["\u0661/\u0662", "1/\u0662", "\u00b2/2"])
def test_other_digits_are_refused_naming_shard(text: str) -> None:
    with pytest.raises(UsageError, match="--shard: expected K/M"):
        parse_shard(text)


def test_ascii_digits_with_spaces_still_read() -> None:
    assert parse_shard(" 1/2 ") == Shard(1, 2)
    assert parse_shard((2, 3)) == Shard(2, 3)
