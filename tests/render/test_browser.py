"""The HTML pages in a real headless browser (Chromium from the system packages, driven by
Playwright): they render, every sentence has an arc per word, the keys move between
sentences, and the console stays free of errors.  Skipped when Playwright or a Chromium
binary is missing (``pip install 'induce[browser]'``, ``apt-get install chromium``)."""

from __future__ import annotations

import os
import shutil

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.ptb import parse_trees
from induce.render.html import write_page
from induce.render.views import parse_view

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


def _chromium() -> str | None:
    for name in (os.environ.get("INDUCE_CHROMIUM"), "chromium", "chromium-browser"):
        path = shutil.which(name) if name else None
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def browser():
    binary = _chromium()
    if binary is None:
        pytest.skip("no chromium binary (apt-get install chromium, or set INDUCE_CHROMIUM)")
    with playwright.sync_playwright() as p:
        try:
            launched = p.chromium.launch(executable_path=binary, args=["--no-sandbox"])
        except playwright.Error as err:  # a binary that cannot start here
            pytest.skip(f"chromium does not start: {str(err).splitlines()[0]}")
        yield launched
        launched.close()


def _open(browser, path):
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else 0)
    page.on("pageerror", lambda err: problems.append(str(err)))
    page.on("request", lambda r: problems.append(r.url) if not r.url.startswith("file:") else 0)
    page.goto(f"file://{path}")
    page.wait_for_load_state("load")
    return page, problems


def _arcs_per_sentence(page, layer: str) -> list[tuple[int, int]]:
    """``(words, arcs)`` of each sentence's ``layer``."""
    pairs = page.evaluate(
        """layer => Array.from(document.querySelectorAll("section.sentence")).map(s => [
            s.querySelectorAll("svg text.word").length,
            s.querySelectorAll(`g[data-layer="${layer}"] path.arc`).length])""",
        layer,
    )
    return [tuple(pair) for pair in pairs]


DEPS_GOLD = (
    "The\tDT\t2\ncat\tNN\t3\nsat\tVBD\t0\n.\t.\t3\n\n"
    "Dogs\tNNS\t2\nbark\tVBP\t0\nloudly\tRB\t2\n\n"
    "It\tPRP\t2\nrained\tVBD\t0\n\n"
)
DEPS_PRED = (
    "The\tDT\t3\ncat\tNN\t3\nsat\tVBD\t0\n.\t.\t3\n\n"
    "Dogs\tNNS\t2\nbark\tVBP\t0\nloudly\tRB\t2\n\n"
    "It\tPRP\t0\nrained\tVBD\t1\n\n"
)


def test_dependency_page_renders_with_an_arc_per_word(browser, write, tmp_path):
    out = tmp_path / "deps.html"
    gold, pred = write("g.dp", DEPS_GOLD), write("p.dp", DEPS_PRED)
    result = CliRunner().invoke(app, ["evaluate", "deps", gold, pred, "--html", str(out), "-q"])
    assert result.exit_code == 0, result.output
    page, problems = _open(browser, out)
    assert page.locator("section.sentence").count() == 3
    for layer in ("gold", "prediction"):
        counts = _arcs_per_sentence(page, layer)
        assert counts == [(3, 3), (3, 3), (2, 2)], (layer, counts)
    assert page.locator("g[data-layer=prediction] path.arc.wrong").count() == 3
    assert page.locator("g[data-layer=gold] path.arc.missed").count() == 3
    box = page.locator("section.sentence svg").first.bounding_box()
    assert box is not None and box["width"] > 50 and box["height"] > 50
    # the index lists every sentence with its score, and the keys move between sentences
    assert page.locator("nav#index tr.row").count() == 3
    assert page.locator("nav#index tr.row td.score").first.inner_text() == "66.67"
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert page.evaluate("location.hash") == "#s3"
    assert page.locator("section.sentence.current").get_attribute("id") == "s3"
    page.keyboard.press("k")
    assert page.locator("nav#index tr.current td.num").inner_text() == "2"
    page.keyboard.press("End")
    assert page.evaluate("location.hash") == "#s3"
    page.locator("nav#index th", has_text="score").click()  # lowest score first
    assert page.locator("nav#index tr.row td.num").first.inner_text() == "3"
    assert problems == []


def test_bracket_page_renders_brackets_and_mistakes(browser, write, tmp_path):
    gold = write(
        "g.mrg",
        "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat))))))\n"
        "(TOP (S (NP (PRP It)) (VP (VBD rained)) (. .)))\n",
    )
    out = tmp_path / "brackets.html"
    args = ["evaluate", "brackets", gold, "--baseline", "right", "--html", str(out), "-q"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    page, problems = _open(browser, out)
    assert page.locator("section.sentence").count() == 2
    assert page.locator("g[data-layer=gold] path.span").count() >= 6
    assert page.locator("g[data-layer=prediction] path.span.wrong").count() >= 1
    assert page.locator("svg text.word").count() == 6 + 2  # COLLINS deletes the "."
    assert problems == []


def test_parse_page_renders_arcs_and_a_tree(browser, tmp_path):
    words = "the old man saw a dog in the park .".split()
    heads = [3, 3, 4, 0, 6, 4, 4, 9, 7, 4]
    tree = (
        "(S (NP (DT the) (JJ old) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog)) "
        "(PP (IN in) (NP (DT the) (NN park)))) (. .))"
    )
    views = [parse_view(k, words, heads, None, parse_trees(tree).trees[0]) for k in (1, 2)]
    out = tmp_path / "parse.html"
    write_page(out, views, "parse", legend=("arcs", "spans"))
    page, problems = _open(browser, out)
    assert _arcs_per_sentence(page, "dependencies") == [(10, 10), (10, 10)]
    assert page.locator("g[data-layer=tree] path.span").count() == 2 * 6
    assert page.locator("svg text.tag").count() == 20
    assert problems == []


def test_the_index_sorts_places_by_their_line_numbers(browser, tmp_path):
    """Sorting by "where" compared text: f.txt:10 came before f.txt:2."""
    views = []
    for k, line in enumerate((10, 2, 9), 1):
        view = parse_view(k, ["a", "b"], [0, 1], None, None)
        view.where = f"f.txt:{line}"
        views.append(view)
    out = tmp_path / "parse.html"
    write_page(out, views, "parse", legend=("arcs",))
    page, problems = _open(browser, out)
    page.locator("nav#index th", has_text="where").click()
    cells = page.locator("nav#index tr.row td:nth-child(2)").all_inner_texts()
    assert cells == ["f.txt:2", "f.txt:9", "f.txt:10"]
    assert problems == []
