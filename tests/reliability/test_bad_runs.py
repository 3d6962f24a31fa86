"""Bad settings, bad run directories and bad models for ``train``, ``parse`` and ``evaluate
mlm``: exit code 2, one ``error:`` line on stderr, no traceback, and the run or input left as
it was."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from tests.train.helpers import make_dataset, poison_weights, tiny


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("badruns")
    data = make_dataset(root)
    runs = {}
    for arch in ("udgn", "transformer"):
        sets = [x for s in tiny(arch) + ["train.max_steps=2"] for x in ("--set", s)]
        out = root / arch
        result = _invoke("train", "--arch", arch, "--data", data, "--out", out, *sets)
        assert result.exit_code == 0, result.output
        runs[arch] = out
    return root, data, runs


def _invoke(*args: object):
    return CliRunner().invoke(app, [*map(str, args), "--device", "cpu"])


def _one_error(result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    errors = [line for line in lines if not line.startswith("warning: ")]
    assert len(errors) == 1 and errors[0].startswith("error: "), lines


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


SETTINGS = [
    "optim.lr=nan",
    "optim.lr=0",
    "optim.lr=inf",
    "optim.eps=-1",
    "optim.weight_decay=-0.5",
    "optim.betas=[0.9, 1.5]",
    "optim.betas=[0.9]",
    "optim.clip=-1",
    "optim.plateau_factor=1.5",
    "model.dropout=1.5",
    "model.attn_dropout=-0.1",
    "model.parser_dropout=1",
    "model.d_model=0",
    "data.mask_rate=1.5",
    "data.mask_rate=0",
    "data.batch_tokens=0",
    "train.max_steps=-1",
    "train.patience=-2",
    "train.unknown=1",
    "nosuchgroup.x=1",
    "model=3",
    "optim.lr=fast",
    "optim.lr",
]


@pytest.mark.parametrize("setting", SETTINGS)
def test_bad_settings(setup, tmp_path, setting):
    _, data, _ = setup
    result = _invoke(
        "train", "--arch", "udgn", "--data", data, "--out", tmp_path / "r", "--set", setting
    )
    _one_error(result)
    assert not (tmp_path / "r").exists()


def test_run_folders_that_cannot_be(setup, tmp_path):
    _, data, _ = setup
    (tmp_path / "file").write_text("x")
    for out in (tmp_path / "file", tmp_path / "file" / "run"):
        _one_error(_invoke("train", "--data", data, "--out", out))
    assert (tmp_path / "file").read_text() == "x"


def _copy(run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    return copy


def test_resume_with_another_architecture_or_shape(setup, tmp_path):
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    before = _digest(run)
    _one_error(_invoke("train", "--resume", run, "--arch", "structformer"))
    _one_error(_invoke("train", "--resume", run, "--set", "model.d_model=48"))
    assert _digest(run) == before


def test_resume_with_another_runs_trainer_state(setup, tmp_path):
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    other = runs["transformer"]
    from induce.runs.directory import STATE, read_pointer

    mine, theirs = read_pointer(run), read_pointer(other)
    assert mine is not None and theirs is not None
    shutil.copy(other / theirs["last"] / STATE, run / mine["last"] / STATE)
    _one_error(_invoke("train", "--resume", run))


def test_resume_without_a_checkpoint_file(setup, tmp_path):
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    (run / "checkpoint.json").write_text('{"last": 3')
    _one_error(_invoke("train", "--resume", run))


CUTS = {  # where config.yaml is cut, whether it has its first line, what the error says
    "at a line end inside train": ("max_steps:", True, "its last line '# end' is lost"),
    "mid-line": ("max_steps:", True, "its last line '# end' is lost"),
    "earlier format, mid-line": ("epochs: ", False, "its last line has no end"),
    "earlier format, a group lost": ("optim:", False, "it has no train settings"),
}


@pytest.mark.parametrize("cut", sorted(CUTS))
def test_a_resume_with_its_settings_cut_short_changes_nothing(setup, tmp_path, cut):
    """A ``config.yaml`` cut short used to resume with defaults for every setting it lost
    (10 epochs instead of the run's max_steps, another schedule).  A file of the earlier
    format (without the first and last lines) is checked for what it can show."""
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    text = (run / "config.yaml").read_text()
    assert text.startswith("# induce run settings") and text.endswith("\n# end\n")
    before_key, head, what = CUTS[cut]
    if not head:
        text = text.split("\n", 1)[1].removesuffix("# end\n")
    end = text.index(before_key)  # "optim:" and "max_steps:" begin a line
    if "mid-line" in cut:
        end += len(before_key) + 1  # "epochs: 100" cut to "epochs: 1": still YAML
    elif "group" in cut:
        end = text.index("\n", end) + 1  # "optim:" kept, its settings and train lost
    (run / "config.yaml").write_text(text[:end])
    before = _digest(run)
    result = _invoke("train", "--resume", run)
    _one_error(result)
    assert result.stderr.startswith(f"error: {run / 'config.yaml'}: cut short ({what}): ")
    assert _digest(run) == before


def test_a_run_of_the_earlier_settings_format_resumes(setup, tmp_path):
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    text = (run / "config.yaml").read_text()
    (run / "config.yaml").write_text(text.split("\n", 1)[1].removesuffix("# end\n"))
    result = _invoke("train", "--resume", run, "--set", "train.max_steps=4")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "damage", ["a damaged record", "a record inserted", "the last record copied first"]
)
def test_a_resume_whose_history_was_changed_changes_nothing(setup, tmp_path, damage):
    """The records the checkpoint saw are checked before the run trains on: a damaged one
    was found only when the resumed run had trained to its end (or never), and a history
    moved by an edit was cut at a byte inside a record."""
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    metrics = run / "metrics.jsonl"
    lines = metrics.read_text().splitlines(keepends=True)
    if damage == "a damaged record":
        lines[1] = lines[1].replace('"step"', '"step!', 1)  # the same length
    elif damage == "a record inserted":
        lines.insert(0, '{"kind": "note", "text": "mine"}\n')
    else:  # the history moved by a whole record's length: only its digest shows it
        lines.insert(0, lines[-1])
    metrics.write_text("".join(lines))
    before = _digest(run)
    result = _invoke("train", "--resume", run, "--set", "train.max_steps=6")
    _one_error(result)
    expected = {
        "a damaged record": f"error: {metrics}:2: not JSON: ",
        "a record inserted": f"error: {metrics}: changed since the checkpoint: its byte ",
        "the last record copied first": f"error: {metrics}: changed since the checkpoint: its "
        "first ",
    }[damage]
    assert result.stderr.startswith(expected), result.stderr
    assert _digest(run) == before


def test_weights_that_are_a_folder_are_named_so(setup, tmp_path):
    """They were "the run has not saved this checkpoint yet", which sends the user to wait."""
    from induce.runs.directory import open_run

    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    weights = open_run(run).weights("best")
    weights.unlink()
    weights.mkdir()
    (tmp_path / "in.txt").write_text("the bill passed\n")
    result = _invoke("parse", tmp_path / "in.txt", "-m", run)
    _one_error(result)
    assert result.stderr.strip() == f"error: {weights}: a folder, not a weights file"


def test_parse_with_weights_of_another_shape(setup, tmp_path):
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    config = (run / "config.yaml").read_text().replace("d_model: 32", "d_model: 48")
    (run / "config.yaml").write_text(config)
    (tmp_path / "in.txt").write_text("the bill passed\n")
    result = _invoke("parse", tmp_path / "in.txt", "-m", run, "-o", tmp_path / "out")
    _one_error(result)
    assert "differ in shape" in result.stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "old, new, fragment",
    [
        ("arch: udgn", "arch: nope", "unknown architecture 'nope'"),
        ("d_model: 32", "d_model: abc", "d_model: expected an integer"),
        ("d_model: 32", "d_model: 32\n  bogus: 1", "bogus"),
    ],
)
def test_a_runs_bad_settings_name_its_config_file(setup, tmp_path, old, new, fragment):
    """A fault in the run's own ``config.yaml`` is the file's: the message names it (an
    override's fault names the flag, as before)."""
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    config = (run / "config.yaml").read_text()
    assert old in config
    (run / "config.yaml").write_text(config.replace(old, new, 1))
    (tmp_path / "in.txt").write_text("the bill passed\n")
    result = _invoke("parse", tmp_path / "in.txt", "-m", run)
    _one_error(result)
    assert result.stderr.startswith(f"error: {run / 'config.yaml'}: ") and fragment in result.stderr


def test_a_runs_torn_dataset_file_is_named_at_its_line(setup, tmp_path):
    """dataset.yaml that is not YAML was "the run's settings are not valid YAML", naming the
    run's folder: neither the file nor the line."""
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    (run / "dataset.yaml").write_text("path: x\nnormalization: [\n")
    (tmp_path / "in.txt").write_text("the bill passed\n")
    result = _invoke("parse", tmp_path / "in.txt", "-m", run)
    _one_error(result)
    assert result.stderr.startswith(f"error: {run / 'dataset.yaml'}:3: not valid YAML: ")


def test_weights_other_than_best_or_last_are_refused_by_the_library(setup):
    from induce.data.errors import ConfigError
    from induce.runs.directory import open_run

    _, _, runs = setup
    with pytest.raises(ConfigError, match="weights must be one of best, last"):
        open_run(runs["udgn"]).weights("middle")


def test_parse_a_transformer_run(setup, tmp_path):
    _, _, runs = setup
    (tmp_path / "in.txt").write_text("the bill passed\n")
    _one_error(_invoke("parse", tmp_path / "in.txt", "-m", runs["transformer"]))


def test_parse_a_thousand_word_line(setup, tmp_path):
    _, _, runs = setup
    (tmp_path / "in.txt").write_text(" ".join(["the", "bill"] * 500) + "\n")
    result = _invoke("parse", tmp_path / "in.txt", "-m", runs["udgn"], "-f", "ptb")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("(X ") >= 1000


def test_parse_an_empty_input_and_a_missing_model(setup, tmp_path):
    _, _, runs = setup
    (tmp_path / "empty.txt").write_text("")
    result = _invoke("parse", tmp_path / "empty.txt", "-m", runs["udgn"])
    assert result.exit_code == 0 and result.stdout == ""
    _one_error(_invoke("parse", tmp_path / "empty.txt", "-m", tmp_path / "nothing"))


def test_evaluate_mlm_mask_rate(setup):
    root, data, runs = setup
    _one_error(_invoke("evaluate", "mlm", "-m", runs["udgn"], "-d", data, "--mask-rate", "1.5"))


def test_a_weights_file_that_is_not_one(setup, tmp_path):
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    from induce.runs.directory import open_run

    open_run(run).weights("best").write_bytes(b"\x00garbage")
    (tmp_path / "in.txt").write_text("the bill passed\n")
    _one_error(_invoke("parse", tmp_path / "in.txt", "-m", run))


def _renamed(tokens: list, old: str, new: object) -> list:
    return [new if t == old else t for t in tokens]


@pytest.mark.parametrize(
    "change, fragment",
    [
        (lambda v: {**v, "tokens": []}, "no <unk> token"),
        (lambda v: {**v, "tokens": _renamed(v["tokens"], "<unk>", "<UNK>")}, "no <unk> token"),
        (lambda v: {**v, "tokens": _renamed(v["tokens"], "<pad>", "<PAD>")}, "no <pad> token"),
        (lambda v: {**v, "tokens": _renamed(v["tokens"], "<mask>", "m")}, "no <mask> token"),
        (lambda v: {**v, "tokens": _renamed(v["tokens"], "the", 7)}, "list of strings"),
        (lambda v: {**v, "tokens": "the bill"}, "list of strings"),
        (lambda v: {**v, "tokens": v["tokens"] + ["the"]}, "'the' twice"),
        (lambda v: {**v, "specials": [1]}, "list of strings"),
        (lambda v: {**v, "counts": []}, '"counts" must be an object'),
        (lambda v: v["tokens"], 'an object with "tokens"'),
    ],
    ids=["empty", "no-unk", "no-pad", "no-mask", "int-token", "text", "twice", "specials"]
    + ["counts", "list"],
)
def test_parse_with_a_bad_vocabulary(setup, tmp_path, change, fragment):
    """A run's vocab.json without the specials batching needs, or not a vocabulary: one line
    naming the file (it used to be a KeyError '<unk>' in Vocabulary.id)."""
    import json

    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    vocab = json.loads((run / "vocab.json").read_text())
    assert "the" in vocab["tokens"]
    (run / "vocab.json").write_text(json.dumps(change(vocab)))
    before = _digest(run)
    (tmp_path / "in.txt").write_text("the bill passed\n")
    result = _invoke("parse", tmp_path / "in.txt", "-m", run, "-o", tmp_path / "out")
    _one_error(result)
    assert f"{run / 'vocab.json'}: " in result.stderr and fragment in result.stderr
    assert not (tmp_path / "out").exists() and _digest(run) == before


# -- line ends and NUL bytes in parse's input ---------------------------------------------
# Old Mac line ends (CR alone) used to merge every sentence into one, written with the raw CR
# into "# text ="; a NUL byte passed as a word character into the CoNLL-U.

PARSE_INPUTS = {  # --as: the input's two sentences, LF line ends
    "text": "the bill passed\nthe man ran\n",
    "conllu": "".join(
        f"{i}\t{w}\t_\t_\t_\t_\t{h}\tdep\t_\t_\n" if w else "\n"
        for i, w, h in ((1, "the", 2), (2, "bill", 0), (0, "", 0), (1, "he", 2), (2, "ran", 0))
    ),
    "trees": "(S (NP (DT the) (NN bill)) (VP (VBD passed)))\n(S (NP (PRP he)) (VP (VBD ran)))\n",
}
SUFFIXES = {"text": ".txt", "conllu": ".conllu", "trees": ".mrg"}
BAD_BYTES = {
    "cr": (
        lambda text: text.replace("\n", "\r"),
        "a carriage return inside a line (old Mac line ends?): convert the file to LF or CRLF "
        "line ends",
    ),
    "nul": (lambda text: text.replace("bill", "bi\0ll"), "a NUL byte (a binary file?)"),
}


@pytest.mark.parametrize("bad", sorted(BAD_BYTES))
@pytest.mark.parametrize("kind", sorted(PARSE_INPUTS))
@pytest.mark.parametrize("stdin", [False, True], ids=["file", "stdin"])
def test_parse_refuses_a_lone_carriage_return_and_a_nul_byte(setup, tmp_path, bad, kind, stdin):
    _, _, runs = setup
    damage, message = BAD_BYTES[bad]
    data = damage(PARSE_INPUTS[kind])
    path = tmp_path / f"in{SUFFIXES[kind]}"
    path.write_bytes(data.encode())
    flags = [f"--{kind}"] if kind != "text" else []
    name, source = ("<stdin>", "-") if stdin else (str(path), str(path))
    result = CliRunner().invoke(
        app,
        ["parse", source, "-m", str(runs["udgn"]), "-o", str(tmp_path / "out"), *flags],
        input=data if stdin else None,
    )
    _one_error(result)
    text = PARSE_INPUTS[kind]  # the line: the first (CR), the one of "bill" (NUL)
    line = 1 if bad == "cr" else text[: text.index("bill")].count("\n") + 1
    assert result.stderr.strip() == f"error: {name}:{line}: {message}"
    assert not (tmp_path / "out").exists() and path.read_bytes() == data.encode()


@pytest.mark.parametrize("kind", sorted(PARSE_INPUTS))
def test_parse_reads_crlf_line_ends_as_lf(setup, tmp_path, kind):
    _, _, runs = setup
    outputs = []
    for ends in ("\n", "\r\n"):
        path = tmp_path / f"in{len(ends)}{SUFFIXES[kind]}"
        path.write_bytes(PARSE_INPUTS[kind].replace("\n", ends).encode())
        flags = [f"--{kind}"] if kind != "text" else []
        result = _invoke("parse", path, "-m", runs["udgn"], *flags)
        assert result.exit_code == 0, result.output
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1] and "\r" not in outputs[1]


# -- a trainer state that torch reads but induce did not write ----------------------------


def _state_damage(state: dict, case: str) -> object:
    """``state`` (a trainer_state.pt's contents) damaged as ``case`` names."""
    import torch

    if case in ("list", "empty mapping", "progress only"):
        return {"list": [], "empty mapping": {}, "progress only": {"progress": 5}}[case]
    if case.startswith("no "):
        del state[case.removeprefix("no ")]
    elif case == "rng.torch of 3 bytes":
        state["rng"]["torch"] = torch.zeros(3, dtype=torch.uint8)
    elif case == "rng.python [1, 2]":
        state["rng"]["python"] = [1, 2]
    elif case == "negative metrics_bytes":
        state["progress"]["metrics_bytes"] = -5
    elif case == "step a string":
        state["progress"]["step"] = "2"
    elif case == "scheduler best a string":
        state["scheduler"]["best"] = "low"
    elif case == "lr a string":
        state["optimizer"]["param_groups"][0]["lr"] = "fast"
    elif case == "meter losses a string":
        state["progress"]["meter"] = {"losses": "x", "tokens": 0}
    return state


STATE_DAMAGE = {
    "list": "a list, not a mapping",
    "empty mapping": "missing: optimizer, scheduler, progress, rng",
    "progress only": "missing: optimizer, scheduler, rng",
    "no rng": "missing: rng",
    "no optimizer": "missing: optimizer",
    "no scheduler": "missing: scheduler",
    "no progress": "missing: progress",
    "rng.torch of 3 bytes": "its rng.torch is 3 bytes",
    "rng.python [1, 2]": "its rng.python is a list, not random.getstate()'s",
    "negative metrics_bytes": "its progress.metrics_bytes is the number -5, not a count",
    "step a string": "its progress.step is a string, not a count",
    "scheduler best a string": "its scheduler best is a string",
    "lr a string": "its optimizer setting lr is a string",
    "meter losses a string": "its progress.meter losses is a string",
}
STATE_BYTES = {
    "text": (lambda data: b"this is not a trainer state\n", "a text file"),
    "truncated": (lambda data: data[: len(data) // 2], "a truncated or torn archive"),
    "empty": (lambda data: b"", "an empty file"),
    "junk": (lambda data: bytes(range(256)) * 8, "not a file torch.save writes"),
}


def _state_path(run: Path) -> Path:
    from induce.runs.directory import STATE, read_pointer

    pointer = read_pointer(run)
    assert pointer is not None
    return run / pointer["last"] / STATE


@pytest.mark.parametrize("case", sorted(STATE_DAMAGE))
def test_a_damaged_trainer_state_is_one_line(setup, tmp_path, case):
    """Valid torch format, not what induce writes: it used to be a TypeError, KeyError,
    AttributeError, RuntimeError, ValueError or OSError from the middle of the restore."""
    import torch

    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    path = _state_path(run)
    state = torch.load(path, weights_only=True)
    torch.save(_state_damage(state, case), path)
    before = _digest(run)
    result = _invoke("train", "--resume", run, "--set", "train.max_steps=3")
    _one_error(result)
    expected = f"error: {path}: not a trainer state of induce ({STATE_DAMAGE[case]}"
    assert result.stderr.strip().startswith(expected), result.stderr
    assert _digest(run) == before


@pytest.mark.parametrize("case", sorted(STATE_BYTES))
def test_a_trainer_state_that_is_no_torch_file_is_one_line(setup, tmp_path, case):
    _, _, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    path = _state_path(run)
    damage, why = STATE_BYTES[case]
    path.write_bytes(damage(path.read_bytes()))
    before = _digest(run)
    result = _invoke("train", "--resume", run)
    _one_error(result)
    assert result.stderr.strip() == f"error: {path}: not a trainer state of induce ({why})"
    assert _digest(run) == before


def test_evaluate_mlm_of_nan_weights_says_so(setup, tmp_path):
    """It blamed the masking: "no token of the test split could be masked"."""
    root, data, runs = setup
    run = _copy(runs["udgn"], tmp_path)
    poison_weights(run)
    result = _invoke("evaluate", "mlm", "-m", run, "-d", data, "--mask-rate", "0.9")
    _one_error(result)
    assert "is not a number: its best weights hold NaN" in result.stderr
