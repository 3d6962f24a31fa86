"""``sentence_scores`` (inference mode, batches shared by their sentences) gives exactly the
scores of the parser run on the same batches under ``no_grad``, for every parser kind,
Kirchhoff edge marginals included (they take a gradient, outside inference mode)."""

from __future__ import annotations

import pytest
import torch

from induce.models import build_model
from induce.runs.batches import Specials, evaluation_batches
from induce.runs.inference import sentence_scores

SPECIALS = Specials(pad=1, unk=0, mask=2)
SIZES = {"d_model": 16, "n_layers": 1, "n_heads": 2}


@pytest.mark.parametrize(
    ("arch", "settings"),
    [
        ("structformer", {}),
        ("udgn", {"head_size": 8, "n_parser_layers": 1}),
        ("udgn", {"head_size": 8, "n_parser_layers": 1, "edge_marginals": "kirchhoff"}),
    ],
)
def test_sentence_scores_equal_the_parser_under_no_grad(arch, settings):
    torch.manual_seed(0)
    model = build_model(arch, {**SIZES, **settings}, 30, SPECIALS.pad).eval()
    g = torch.Generator().manual_seed(1)
    sentences = [
        torch.randint(3, 30, (int(n),), generator=g).tolist()
        for n in torch.randint(1, 12, (17,), generator=g)
    ]
    got = dict(sentence_scores(model, sentences, SPECIALS, 40, torch.device("cpu")))
    assert sorted(got) == list(range(len(sentences)))
    with torch.no_grad():
        for batch in evaluation_batches(sentences, 40, SPECIALS, None, 0, max_padding=0.2):
            scores = model.structure(batch.ids, batch.keep)
            for k, index in enumerate(batch.index):
                expected = scores.sentence(k, len(sentences[index])).to_json()
                assert got[index].to_json() == expected
                words = [str(w) for w in sentences[index]]
                decoder = type(scores).decoders[0]
                assert (
                    got[index].read_out(words, decoder).heads
                    == scores.sentence(k, len(words)).read_out(words, decoder).heads
                )


def test_max_padding_none_keeps_the_evaluation_batches():
    """``max_padding=None``: the batches (hence the float32 bits) of the masked-LM
    evaluation plan, as before padding was bounded."""
    torch.manual_seed(0)
    model = build_model("structformer", SIZES, 30, SPECIALS.pad).eval()
    sentences = [[3 + (k % 20)] * ((5 * k) % 11 + 1) for k in range(30)]
    got = dict(
        sentence_scores(model, sentences, SPECIALS, 40, torch.device("cpu"), max_padding=None)
    )
    with torch.no_grad():
        for batch in evaluation_batches(sentences, 40, SPECIALS, None, 0):
            scores = model.structure(batch.ids, batch.keep)
            for k, index in enumerate(batch.index):
                assert got[index].to_json() == scores.sentence(k, len(sentences[index])).to_json()


def test_a_batch_is_given_out_once_the_next_ones_forward_pass_is_queued():
    """On a GPU the read-out of one batch then overlaps the device's next forward pass: the
    rows of batch k come after the parser was called for batch k + 1 (the last batch's
    after its own), all of them, in the batches' order."""
    torch.manual_seed(0)
    model = build_model("structformer", SIZES, 30, SPECIALS.pad).eval()
    calls: list[int] = []
    real = model.structure

    def counted(ids: torch.Tensor, keep: torch.Tensor) -> object:
        calls.append(len(ids))
        return real(ids, keep)

    model.structure = counted  # type: ignore[method-assign]
    sentences = [[3 + (k % 20)] * ((5 * k) % 11 + 1) for k in range(30)]
    batches = list(evaluation_batches(sentences, 40, SPECIALS, None, 0, max_padding=0.2))
    assert len(batches) > 2
    seen: list[tuple[int, int]] = []  # (sentence, parser calls when it came)
    for index, _ in sentence_scores(model, sentences, SPECIALS, 40, torch.device("cpu")):
        seen.append((index, len(calls)))
    assert [index for index, _ in seen] == [i for b in batches for i in b.index]
    for k, batch in enumerate(batches):
        expected = min(k + 2, len(batches))
        assert {count for index, count in seen if index in batch.index} == {expected}
