"""The head-marked PCFG: reading, sampling against exact derivation probabilities, and the gold
dependencies agreeing with the gold trees."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from induce.data.errors import ConfigError, InputError
from induce.data.types import DepTree
from induce.preprocess.grammar import load_grammar, parse_grammar
from induce.preprocess.grammar_sampling import sample
from induce.structure.trees import spans

TINY = """\
start S
zipf 1.0
S -> NP:nsubj VP*        | 3
S -> VP*                 | 1
NP -> DT:det NN.x*       | 1
VP -> VB*                | 1
VP -> VB* @obj:dobj      | 1
@obj -> NP               | 1
lexicon DT: the a
lexicon NN.x: dog
lexicon VB: runs
"""


def exact_distribution() -> dict[str, float]:
    """Every tree of TINY with its probability, enumerated by hand (the oracle)."""
    det = {"the": 2 / 3, "a": 1 / 3}  # Zipf 1: weights 1 and 1/2
    out: Counter = Counter()
    for subj in (None, "the", "a"):
        p_s = (1 / 4) if subj is None else (3 / 4) * det[subj]
        for obj in (None, "the", "a"):
            p_vp = 0.5 if obj is None else 0.5 * det[obj]
            np_s = f"(NP (DT {subj}) (NN dog)) " if subj else ""
            np_o = f" (NP (DT {obj}) (NN dog))" if obj else ""
            out[f"(S {np_s}(VP (VB runs){np_o}))"] += p_s * p_vp
    return dict(out)


def test_sampling_matches_the_exact_distribution():
    g = parse_grammar(TINY)
    rng = random.Random(5)
    n = 30_000
    counts = Counter(sample(g, rng).tree.to_string() for _ in range(n))
    exact = exact_distribution()
    assert set(counts) == set(exact)
    for tree, p in exact.items():
        sd = (p * (1 - p) / n) ** 0.5
        assert abs(counts[tree] / n - p) < 5 * sd, tree


def test_heads_and_labels_follow_the_marks():
    g = parse_grammar(TINY)
    rng = random.Random(0)
    for _ in range(200):
        s = sample(g, rng)
        tree = s.tree.to_string()
        if tree == "(S (NP (DT the) (NN dog)) (VP (VB runs) (NP (DT a) (NN dog))))":
            assert s.heads == (2, 3, 0, 5, 3)
            assert s.labels == ("det", "nsubj", "root", "det", "dobj")
            return
    pytest.fail("the transitive sentence was never drawn")


def test_same_seed_same_sentences():
    g = load_grammar("english")
    a = [sample(g, random.Random(7)).tree.to_string() for _ in range(3)]
    b = [sample(g, random.Random(7)).tree.to_string() for _ in range(3)]
    assert a == b


def test_builtin_gold_dependencies_agree_with_the_gold_trees():
    """Every constituent is a connected piece of the dependency tree: exactly one of its words
    has its head outside it.  Trees are well formed and words stay under PTB tags."""
    g = load_grammar("english")
    rng = random.Random(1)
    for _ in range(500):
        s = sample(g, rng, max_words=30)
        words = s.words
        assert 2 <= len(words) <= 30
        DepTree(tuple(words), s.heads, tuple(s.tree.tags()), s.labels)  # a tree, one root
        assert all("." not in t or t == "." for t in s.tree.tags())
        for start, end, _ in spans(s.tree):
            outside = [i for i in range(start, end) if not start < s.heads[i] <= end]
            assert len(outside) == 1, (s.tree.to_string(), start, end)


def test_builtin_grammar_has_its_phenomena():
    g = load_grammar("english")
    words = g.words()
    assert len(words) >= 300
    tags_of: dict[str, set] = {}
    for symbol, choices in g.lexicon.items():
        for w in choices.items:
            tags_of.setdefault(w, set()).add(g.tag(symbol))
    ambiguous = {w for w, t in tags_of.items() if len(t) > 1}
    assert {"saw", "that", "like", "walk"} <= ambiguous
    rng = random.Random(2)
    labels, tags, phrases = Counter(), Counter(), Counter()
    for _ in range(3000):
        s = sample(g, rng)
        labels.update(s.labels)
        tags.update(s.tree.tags())
        phrases.update(t.label for t in s.tree.subtrees() if not t.is_preterminal)
    for label in (
        "det",
        "amod",
        "nn",
        "prep",
        "pobj",
        "nsubj",
        "dobj",
        "iobj",
        "ccomp",
        "advcl",
        "rcmod",
        "aux",
        "neg",
        "cc",
        "conj",
        "advmod",
        "mark",
        "poss",
    ):
        assert labels[label] > 0, label
    for phrase in ("S", "NP", "VP", "PP", "SBAR", "WHNP", "ADVP", "ADJP"):
        assert phrases[phrase] > 0, phrase
    # Zipf-like: the commonest noun is far more frequent than the 40th
    nouns = g.lexicon["NN"]
    assert nouns.items[0] == "man" and nouns.weights[0] > 40 * nouns.weights[39]


@pytest.mark.parametrize(
    "text, message",
    [
        ("S -> A:x B:y | 1\nlexicon A: a\nlexicon B: b\n", "exactly one head"),
        ("S -> A* B | 1\nlexicon A: a\nlexicon B: b\n", "dependency label"),
        ("S -> A* | 0\nlexicon A: a\n", "positive"),
        ("S -> A* C:x | 1\nlexicon A: a\n", "has no rules or words"),
        ("lexicon A B:\n  a\n", "needs 2 words"),
        ("S => A\n", "cannot read"),
        # the words' exponent: NaN drew the first word alone, -inf and 1e308 were tracebacks
        *(
            (f"zipf {z}\nS -> A* | 1\nlexicon A: a b\n", "g.grammar:1: zipf is the words'")
            for z in ("nan", "-inf", "inf", "-0.5")
        ),
    ],
)
def test_bad_grammars_name_the_line(text, message):
    with pytest.raises(InputError, match=message):
        parse_grammar(text, "g.grammar")


@pytest.mark.parametrize(
    "text, line, shown",
    [
        ("S -> NN* NN:dep | 1\nlexicon NN:\n ( a\n", 3, "'('"),
        ("S -> NN* | 1\nlexicon NN: a b) c\n", 2, "'b)'"),
        ("lexicon NN VB:\n  dog run\n  (x) go\nS -> NN* VB:x | 1\n", 3, "'(x)'"),
        ("S -> N(N* | 1\nlexicon N(N: a\n", 1, "'N(N'"),
        ("S -> NN* | 1\nlexicon NN) DT:\n a the\n", 2, "'NN)'"),
        ("S(x -> NN* | 1\nstart S(x\nlexicon NN: a\n", 1, "'S(x'"),
    ],
)
def test_brackets_in_words_and_symbols_are_refused(text, line, shown):
    """Words and labels are written into PTB trees as they are: a bracket in one would
    unbalance the .trees files (the treebank writes -LRB- and -RRB-)."""
    with pytest.raises(InputError) as err:
        parse_grammar(text, "g.grammar")
    assert str(err.value).startswith(f"g.grammar:{line}: {shown}: ")
    assert "-LRB-" in str(err.value) and "\n" not in str(err.value)
    g = parse_grammar("S -> NN* NN:dep | 1\nlexicon NN:\n -LRB- a\n", "g.grammar")
    assert g.lexicon["NN"].items == ["-LRB-", "a"]


def test_a_steep_zipf_exponent_draws_the_first_words():
    """A weight past a float's range (1 / 2^1e308) is 0, where the power overflowed."""
    g = parse_grammar("zipf 1e308\nS -> A* | 1\nlexicon A: a b c\n", "g.grammar")
    assert g.lexicon["A"].weights == [1.0, 0.0, 0.0]
    assert parse_grammar("zipf 0\nS -> A* | 1\nlexicon A: a b\n").lexicon["A"].weights == [1, 1]


def test_unknown_builtin_grammar():
    with pytest.raises(InputError, match="no built-in grammar"):
        load_grammar("klingon")


DEEP = (
    "start A0\n"
    + "".join(f"A{k} -> A{k + 1}* | 1\n" for k in range(25))
    + "A25 -> NN* | 1\nlexicon NN: x\n"
)


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("S -> S* X:a | 1\nlexicon X: x\n", 1, "every rule of S uses a symbol that never ends"),
        (  # S and A only rewrite to each other
            "S -> A* X:a | 1\nA -> S* | 1\nlexicon X: x\n",
            1,
            "S uses a symbol that never ends in words (A)",
        ),
        ("S -> @a* | 1\n@a -> @b | 1\n@b -> @a | 1\n", 2, "every rule of @a"),
        (  # S terminates, but B, which it may use, never does
            "S -> X* | 1\nS -> X* B:b | 1\nB -> B* X:x | 1\nlexicon X: x\n",
            3,
            "every rule of B uses a symbol that never ends in words (B)",
        ),
    ],
)
def test_grammars_that_cannot_terminate(text, line, message):
    with pytest.raises(InputError) as err:
        parse_grammar(text, "g.grammar")
    assert str(err.value).startswith(f"g.grammar:{line}: the grammar cannot terminate: ")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_shortest_sentence_and_derivation():
    g = parse_grammar(TINY)
    assert (g.min_words, g.min_depth) == (1, 2)  # S -> VP -> VB
    g = parse_grammar(
        "S -> A:a B* | 1\nA -> X* Y:b | 1\nB -> X* Z:c | 1\nlexicon X: x\nlexicon Y: y\n"
        "lexicon Z: z\n",
        "four.grammar",
    )
    assert g.min_words == 4
    with pytest.raises(ConfigError) as err:
        sample(g, random.Random(0), max_words=3)
    assert err.value.setting == "max_words"
    assert str(err.value) == (
        "max_words must be at least 4: the shortest sentence of four.grammar has 4 words"
    )
    assert len(sample(g, random.Random(0), max_words=4).words) == 4
    g = parse_grammar(DEEP, "deep.grammar")
    assert (g.min_words, g.min_depth) == (1, 26)
    with pytest.raises(InputError, match="fits in 25 levels of rules: its shallowest .* 26"):
        sample(g, random.Random(0))
    assert sample(g, random.Random(0), max_depth=26).words == ["x"]


def test_grammars_that_rarely_stop():
    # almost every draw branches three ways again: no sentence in 1,000 draws
    g = parse_grammar("S -> S:a S* S:b | 100000\nS -> NN* | 1\nlexicon NN: x\n", "boom.grammar")
    with pytest.raises(InputError, match=r"^boom.grammar: no sentence within 25 levels .* 1000"):
        sample(g, random.Random(0), max_words=40)
    # long flat sentences: the limit on words is what stops every draw
    g = parse_grammar(
        "S -> NN* L:a | 1\nS -> NN* | 0.001\nL -> NN* | 1\nL -> NN* L:a | 100000\nlexicon NN: x\n",
        "long.grammar",
    )
    with pytest.raises(ConfigError) as err:
        sample(g, random.Random(0), max_words=3, tries=200)
    assert err.value.setting == "max_words"
    assert str(err.value).startswith("max_words 3 lets no sentence of long.grammar through in 200")
