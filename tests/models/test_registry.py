"""The one registry of architectures (``induce.data.architectures``) against the classes it
names, and the command line's help built from it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from induce.data.architectures import ARCHITECTURES, architecture, names
from induce.data.config import resource_names
from induce.data.errors import ConfigError
from induce.models import MODELS, MaskedLM, Model, decoders, model_class


@pytest.mark.parametrize("entry", ARCHITECTURES, ids=lambda a: a.name)
def test_each_entry_names_its_class_and_the_decoders_of_its_scores(entry):
    """The entry's data is its class's: decoders, BERT start, perplexity (a masked LM) and
    attention (the class records it)."""
    cls = model_class(entry.name)
    assert issubclass(cls, Model)
    assert entry.perplexity == issubclass(cls, MaskedLM) == (entry.objective == "masked-lm")
    assert entry.attention == (cls.record_attention is not Model.record_attention)
    assert entry.samples == (cls.sample is not Model.sample)
    assert (cls.__module__, cls.__name__) == (entry.module, entry.cls)
    scores = cls.scores_class
    assert entry.decoders == (scores.decoders if scores is not None else ())
    assert decoders(entry.name) == entry.decoders
    assert entry.starts_from_bert == cls.starts_from_bert
    assert f"{entry.name}-ptb-paper" in resource_names("configs", "presets")


def test_the_registry_is_the_only_list_of_architectures():
    assert [*MODELS] == names()
    assert names("trees") == ["chart"]
    with pytest.raises(ConfigError, match="known: udgn, structformer"):
        architecture("lstm")


def _help(*command: str) -> str:
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return " ".join(result.output.replace("│", " ").split())  # the help's boxes out


def test_help_lists_every_architecture_preset_and_decoder():
    train = _help("train")
    assert all(name in train for name in names())
    assert all(preset in train for preset in resource_names("configs", "presets"))
    parse = _help("parse")
    for entry in ARCHITECTURES:
        assert all(d in parse for d in entry.decoders)
        assert f"{entry.name}:" in parse
