"""Bad input for every file-reading subcommand: one family of damage at a time (truncated
files, wrong column counts, bytes that are not UTF-8, a byte-order mark, cycles and several
roots in dependency files, unbalanced brackets, empty files, a 200,000-character line, binary
junk, a NUL byte, old Mac (CR) line ends, a directory where a file belongs, a missing file),
applied to one input of a command whose other inputs are good.

Each case either stops with exit code 2 and exactly one line ``error: ...`` on stderr, writing
no output, or, where the damage leaves an input that is actually acceptable (a byte-order
mark, CRLF line ends, a torn last line of ``metrics.jsonl``), succeeds with exit code 0.
Never a traceback, and no input file is ever changed.  ``CASES_PER_COMMAND`` holds the number
of cases per subcommand.
"""

from __future__ import annotations

import hashlib
import random
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from induce.cli.app import app

# -- good inputs --------------------------------------------------------------------------

TREES = (
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) "
    "(. .)))\n(TOP (S (NP (PRP It)) (VP (VBD rained) (ADVP (RB hard))) (. .)))\n"
)
MALT = (
    "The\tDT\t2\ncat\tNN\t3\nsat\tVBD\t0\n.\t.\t3\n\n"
    "It\tPRP\t2\nrained\tVBD\t0\nhard\tRB\t2\n.\t.\t2\n\n"
)
CONLLU = "".join(
    f"{i}\t{w}\t_\t_\t{t}\t_\t{h}\tdep\t_\t_\n" if w else "\n"
    for i, w, t, h in (
        (1, "The", "DT", 2),
        (2, "cat", "NN", 3),
        (3, "sat", "VBD", 0),
        (4, ".", ".", 3),
        (0, "", "", 0),
        (1, "It", "PRP", 2),
        (2, "rained", "VBD", 0),
        (3, "hard", "RB", 2),
        (4, ".", ".", 2),
        (0, "", "", 0),
    )
)
DISTANCES = (
    '{"words": ["the", "cat", "sat"], "distances": [1, 2], "heights": [1, 2, 3]}\n'
    '{"words": ["it", "rained", "hard"], "distances": [2, 1], "heights": [1, 3, 2]}\n'
)
TEXT = "the cat sat on the mat\nit rained hard\n"
GRAMMAR = """\
start S
S -> NP:nsubj VP*        | 3
S -> VP*                 | 1
NP -> DT:det NN*         | 1
VP -> VBZ*               | 1
VP -> VBZ* NP:dobj       | 1
lexicon DT: the a
lexicon NN: dog cat
lexicon VBZ: sees runs
"""
CONFIG = "arch: udgn\noptim:\n  lr: 0.001\ntrain:\n  seed: 1\n"
METRICS = (
    '{"kind": "train", "step": 50, "loss": 5.1}\n'
    '{"kind": "eval", "step": 100, "best": true, "valid_ppl": 45.5, "uf1": 61.0}\n'
)
EVAL = '{"sentence_f1": 61.2, "corpus_f1": 60.1, "per_label_recall": {"NP": 70.0}}\n'

HUGE = 200_000


@dataclass(frozen=True)
class Role:
    """One input of a command: its name in the case folder, kind and good content."""

    name: str
    kind: str  # trees, malt, conllu, jsonl, text, grammar, yaml, metrics, json; folder
    text: str


@dataclass(frozen=True)
class Command:
    name: str
    roles: tuple[Role, ...]
    args: Callable[[Path, Path], list[str]]  # (case folder, output path) -> arguments
    output_is_dir: bool = False


COMMANDS = [
    Command(
        "evaluate brackets",
        (Role("gold.mrg", "trees", TREES), Role("pred.mrg", "trees", TREES)),
        lambda d, out: [
            "evaluate",
            "brackets",
            str(d / "gold.mrg"),
            str(d / "pred.mrg"),
            "--json",
            str(out),
            "-q",
        ],
    ),
    Command(
        "evaluate unsupervised",
        (Role("gold.mrg", "trees", TREES), Role("pred.mrg", "trees", TREES)),
        lambda d, out: [
            "evaluate",
            "unsupervised",
            str(d / "gold.mrg"),
            str(d / "pred.mrg"),
            "--json",
            str(out),
            "-q",
        ],
    ),
    Command(
        "evaluate deps",
        (Role("gold.conllu", "conllu", CONLLU), Role("pred.dp", "malt", MALT)),
        lambda d, out: [
            "evaluate",
            "deps",
            str(d / "gold.conllu"),
            str(d / "pred.dp"),
            "--json",
            str(out),
            "-q",
        ],
    ),
    Command(
        "evaluate baselines",
        (Role("gold.mrg", "trees", TREES),),
        lambda d, out: ["evaluate", "baselines", str(d / "gold.mrg"), "--json", str(out), "-q"],
    ),
    Command(
        "convert trees",
        (Role("in.mrg", "trees", TREES),),
        lambda d, out: ["convert", "trees", str(d / "in.mrg"), "--strip-traces", "-o", str(out)],
    ),
    Command(
        "convert deps",
        (Role("in.conllu", "conllu", CONLLU),),
        lambda d, out: ["convert", "deps", str(d / "in.conllu"), "--to", "malt", "-o", str(out)],
    ),
    Command(
        "convert deps malt",
        (Role("in.dp", "malt", MALT),),
        lambda d, out: ["convert", "deps", str(d / "in.dp"), "--to", "conllu", "-o", str(out)],
    ),
    Command(
        "convert distances",
        (Role("in.jsonl", "jsonl", DISTANCES),),
        lambda d, out: [
            "convert",
            "distances",
            str(d / "in.jsonl"),
            "--to",
            "both",
            "-o",
            str(out),
        ],
    ),
    Command(
        "convert headrules",
        (Role("in.mrg", "trees", TREES),),
        lambda d, out: ["convert", "headrules", str(d / "in.mrg"), "-o", str(out)],
    ),
    Command(
        "preprocess text",
        (Role("train.txt", "text", TEXT), Role("valid.mrg", "trees", TREES)),
        lambda d, out: [
            "preprocess",
            "text",
            "--train",
            str(d / "train.txt"),
            "--valid-trees",
            str(d / "valid.mrg"),
            "--test-trees",
            str(d / "valid.mrg"),
            "-o",
            str(out),
        ],
        output_is_dir=True,
    ),
    Command(
        "preprocess ptb",
        (Role("tb", "folder", ""), Role("tb/wsj_0001.mrg", "trees", TREES)),
        lambda d, out: [
            "preprocess",
            "ptb",
            "--treebank",
            str(d / "tb"),
            "--train",
            "00",
            "--valid",
            "01",
            "--test",
            "02",
            "-o",
            str(out),
        ],
        output_is_dir=True,
    ),
    Command(
        "preprocess synthetic",
        (Role("g.grammar", "grammar", GRAMMAR),),
        lambda d, out: [
            "preprocess",
            "synthetic",
            "--grammar",
            str(d / "g.grammar"),
            "-n",
            "20",
            "--valid",
            "5",
            "--test",
            "5",
            "-o",
            str(out),
        ],
        output_is_dir=True,
    ),
    Command(
        "report",
        (
            Role("run", "folder", ""),
            Role("run/config.yaml", "yaml", CONFIG),
            Role("run/eval/uf1.json", "json", EVAL),
        ),
        lambda d, out: ["report", str(d / "run"), "--markdown", str(out)],
    ),
    Command(  # a run without eval files: its best validation, from metrics.jsonl
        "report validation",
        (Role("run/metrics.jsonl", "metrics", METRICS),),
        lambda d, out: ["report", str(d / "run"), "--markdown", str(out)],
    ),
]
# good files every case of a command has besides its roles
EXTRA = {
    "preprocess ptb": {"tb/wsj_0101.mrg": TREES, "tb/wsj_0201.mrg": TREES},
    "report validation": {"run/config.yaml": CONFIG},
}

# -- the families of damage ----------------------------------------------------------------

DIRECTORY, MISSING = object(), object()


def _truncated(kind: str, text: str) -> bytes:
    """Cut in the middle of the last line (a write stopped short)."""
    body = text.rstrip("\n")
    start = body.rfind("\n") + 1
    return body[: start + (len(body) - start) // 2].encode()


def _columns(kind: str, text: str) -> bytes | None:
    if kind == "malt":  # a row of 2 columns, then one of 5
        rows = text.replace("cat\tNN\t3", "cat\tNN").replace("hard\tRB\t2", "hard\tRB\t2\tx\ty")
        return rows.encode()
    if kind == "conllu":  # a row of 3 columns (word, tag, head)
        return text.replace("2\tcat\t_\t_\tNN\t_\t3\tdep\t_\t_", "2\tcat\tNN").encode()
    return None


def _in_last_line(text: str, byte: bytes) -> bytes:
    """``text`` with ``byte`` put in the middle of its last line."""
    data = text.encode()
    body = data.rstrip(b"\n")
    start = body.rfind(b"\n") + 1
    middle = start + (len(body) - start) // 2
    return data[:middle] + byte + data[middle:]


def _non_utf8(kind: str, text: str) -> bytes:
    """A Latin-1 byte (é) in the middle of the last line."""
    return _in_last_line(text, b"\xe9")


def _cycle(kind: str, text: str) -> bytes | None:
    if kind == "malt":  # The -> cat -> The
        return text.replace("cat\tNN\t3", "cat\tNN\t1").encode()
    if kind == "conllu":
        return text.replace("\tNN\t_\t3\t", "\tNN\t_\t1\t").encode()
    return None


def _roots(kind: str, text: str) -> bytes | None:
    if kind == "malt":
        return text.replace(".\t.\t3", ".\t.\t0").encode()
    if kind == "conllu":
        return text.replace("\t.\t_\t3\t", "\t.\t_\t0\t").encode()
    return None


def _unclosed(kind: str, text: str) -> bytes | None:
    return text.replace("(. .)))\n", "(. .))\n", 1).encode() if kind == "trees" else None


def _overclosed(kind: str, text: str) -> bytes | None:
    return text.replace("(NN cat))", "(NN cat)))", 1).encode() if kind == "trees" else None


def _huge_line(kind: str, text: str) -> bytes:
    """A 200,000-character line: a very long word in plain text, junk everywhere else."""
    if kind == "text":
        return (text + "w" * HUGE + "\n").encode()
    return (text + "x" * HUGE + "\n").encode()


def _binary(kind: str, text: str) -> bytes:
    return random.Random(14).randbytes(4096)


def _nul(kind: str, text: str) -> bytes:
    """A NUL byte in the middle of the last line (a binary file, or a torn write)."""
    return _in_last_line(text, b"\0")


# family -> damage(kind, good text): the bytes to write, DIRECTORY, MISSING, or None where
# the family does not apply to that kind of input
_FILE_DAMAGE: dict[str, Callable[[str, str], object]] = {
    "empty": lambda kind, text: b"",
    "truncated": _truncated,
    "columns": _columns,
    "non-utf8": _non_utf8,
    "bom": lambda kind, text: b"\xef\xbb\xbf" + text.encode(),
    "cycle": _cycle,
    "roots": _roots,
    "unclosed": _unclosed,
    "overclosed": _overclosed,
    "huge-line": _huge_line,
    "binary": _binary,
    "nul": _nul,
    # old Mac line ends (CR alone): read as one line, they merged every sentence into one
    "cr-line-ends": lambda kind, text: text.replace("\n", "\r").encode(),
    "crlf-line-ends": lambda kind, text: text.replace("\n", "\r\n").encode(),
    "directory": lambda kind, text: DIRECTORY,
}


def _files_only(damage: Callable[[str, str], object]) -> Callable[[str, str], object]:
    return lambda kind, text: None if kind == "folder" else damage(kind, text)


FAMILIES: dict[str, Callable[[str, str], object]] = {
    **{name: _files_only(damage) for name, damage in _FILE_DAMAGE.items()},
    "missing": lambda kind, text: MISSING,
    # a regular file where a folder (a run, a treebank) belongs
    "file": lambda kind, text: TREES.encode() if kind == "folder" else None,
}

# Cases whose damaged input is acceptable: exit code 0.  (command, role, family)
ACCEPTED = {
    # a byte-order mark is dropped everywhere, and CRLF line ends are line ends
    *((c.name, r.name, "bom") for c in COMMANDS for r in c.roles),
    *((c.name, r.name, "crlf-line-ends") for c in COMMANDS for r in c.roles),
    # plain text: a cut line is a shorter sentence, a long word is a word
    ("preprocess text", "train.txt", "truncated"),
    ("preprocess text", "train.txt", "huge-line"),
    # a run's metrics.jsonl: the last write cut short by a kill is left out; a run that has
    # not logged yet (no file, an empty one) has no validation to report
    ("report validation", "run/metrics.jsonl", "truncated"),
    ("report validation", "run/metrics.jsonl", "empty"),
    ("report validation", "run/metrics.jsonl", "missing"),
    # a run with no eval files reports its best validation
    ("report", "run/eval/uf1.json", "missing"),
    # settings cut in the middle of their last line are still settings ("train: se")
    ("report", "run/config.yaml", "truncated"),
    # predicted heads need not be a tree (argmax decoding): scored head by head, with a
    # warning, as the official scorers do; gold files must still be trees
    ("evaluate deps", "pred.dp", "cycle"),
    ("evaluate deps", "pred.dp", "roots"),
}


@dataclass(frozen=True)
class Case:
    command: Command
    role: Role
    family: str
    damaged: object

    @property
    def id(self) -> str:
        return f"{self.command.name}|{self.role.name}|{self.family}"

    @property
    def expected(self) -> int:
        return 0 if (self.command.name, self.role.name, self.family) in ACCEPTED else 2


def _cases() -> list[Case]:
    out = []
    for command in COMMANDS:
        for role in command.roles:
            for family, damage in FAMILIES.items():
                damaged = damage(role.kind, role.text)
                if damaged is not None:
                    out.append(Case(command, role, family, damaged))
    return out


CASES = _cases()
CASES_PER_COMMAND = Counter(case.command.name for case in CASES)
XFAIL: dict[str, str] = {}


def _param(case: Case):
    marks = [pytest.mark.xfail(reason=XFAIL[case.id], strict=False)] if case.id in XFAIL else []
    return pytest.param(case, id=case.id, marks=marks)


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _build(folder: Path, case: Case) -> None:
    files = {r.name: r.text.encode() for r in case.command.roles if r.kind != "folder"}
    files.update({k: v.encode() for k, v in EXTRA.get(case.command.name, {}).items()})
    if case.role.kind == "folder":  # the folder's files go with it
        inside = case.role.name + "/"
        files = {k: v for k, v in files.items() if not k.startswith(inside)}
        files[case.role.name] = b""
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name != case.role.name:
            path.write_bytes(data)
        elif case.damaged is DIRECTORY:
            path.mkdir()
        elif case.damaged is not MISSING:
            assert isinstance(case.damaged, bytes)
            path.write_bytes(case.damaged)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_bad_input(tmp_path, case):
    inputs, outputs = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    outputs.mkdir()
    _build(inputs, case)
    before = _snapshot(inputs)
    out = outputs / ("dataset" if case.command.output_is_dir else "result")
    result = CliRunner().invoke(app, case.command.args(inputs, out))
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}"
    )
    assert result.exit_code == case.expected, result.stderr[-2000:]
    if case.expected == 2:
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, (
            result.stderr[-2000:]
        )
        assert len(result.stderr) < 1000, result.stderr[:300]  # no 200,000-character echo
        assert list(outputs.iterdir()) == []  # no output, no temporary file left
    else:
        assert out.exists()
    assert _snapshot(inputs) == before
    # the damaged input is still what the case wrote (nothing renamed or removed)
    if isinstance(case.damaged, bytes):
        assert (inputs / case.role.name).read_bytes() == case.damaged


def test_every_subcommand_is_covered():
    names = {c.name.removesuffix(" malt").removesuffix(" validation") for c in COMMANDS}
    assert names == {
        "evaluate brackets",
        "evaluate unsupervised",
        "evaluate deps",
        "evaluate baselines",
        "convert trees",
        "convert deps",
        "convert distances",
        "convert headrules",
        "preprocess text",
        "preprocess ptb",
        "preprocess synthetic",
        "report",
    }
    assert all(CASES_PER_COMMAND[c.name] >= 8 for c in COMMANDS)


def test_good_inputs_pass(tmp_path):
    """The undamaged inputs of every command work: each failure above is the damage's."""
    for command in COMMANDS:
        folder = tmp_path / command.name.replace(" ", "-")
        for name, text in [(r.name, r.text) for r in command.roles if r.kind != "folder"] + list(
            EXTRA.get(command.name, {}).items()
        ):
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        out = folder / "out-result"
        result = CliRunner().invoke(app, command.args(folder, out))
        assert result.exit_code == 0, (command.name, result.stderr)
        assert out.exists()
        shutil.rmtree(folder)


# -- bad output paths ----------------------------------------------------------------------
# Where the output goes: one of the command's own inputs, a path under a regular file, a
# folder that does not exist, /dev/null.

OUTPUT_PLACES = ("an input", "under a file", "no such folder", "/dev/null")


def _output_path(command: Command, inputs: Path, outputs: Path, place: str) -> Path:
    first = next(r.name for r in command.roles if r.kind != "folder")
    if place == "an input":
        return inputs / first
    if place == "under a file":
        return inputs / first / "result"
    if place == "no such folder":
        return outputs / "missing" / "result"
    return Path("/dev/null")


def _output_expected(command: Command, place: str) -> int:
    if place == "/dev/null":
        return 2 if command.output_is_dir else 0  # a dataset is a folder
    if place == "no such folder" and command.output_is_dir:
        return 0  # a dataset's missing parent folders are made
    return 2


OUTPUT_CASES = [
    pytest.param(command, place, id=f"{command.name}|{place}")
    for command in COMMANDS
    for place in OUTPUT_PLACES
]
OUTPUT_CASES_PER_COMMAND = Counter(command.name for command in COMMANDS for _ in OUTPUT_PLACES)


@pytest.mark.parametrize("command, place", OUTPUT_CASES)
def test_bad_output(tmp_path, command, place):
    inputs, outputs = tmp_path / "in", tmp_path / "out"
    outputs.mkdir()
    for name, text in [(r.name, r.text) for r in command.roles if r.kind != "folder"] + list(
        EXTRA.get(command.name, {}).items()
    ):
        (inputs / name).parent.mkdir(parents=True, exist_ok=True)
        (inputs / name).write_text(text)
    before = _snapshot(inputs)
    out = _output_path(command, inputs, outputs, place)
    result = CliRunner().invoke(app, command.args(inputs, out))
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}"
    )
    expected = _output_expected(command, place)
    assert result.exit_code == expected, result.stderr[-2000:]
    if expected == 2:
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, (
            result.stderr[-2000:]
        )
        assert list(outputs.iterdir()) == []
    assert _snapshot(inputs) == before
