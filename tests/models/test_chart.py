"""The chart parser's model: span scores against a span-by-span computation, padding,
the factored and plain encoders, the lexical models."""

from __future__ import annotations

import random

import pytest
import torch
import torch.nn.functional as F

from induce.data.errors import ConfigError
from induce.data.ptb import parse_trees
from induce.models import build_model, model_config
from induce.runs.chart import Encoder, example, inventories, parse_words
from induce.structure.chart import clean_tree

TREES = [
    "(TOP (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))",
    "(TOP (S (NP-SBJ (PRP It)) (VP (VBD rained)) (. .)))",
    "(TOP (S (VP (VB Go) (NP (NN home)))))",
    "(TOP (S (NP-SBJ (NNP Vinken)) (VP (MD will) (VP (VB join) (NP (DT the) (NN board))))))",
]
SMALL = {
    "d_model": 32,
    "d_position": 16,
    "n_layers": 2,
    "n_heads": 2,
    "d_kv": 8,
    "d_ff": 32,
    "d_char": 8,
    "d_label_hidden": 16,
}


def examples():
    return [example(clean_tree(parse_trees(t).trees[0])) for t in TREES]


def build(**changes):
    exs = examples()
    vocab, found = inventories(exs)
    settings = {**SMALL, **{k: list(v) for k, v in found.items()}, **changes}
    torch.manual_seed(0)
    model = build_model("chart", settings, len(vocab), vocab.id("<pad>"))
    return model.eval(), Encoder(model, vocab), exs


def test_inventories_hold_chain_labels_and_the_empty_label_first():
    vocab, found = inventories(examples())
    assert found["labels"][0] == ""
    assert "S+VP" in found["labels"] and "NP" in found["labels"]
    assert "TOP" not in found["labels"]  # the wrapper is stripped
    assert vocab.tokens[:4] == ["<unk>", "<pad>", "<start>", "<stop>"]
    assert vocab.counts["the"] == 2


def test_span_scores_equal_the_label_mlp_of_each_span_representation():
    model, encoder, exs = build()
    batch = encoder.batch([ex.words for ex in exs])
    with torch.no_grad():
        y = model.encode(batch)
        scores = model.span_scores(y)
    c = model.config
    b = 0
    n = batch.lengths[b]
    content, position = y[b, :, : c.d_content], y[b, :, c.d_content :]
    fwd = torch.cat([content[:, 0::2], position[:, 0::2]], -1)
    bwd = torch.cat([content[:, 1::2], position[:, 1::2]], -1)
    assert scores.shape == (4, 8, 8, len(c.labels))
    for i in range(n):
        for j in range(i + 1, n + 1):
            span = torch.cat([fwd[j] - fwd[i], bwd[j + 1] - bwd[i + 1]])  # Section 2.1
            hidden = F.relu(model.label_norm(model.label_in(span)))
            expected = torch.cat([torch.zeros(1), model.label_out(hidden)])
            assert torch.allclose(scores[b, i, j], expected, atol=1e-5)


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"factored": False},
        {"chars": "concat", "char_concat": 3},
        {"chars": "none", "words": True, "tags": True},
        {"chars": "lstm", "words": True, "tag_head": True},
    ],
)
def test_a_sentence_scores_the_same_alone_and_in_a_padded_batch(changes):
    model, encoder, exs = build(**changes)
    words = [ex.words for ex in exs]
    tags = [ex.tags for ex in exs]
    with torch.no_grad():
        together, tag_logits = model(encoder.batch(words, tags))
        for k, ex in enumerate(exs):
            alone, _ = model(encoder.batch([ex.words], [ex.tags]))
            n = len(ex.words)
            assert torch.allclose(together[k, : n + 1, : n + 1], alone[0], atol=1e-5)
    assert (together[..., 0] == 0).all()
    assert (tag_logits is not None) == bool(changes.get("tag_head"))


def _attention_by_hand(attention, parts, keep):
    """Section 2.1's attention written out: the halves' logits added, masked, softmax."""
    c = attention.c
    b, t, _ = parts[0].shape
    projected = [
        p(x).view(b, t, 3, c.n_heads, -1).permute(2, 0, 3, 1, 4)
        for x, p in zip(parts, attention.qkv)
    ]
    logits = sum(q @ k.transpose(-1, -2) for q, k, _ in projected) / c.d_kv**0.5
    weights = torch.softmax(logits.masked_fill(~keep[:, None, None, :], float("-inf")), -1)
    return [
        out((weights @ v).transpose(1, 2).reshape(b, t, -1))
        for (_, _, v), out in zip(projected, attention.out)
    ]


@pytest.mark.parametrize("factored", [True, False])
def test_attention_is_the_factored_softmax_attention_over_real_tokens(factored):
    model, _, _ = build(factored=factored, attn_dropout=0.5)
    attention = model.layers[0].attention
    c = model.config
    sizes = [c.d_content, c.d_position] if factored else [c.d_model]
    torch.manual_seed(1)
    parts = [torch.randn(3, 6, d) for d in sizes]
    keep = torch.tensor([[True] * 6, [True] * 4 + [False] * 2, [True] + [False] * 5])
    by_hand = _attention_by_hand(attention, parts, keep)
    with_grad = attention(parts, keep)  # with gradients: written out on a CPU
    with torch.no_grad():
        got = attention(parts, keep)  # without: scaled_dot_product_attention
        for mine, grad, expected in zip(got, with_grad, by_hand, strict=True):
            assert torch.allclose(mine, expected, atol=1e-6)
            assert torch.allclose(grad, expected, atol=1e-6)
        # a padded key changes nothing that reads it
        other = [x.clone() for x in parts]
        other[0][1, 4:] = 100.0
        assert torch.allclose(attention(other, keep)[0][1, :4], got[0][1, :4], atol=1e-6)
        attention.train()  # dropout on the weights: outputs change from draw to draw
        assert not torch.allclose(attention(parts, keep)[0], attention(parts, keep)[0])
    assert not torch.allclose(attention(parts, keep)[0], attention(parts, keep)[0])  # written out


def test_char_concat_reads_the_first_and_last_characters():
    model, encoder, exs = build(chars="concat", char_concat=2)
    concat = model.chars
    chars = encoder.batch([["abc", "a"]]).chars  # <w> a b c </w>, <w> a </w>
    seen = {}

    def spy(module, inputs, output):
        seen["ids"] = inputs[0]

    concat.embed.register_forward_hook(spy)
    concat(chars)
    ids = seen["ids"][0]  # [T, 4]: first two, last two
    code = encoder.chars
    abc = ids[1].tolist()
    assert abc == [code["<w>"], code["a"], code["c"], code["</w>"]]
    assert ids[2].tolist() == [code["<w>"], code["a"], code["a"], code["</w>"]]
    model, encoder, exs = build(chars="concat", char_concat=4)  # longer than the word: padded
    model.chars.embed.register_forward_hook(spy)
    model.chars(encoder.batch([["a"]]).chars)
    pad = encoder.chars["<pad>"]
    assert seen["ids"][0][1].tolist() == [code["<w>"], code["a"], code["</w>"], pad] + [
        pad,
        code["<w>"],
        code["a"],
        code["</w>"],
    ]


def test_word_dropout_follows_frequency():
    model, encoder, exs = build(words=True)
    rng = random.Random(0)
    unk = encoder.unk
    dropped = {"the": 0, "cat": 0}
    for _ in range(2000):
        ids = encoder.batch([["the", "cat"]], dropout=rng).words[0]
        dropped["the"] += int(ids[1]) == unk
        dropped["cat"] += int(ids[2]) == unk
    assert abs(dropped["the"] / 2000 - 1 / 3) < 0.05  # seen twice: 1 / (1 + 2)
    assert abs(dropped["cat"] / 2000 - 1 / 2) < 0.05  # seen once
    assert int(encoder.batch([["the"]]).words[0, 1]) != unk  # no dropout outside training


def test_parsed_trees_are_labelled_trees_over_the_words_with_the_given_tags():
    model, encoder, exs = build()
    trees = parse_words(model, encoder, [ex.words for ex in exs], [ex.tags for ex in exs])
    for tree, ex in zip(trees, exs):
        assert tree.words() == ex.words and tree.tags() == ex.tags
        assert tree.label in model.config.labels[1:] or "+" in tree.label or tree.label


def test_settings_are_checked():
    with pytest.raises(ConfigError, match="d_position"):
        model_config("chart", {**SMALL, "d_position": 32})
    with pytest.raises(ConfigError, match="lexical"):
        model_config("chart", {**SMALL, "chars": "none"})
    with pytest.raises(ConfigError, match="unknown"):
        model_config("chart", {**SMALL, "colour": 1})


def test_feature_dropout_drops_a_feature_of_a_sentence_at_every_position():
    from induce.models.chart import FeatureDropout

    torch.manual_seed(0)
    drop = FeatureDropout(0.5).train()
    out = drop(torch.ones(6, 9, 40))
    assert set(out.unique().tolist()) == {0.0, 2.0}
    assert (out == out[:, :1]).all()  # the same mask at every position of a sentence
    assert not (out[0] == out[1]).all()  # sentences draw their own masks
    assert 0.8 < float(drop(torch.ones(400, 1, 400)).mean()) < 1.2
    assert torch.equal(drop.eval()(torch.ones(2, 3, 4)), torch.ones(2, 3, 4))


def test_dropout_kind_and_init_are_benepars_when_asked():
    from torch import nn

    from induce.models.chart import FeatureDropout

    plain, benepar = build()[0], build(dropout_kind="feature", init="benepar")[0]
    kinds = {type(m) for m in plain.modules()} & {nn.Dropout, FeatureDropout}
    assert kinds == {nn.Dropout}
    features = [m for m in benepar.modules() if isinstance(m, FeatureDropout)]
    # per layer: the residual dropout and one feed-forward dropout per half; the characters
    assert len(features) == benepar.config.n_layers * 3 + 1
    bound = 3**0.5 * 0.02
    for layer in benepar.layers:
        for linear in [*layer.attention.qkv, *layer.attention.out]:
            weight = linear.weight.detach()
            assert float(weight.abs().max()) <= bound
            assert 0.015 < float(weight.std()) < 0.025
    assert float(plain.layers[0].attention.qkv[0].weight.detach().abs().max()) > bound


def test_the_character_model_can_read_unescaped_words():
    """``model.unescape_chars``: the CharLSTM spells -LRB- as "(" and two backquotes as a
    double quote (benepar's input), the characters' inventory is of the unescaped words, and
    the word ids and trees keep the tokens as written."""
    from induce.data.ptb import unescape_token

    tree = "(TOP (S (`` ``) (NP (-LRB- -LRB-) (CD 1\\/2) (-RRB- -RRB-)) (VP (VBD ran)) ('' '')))"
    exs = [example(clean_tree(parse_trees(t).trees[0])) for t in [*TREES, tree]]
    assert [unescape_token(w) for w in exs[-1].words] == ['"', "(", "1/2", ")", "ran", '"']
    plain_vocab, plain = inventories(exs)
    vocab, found = inventories(exs, unescape=True)
    assert {"(", ")", '"', "/"} <= set(found["char_set"])
    assert "-" not in found["char_set"] and "`" not in found["char_set"]
    assert "-" in plain["char_set"]
    assert vocab.tokens == plain_vocab.tokens  # the words themselves are untouched
    settings = {**SMALL, **{k: list(v) for k, v in found.items()}, "unescape_chars": True}
    model = build_model("chart", settings, len(vocab), vocab.id("<pad>"))
    encoder = Encoder(model, vocab)
    batch = encoder.batch([exs[-1].words])
    ids = {i: ch for ch, i in encoder.chars.items()}
    spelled = [[ids[int(c)] for c in row if int(c)] for row in batch.chars[0]]
    assert spelled[2][1:-1] == ["("] and spelled[1][1:-1] == ['"']
    assert batch.words[0, 2] == vocab.id("-LRB-")


def test_the_codepoint_character_table_gives_unseen_characters_their_own_entries():
    """``model.char_table: codepoints``: benepar's table (every code point below 256, or 512
    above 255), so a character unseen in training is not ``<unk>``; above 511, the seen set."""
    from induce.models.chart import CHAR_SPECIALS, CHAR_UNK
    from induce.runs.chart import char_set

    table = char_set({"a", "b"}, "codepoints")
    assert table[:4] == CHAR_SPECIALS and len(table) == 4 + 256 and "é" in table
    assert len(char_set({"a", "ā"}, "codepoints")) == 4 + 512  # ā is 257
    assert char_set({"a", "ā", "€"}, "codepoints") == CHAR_SPECIALS + ("a", "ā", "€")
    assert char_set({"b", "a"}) == CHAR_SPECIALS + ("a", "b")
    exs = [example(clean_tree(parse_trees(t).trees[0])) for t in TREES]
    vocab, found = inventories(exs, table="codepoints")
    settings = {**SMALL, **{k: list(v) for k, v in found.items()}, "char_table": "codepoints"}
    model = build_model("chart", settings, len(vocab), vocab.id("<pad>"))
    encoder = Encoder(model, vocab)
    spelled = encoder.batch([["Zoë"]]).chars[0, 1, 1:4].tolist()
    assert spelled == [encoder.chars[ch] for ch in "Zoë"] and encoder.chars[CHAR_UNK] not in spelled


@pytest.mark.parametrize(
    ("precision", "dtype"), [("float32", torch.float32), ("autocast", None), ("auto", None)]
)
def test_the_character_lstm_runs_in_the_configured_precision(monkeypatch, precision, dtype):
    """Under a CUDA bf16 autocast ``auto`` takes the LSTM out of PyTorch's fp16 (decided by
    ``induce.models.bilstm.lstm_dtype``, tested there); under a CPU's autocast only
    ``float32`` does."""
    from induce.models import chars

    seen = []
    call = chars.lstm_call

    def spy(lstm, packed, dtype):
        seen.append(dtype)
        return call(lstm, packed, dtype)

    monkeypatch.setattr(chars, "lstm_call", spy)
    model, encoder, exs = build(lstm_precision=precision)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        model(encoder.batch([ex.words for ex in exs], [ex.tags for ex in exs]))
    assert seen == [dtype]
