"""Links of the user documentation (README.md, docs/*.md and the READMEs of docs/runs and
examples): every relative link and image names a file of the repository that exists, and
every ``#anchor`` a heading (or an ``<a name>`` tag) of its target, slugged as GitHub
does. The README was split into docs/ pages on 2026-11-24; a link or figure path copied
from one page to another without adjusting it is what this catches."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docs_text import DOCS, ROOT, headings

PAGES = [
    ROOT / "README.md",
    *sorted(DOCS.glob("*.md")),
    DOCS / "runs" / "README.md",
    ROOT / "examples" / "README.md",
]


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")


EXPLICIT = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.I)


def slug(title: str) -> str:
    """GitHub's anchor for a heading: its rendered text (no code ticks, emphasis or link
    targets), lowercase, punctuation removed, each space a '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # [text](target) -> text
    text = re.sub(r"[`*]", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # \w keeps letters, digits and '_'
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a page offers: its headings' slugs (a repeated one numbered -1, -2, ...,
    as GitHub numbers them) and those of ``<a name="...">`` (or ``id``) tags."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, title, _ in headings(text):
        base = slug(title)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found | set(EXPLICIT.findall(text))


def links(text: str) -> list[str]:
    """The targets of a page's Markdown links and images (their text may wrap across
    lines), outside fenced blocks and code spans, external ones (``scheme:``) left out."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    prose = re.sub(r"(`+)(.+?)\1", "", prose, flags=re.S)  # code spans quote, do not link
    return [t for t in LINK.findall(prose) if not re.match(r"[a-z][a-z+.-]*:", t)]


def broken(page: Path) -> list[str]:
    """What is wrong with ``page``'s links, one line each (empty when nothing is)."""
    problems = []
    for target in links(page.read_text(encoding="utf-8")):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.is_relative_to(ROOT) or not file.exists():
            problems.append(f"{target}: no file {path}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text("utf-8")):
            problems.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
        elif anchor and file.suffix != ".md":
            problems.append(f"{target}: an anchor into a file that is not Markdown")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    assert broken(page) == []


def test_the_pages_link_to_figures_and_to_each_other() -> None:
    """The check reads real links: the figures, the pages' links to one another and to the
    README's Benchmarks, and the README's links into the pages."""
    targets = {p.relative_to(ROOT).as_posix(): links(p.read_text("utf-8")) for p in PAGES}
    assert sum(t.startswith("figures/") for t in targets["docs/deep-results.md"]) == 8
    assert "../README.md#benchmarks" in targets["docs/deviations.md"]
    assert "docs/operators-and-theory.md#theory" in targets["README.md"]
    assert "#why-minatar-maxmin-n--8-stays-below-075-x-dqn" in targets["README.md"]
    assert "#why-the-classic-kernels-stay-below-1000x-the-reference-loop" in targets["README.md"]


def test_slugs_follow_githubs_rules() -> None:
    """Headings of these pages whose anchors GitHub shows as written here."""
    assert slug("Why MinAtar Maxmin N = 8 stays below 0.75 x DQN") == (
        "why-minatar-maxmin-n--8-stays-below-075-x-dqn"
    )
    assert slug("Results at the authors' posted settings") == (
        "results-at-the-authors-posted-settings"
    )
    assert slug("Tabular and tile-coding (`maxminq.tabular.toy_mdp`, `maxminq.linear`)") == (
        "tabular-and-tile-coding-maxminqtabulartoy_mdp-maxminqlinear"
    )
    assert anchors("## Theory\n\n```\n# not a heading\n```\n### Theory\n") == {"theory", "theory-1"}


def test_a_broken_link_or_anchor_is_reported(tmp_path: Path, monkeypatch) -> None:
    """The checker itself: a figure path left as the README wrote it (``docs/figures/...``
    from inside docs/), a missing page, an anchor no heading has, and a link out of the
    repository are each reported; a code span and a fenced block are not links."""
    import test_docs_links as me

    monkeypatch.setattr(me, "ROOT", tmp_path)
    (tmp_path / "docs" / "figures").mkdir(parents=True)
    (tmp_path / "docs" / "figures" / "a.png").write_bytes(b"")
    (tmp_path / "README.md").write_text("# Top\n\n## Benchmarks\n")
    page = tmp_path / "docs" / "p.md"
    page.write_text(
        "# P\n\n![ok](figures/a.png) ![moved](docs/figures/a.png) [gone](q.md)\n"
        "[b](../README.md#benchmarks) [x](../README.md#deep-agents) [up](../../x.md)\n"
        "[self](#p) `[code](nothing.md)` [web](https://example.org/y.md) [two\nlines](q2.md)\n"
        "```\n[fenced](nothing.md)\n```\n"
    )
    assert broken(page) == [
        "docs/figures/a.png: no file docs/figures/a.png",
        "q.md: no file q.md",
        "../README.md#deep-agents: no heading #deep-agents in README.md",
        "../../x.md: no file ../../x.md",
        "q2.md: no file q2.md",
    ]


def test_every_docs_page_is_in_the_readme_index_with_a_title() -> None:
    """Each docs/*.md page opens with a '# ' title and a paragraph saying what it covers,
    and the README's Documentation index links to it: no page a reader cannot find."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    index = readme.split("\n## Documentation\n", 1)[1].split("\n## ", 1)[0]
    pages = sorted(DOCS.glob("*.md"))
    assert len(pages) >= 8
    for p in pages:
        lines = p.read_text(encoding="utf-8").split("\n")
        assert lines[0].startswith("# ") and lines[1] == "" and lines[2], p.name
        assert f"](docs/{p.name})" in index, p.name


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_heading_levels_nest(page: Path) -> None:
    """One '# ' title first, and no heading more than one level below the one before it (a
    section moved from the README keeps its subsections one level under its title)."""
    marks = headings(page.read_text(encoding="utf-8"))
    assert [lv for lv, _, _ in marks].count(1) == 1 and marks[0][0] == 1
    pairs = zip(marks, marks[1:], strict=False)
    skips = [t for (prev, _, _), (lv, t, _) in pairs if lv > prev + 1]
    assert skips == []
