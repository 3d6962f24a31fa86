"""Every setting of every registered architecture is checked when the config loads: for each
field of the run config and of each architecture's model config, values its type refuses
(a negative count, a size of 0, a rate outside [0, 1), a scale of 0, NaN or infinity, a
word for a number, a number for a switch, an unknown choice) stop ``induce train`` with exit
code 2, one ``error:`` line, and no run folder.  The cases are generated from the dataclass
types, so a new setting is walked without a line here."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from induce.data.config import Bounds, literal_values
from induce.models import MODELS
from induce.runs.config import RunConfig
from tests.reliability.test_bad_runs import _invoke, _one_error
from tests.train.helpers import make_dataset


def _bad_values(hint: typing.Any) -> list[str]:
    """YAML texts that a setting of type ``hint`` must refuse."""
    extras: list[Bounds] = []
    if typing.get_origin(hint) is typing.Annotated:
        hint, *more = typing.get_args(hint)
        extras = [m for m in more if isinstance(m, Bounds)]
    if literal_values(hint) is not None:
        return ["no-such-choice"]
    if typing.get_origin(hint) in (typing.Union, __import__("types").UnionType):
        return []  # optional settings (None or a value): their values are checked on use
    values: list[str] = []
    if hint is bool:
        values = ["3"]
    elif hint is int:
        values = ["-1", "2.5", "many"]
    elif hint is float:
        values = [".nan", ".inf", "fast"]
    for bounds in extras:
        if bounds.low is not None:
            values.append(str(bounds.low if bounds.low_open else bounds.low - 1))
        if bounds.high is not None:
            values.append(str(bounds.high if bounds.high_open else bounds.high + 1))
    return values


def _fields(cls: type, prefix: str) -> list[tuple[str, str]]:
    hints = typing.get_type_hints(cls, include_extras=True)
    cases = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if dataclasses.is_dataclass(hint):
            continue
        cases += [(f"{prefix}{f.name}", value) for value in _bad_values(hint)]
    return cases


def _cases() -> list[tuple[str, str, str]]:
    run_hints = typing.get_type_hints(RunConfig)
    groups = [
        (name, run_hints[name])
        for name in ("data", "optim", "train")
        if dataclasses.is_dataclass(run_hints[name])
    ]
    cases = []
    for arch, cls in MODELS.items():
        settings = _fields(cls.config_class, "model.")
        if arch == "udgn":  # the run settings are the same for every architecture
            for name, group in groups:
                settings += _fields(group, f"{name}.")
        cases += [(arch, key, value) for key, value in settings]
    return cases


CASES = _cases()


def test_the_walk_covers_every_architecture_and_many_settings():
    assert {arch for arch, _, _ in CASES} == set(MODELS)
    assert len(CASES) > 250


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("walk"))


@pytest.mark.parametrize("arch, setting, value", CASES, ids=[f"{a}|{s}={v}" for a, s, v in CASES])
def test_a_bad_value_of_any_setting_is_one_error_line(data, tmp_path, arch, setting, value):
    out = tmp_path / "run"
    result = _invoke(
        "train", "--arch", arch, "--data", data, "--out", out, "--set", f"{setting}={value}"
    )
    _one_error(result)
    assert not out.exists()
