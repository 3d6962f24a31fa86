"""Pictures of trees without a browser: the level packing, the terminal drawing, the page
and the views the evaluations build."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from induce.data.ptb import parse_trees
from induce.evaluate.brackets import evaluate_brackets
from induce.evaluate.deps import evaluate_deps
from induce.render.html import page
from induce.render.layout import columns, pack, place_arcs
from induce.render.terminal import draw
from induce.render.views import MISSED, WRONG, SentenceView, arcs_of, parse_view

TREE = (
    "(S (NP (DT the) (JJ old) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog)) "
    "(PP (IN in) (NP (DT the) (NN park)))) (. .))"
)
HEADS = [3, 3, 4, 0, 6, 4, 4, 9, 7, 4]
LABELS = ["det", "amod", "nsubj", "root", "det", "obj", "prep", "det", "pobj", "punct"]
WORDS = "the old man saw a dog in the park .".split()

intervals = st.lists(
    st.tuples(st.integers(0, 40), st.integers(0, 12)).map(lambda t: (t[0], t[0] + t[1])),
    max_size=25,
)


@given(intervals)
def test_packed_levels_never_share_columns_and_nest(spans):
    levels = pack(spans)
    assert all(level >= 1 for level in levels)
    for i, (a, b) in enumerate(spans):
        for j, (c, d) in enumerate(spans):
            if i == j:
                continue
            if levels[i] == levels[j]:
                assert b < c or d < a, (spans[i], spans[j], levels[i])
            if a <= c and d <= b and (a, b) != (c, d):
                assert levels[i] > levels[j]


@given(
    st.lists(st.integers(0, 30), min_size=1, max_size=30).flatmap(
        lambda lens: st.tuples(
            st.just(["w" * (n % 9 + 1) for n in lens]),
            st.lists(st.integers(0, len(lens)), min_size=len(lens), max_size=len(lens)),
        )
    )
)
def test_arcs_of_any_heads_are_placed(case):
    words, heads = case
    heads = [h if h != k + 1 else 0 for k, h in enumerate(heads)]  # no self loops
    placed, levels = place_arcs(arcs_of(heads), columns(words))
    assert len(placed) == len(words)
    for item in placed:
        assert item.dep_x != item.head_x or item.arc.head == 0
        assert 1 <= item.level <= levels


def test_terminal_drawing_has_an_arrow_per_word_and_the_brackets():
    view = parse_view(1, WORDS, HEADS, LABELS, _tree(TREE))
    text = draw(view)
    lines = text.splitlines()
    word_row = next(k for k, line in enumerate(lines) if line.startswith("the old man"))
    arrows = lines[word_row - 1]
    assert arrows.count("▼") == len(WORDS)
    # every arrow sits over its word
    for k, word in enumerate(WORDS):
        assert arrows[columns(WORDS, view.tags).middle(k)] == "▼", word
    assert "●root" in text and "det" in text and "obj" in text
    assert lines[word_row + 1].split() == "DT JJ NN VBD DT NN IN DT NN .".split()
    below = "\n".join(lines[word_row + 2 :])
    for label in ("NP", "PP", "VP", "S"):
        assert label in below
    assert below.count("└") == below.count("┘") == 6  # NP NP NP PP VP S


def test_marked_arcs_show_in_the_terminal():
    gold = [2, 0, 2]
    view = SentenceView(1, ["a", "b", "c"], below=None)
    from induce.render.views import Layer, missed_arcs

    view.above = Layer("gold", arcs=missed_arcs(gold, [2, 0, 1], None))
    view.below = Layer("prediction", arcs=arcs_of([2, 0, 1], None, gold))
    plain = draw(view)
    assert plain.count("✗") == 1 and plain.count("?") == 1
    assert "\x1b[31m" in draw(view, colour=True)


def test_page_is_self_contained_with_an_arc_per_word():
    html = page([parse_view(4, WORDS, HEADS, LABELS, _tree(TREE))], "t <&>")
    assert "<title>t &lt;&amp;&gt;</title>" in html
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    section = html[html.index('<section class="sentence"') :]
    assert len(re.findall(r'<path class="arc[ "]', section)) == len(WORDS)
    assert len(re.findall(r'<path class="span[ "]', section)) == 6
    assert 'id="s4"' in html


def test_words_are_escaped_in_the_picture():
    html = page([parse_view(1, ["<b>", "&"], [0, 1], None, None)], "x")
    assert "<b>" not in html.split("<main>")[1].split("<script>")[0].replace("<b>1</b>", "")
    assert "&lt;b&gt;" in html


def test_wide_and_combining_characters_keep_the_arrows_over_their_words():
    """Columns were counted as code points: after 東京 (two terminal columns each) or a
    decomposed é (two code points, one column) every arrow stood off its word."""
    from induce.render.layout import width

    words = ["the", "東京", "man", "cafe\u0301", "ran"]
    view = parse_view(1, words, [3, 3, 5, 5, 0], None, None)
    lines = draw(view).splitlines()
    row = next(k for k, line in enumerate(lines) if line.startswith("the"))
    cols = columns(words)
    shown = lines[row]
    for k, word in enumerate(words):
        # the text before the word takes as many terminal columns as its place says
        start = cols.starts[k] + (cols.widths[k] - width(word)) // 2
        assert width(shown[: shown.index(word)]) == start, word
        assert lines[row - 1][cols.middle(k)] == "▼", word  # one column a box character
    assert width("東京") == 4 and width("cafe\u0301") == 4


def test_control_characters_are_shown_not_written_into_the_terminal():
    """An ESC in a word reached the terminal raw: a word could recolour or clear it."""
    view = parse_view(1, ["a\x1b[2Jb", "c"], [0, 1], ["x\x07", "root"], None)
    text = draw(view)
    assert "\x1b" not in text and "\x07" not in text and "a\u241b[2Jb" in text


def test_wide_labels_keep_their_columns():
    view = parse_view(1, ["the", "dog", "barked", "loudly", "now"], [3, 3, 0, 3, 3], None, None)
    from induce.render.views import Layer

    view.above = Layer("x", arcs=arcs_of([3, 3, 0, 3, 3], ["主語", "主", "root", "a", "b"], None))
    lines = draw(view).splitlines()
    row = next(k for k, line in enumerate(lines) if line.startswith("the"))
    from induce.render.layout import width

    assert width(lines[row - 1]) == len(lines[row - 1])  # the arrow row: one column a char
    assert all(width(line) <= columns(view.words).total for line in lines[1:row])


def test_control_characters_are_shown_not_written_into_the_page():
    """A \\x01 in a word went raw into the inline SVG: no longer well-formed XML."""
    import xml.dom.minidom

    html = page([parse_view(1, ["a\x01b\uffff", "c"], [0, 1], None, None)], "x")
    assert "\x01" not in html and "\uffff" not in html and "a\u2401b\ufffd" in html
    svg = html[html.index("<svg") : html.index("</svg>") + 6]
    xml.dom.minidom.parseString(svg)  # well-formed


def test_induced_trees_drop_their_x_labels():
    view = parse_view(1, ["a", "b", "c"], None, None, _tree("(X (X (X a) (X b)) (X c))"))
    assert view.above is None and view.tags is None
    assert view.below is not None and [s.label for s in view.below.spans or []] == ["", ""]


GOLD = "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat))))))\n"
PRED = "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (PP (IN on) (NP (DT the) (NN mat)))))\n"


def test_bracket_views_mark_wrong_and_missed_brackets(write):
    report = evaluate_brackets(write("g.mrg", GOLD), write("p.mrg", PRED), views=True)
    (view,) = report.views
    assert view.words == ["The", "cat", "sat", "on", "the", "mat"]
    gold = {(s.start, s.end, s.label): s.mark for s in view.above.spans}  # type: ignore[union-attr]
    pred = {(s.start, s.end, s.label): s.mark for s in view.below.spans}  # type: ignore[union-attr]
    assert gold[(2, 6, "VP")] == MISSED and gold[(0, 2, "NP")] == ""
    assert pred[(2, 3, "VP")] == WRONG and pred[(3, 6, "PP")] == ""
    score = report.result.sentences[0]
    assert view.score == 200 * score.matched / (score.gold + score.test)
    assert view.where.endswith("g.mrg:1")
    assert evaluate_brackets(write("g2.mrg", GOLD), write("p2.mrg", PRED)).views == []


def test_dependency_views_mark_wrong_arcs(write):
    gold = write("g.dp", "The\tDT\t2\ncat\tNN\t3\nsat\tVBD\t0\n.\t.\t3\n\n")
    pred = write("p.dp", "The\tDT\t3\ncat\tNN\t3\nsat\tVBD\t0\n.\t.\t3\n\n")
    report = evaluate_deps(gold, pred, views=True)
    (view,) = report.views
    assert view.words == ["The", "cat", "sat"]  # punctuation is not scored
    assert [a.mark for a in view.below.arcs] == [WRONG, "", ""]  # type: ignore[union-attr]
    assert [a.mark for a in view.above.arcs] == [MISSED, "", ""]  # type: ignore[union-attr]
    assert view.score is not None and abs(view.score - 200 / 3) < 1e-9


def _tree(text: str):
    return parse_trees(text).trees[0]
