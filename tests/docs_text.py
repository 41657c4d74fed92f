"""The user documentation as the tests read it: README.md (the front page: Quick start, What
reproduces, Layout, the Documentation index, Benchmarks) and the pages of docs/ (one per
topic). Tests that check the docs against the code read the page where their text lives."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def documents() -> dict[str, str]:
    """Every documentation file, README.md first, then docs/*.md by name: path (relative to
    the repository) -> text."""
    paths = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in paths}


def all_text() -> str:
    """README.md and every docs/*.md page, joined (for text that may sit on any page)."""
    return "\n\n".join(documents().values())


def page(name: str) -> str:
    """One page's text: ``"README"`` for README.md, else ``docs/NAME.md``."""
    path = ROOT / "README.md" if name == "README" else DOCS / f"{name}.md"
    return path.read_text(encoding="utf-8")


def headings(text: str) -> list[tuple[int, str, int]]:
    """The Markdown headings of ``text`` outside fenced code: (level, title, line index)."""
    found, fence = [], False
    for i, line in enumerate(text.split("\n")):
        if line.startswith("```"):
            fence = not fence
        elif not fence and (m := re.match(r"(#{1,6}) (.+)$", line)):
            found.append((len(m.group(1)), m.group(2).strip(), i))
    return found


def section(name: str, title: str) -> str:
    """The text under the one heading ``title`` of page ``name`` (see ``page``), any level,
    up to the next heading of the same or a higher level (headings in code blocks are not
    headings)."""
    text = page(name)
    lines = text.split("\n")
    marks = headings(text)
    at = [k for k, (_, t, _) in enumerate(marks) if t == title]
    assert len(at) == 1, f"{name}: heading {title!r} found {len(at)} times"
    level, _, start = marks[at[0]]
    end = next((i for lv, _, i in marks[at[0] + 1 :] if lv <= level), len(lines))
    return "\n".join(lines[start + 1 : end])
