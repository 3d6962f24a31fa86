"""Atomic writes, text reading, strict settings."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

from induce.data.config import SEED, from_mapping, parse_yaml
from induce.data.errors import ConfigError, InputError
from induce.data.files import atomic_write
from induce.data.reading import decode_utf8, iter_lines, read_text
from induce.data.text import parse_text


def test_atomic_write_replaces_whole_file(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    atomic_write(target, "new content\n")
    assert target.read_text() == "new content\n"
    assert os.listdir(tmp_path) == ["out.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_atomic_write_interrupted_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    target.write_text("old")

    def boom(*_):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.json"]


def test_atomic_write_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    target = tmp_path / "shared.txt"
    target.write_text("old")
    target.chmod(0o664)
    atomic_write(target, "new")
    assert target.read_text() == "new" and target.stat().st_mode & 0o777 == 0o664
    fresh = tmp_path / "fresh.txt"
    atomic_write(fresh, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask


def test_atomic_write_refuses_a_file_its_owner_made_read_only(tmp_path, monkeypatch):
    """The rename would replace a read-only file that ``open`` could not write (root may
    write anything: the file system's answer is stood in for)."""
    target = tmp_path / "frozen.txt"
    target.write_text("keep")
    target.chmod(0o444)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, m: False if p == str(target) else real(p, m))
    with pytest.raises(InputError, match="frozen.txt: cannot write: the file is read-only"):
        atomic_write(target, "new")
    assert target.read_text() == "keep" and sorted(tmp_path.iterdir()) == [target]


def test_atomic_write_missing_folder(tmp_path):
    with pytest.raises(InputError, match="the folder does not exist"):
        atomic_write(tmp_path / "nope" / "x.json", "{}")
    with pytest.raises(InputError, match="is a directory"):
        atomic_write(tmp_path, "{}")


def test_utf8_errors_point_at_the_line():
    with pytest.raises(InputError, match=r"^f\.txt:3: not valid UTF-8 \(byte 0xff at column 2\)"):
        decode_utf8(b"ok\nfine\nx\xffy\n", "f.txt")
    assert decode_utf8("\ufeffbom".encode(), "f") == "bom"


@pytest.mark.parametrize(
    "data, line, column",
    [
        ("ok\ncafé déjà".encode() + b"\xff\n", 2, 10),  # columns are characters, not bytes
        ("\ufeffé".encode() + b"\xe9", 1, 2),  # the byte-order mark is no column
        ("é\n\ufeff".encode() + b"\xc3", 2, 2),  # only the first line's is one
    ],
)
def test_utf8_error_columns_count_characters(tmp_path, data, line, column):
    """An editor's column: 'déjà' is 4 columns, not 6.  Whole files and streamed lines alike."""
    (tmp_path / "f.txt").write_bytes(data)
    name = str(tmp_path / "f.txt")
    for read in (read_text, lambda n: list(iter_lines(n)), lambda n: decode_utf8(data, n)):
        with pytest.raises(InputError) as caught:
            read(name)
        assert str(caught.value).startswith(f"{name}:{line}: not valid UTF-8 (byte 0x")
        assert str(caught.value).endswith(f" at column {column})")


CR_MESSAGE = (
    "a carriage return inside a line (old Mac line ends?): convert the file to LF or CRLF line ends"
)
BAD_TEXT = [  # (bytes, line of the fault, message)
    (b"the old man saw a dog\rthe dog slept\rhe ran\r", 1, CR_MESSAGE),
    (b"ok\r\nfine\r\nthe\rdog\r\n", 3, CR_MESSAGE),  # CRLF lines, one CR alone
    (b"ok\nlast line\r", 2, CR_MESSAGE),  # a CR ending the last line is no CRLF
    (b"ok\r\r\n", 1, CR_MESSAGE),
    (b"ok\nthe old man\0 saw a dog\n", 2, "a NUL byte (a binary file?)"),
]


@pytest.mark.parametrize("data, line, message", BAD_TEXT)
def test_every_reader_refuses_a_lone_carriage_return_and_a_nul_byte(tmp_path, data, line, message):
    """Whole files (read_text, decode_utf8) and streamed lines (iter_lines) alike."""
    (tmp_path / "f.txt").write_bytes(data)
    name = str(tmp_path / "f.txt")
    expected = f"{name}:{line}: {message}"
    for read in (read_text, lambda n: list(iter_lines(n)), lambda n: decode_utf8(data, n)):
        with pytest.raises(InputError) as caught:
            read(name)
        assert str(caught.value) == expected


def test_crlf_line_ends_read_as_lf(tmp_path):
    (tmp_path / "f.txt").write_bytes(b"\xef\xbb\xbfthe cat\r\n\r\nsat\r\n")
    assert list(iter_lines(tmp_path / "f.txt")) == [(1, "the cat"), (2, ""), (3, "sat")]
    assert read_text(tmp_path / "f.txt") == "the cat\r\n\r\nsat\r\n"


def test_plain_text():
    tf = parse_text("the cat  sat\n\n  a dog \n")
    assert tf.sentences == [["the", "cat", "sat"], [], ["a", "dog"]]
    assert parse_text("a\n\nb\n", skip_blank=True).lines == [1, 3]


@dataclass(frozen=True)
class _Settings:
    name: str
    size: int = 3
    rate: float = 0.5
    tags: tuple[str, ...] = ()
    limit: int | None = None


def test_strict_settings():
    s = from_mapping(
        _Settings, {"name": "x", "rate": 1, "tags": ["a", "b"], "limit": None}, "cfg.yaml"
    )
    assert s == _Settings("x", 3, 1.0, ("a", "b"), None)
    with pytest.raises(ConfigError, match=r"cfg\.yaml: unknown setting\(s\) 'sise'"):
        from_mapping(_Settings, {"name": "x", "sise": 4}, "cfg.yaml")
    with pytest.raises(ConfigError, match="missing setting 'name'"):
        from_mapping(_Settings, {}, "cfg.yaml")
    with pytest.raises(ConfigError, match="size: expected an integer"):
        from_mapping(_Settings, {"name": "x", "size": "4"}, "cfg.yaml")
    with pytest.raises(ConfigError, match="size: expected an integer"):
        from_mapping(_Settings, {"name": "x", "size": True}, "cfg.yaml")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("arch: udgn\nmodel: [1, 2\n", "cfg.yaml:3: not valid YAML: expected ',' or ']'"),
        ("a: 1\n  b: 2\n", "cfg.yaml:2: not valid YAML: mapping values are not allowed here"),
        ("a: [" * 5000, "cfg.yaml: not valid YAML (RecursionError)"),
    ],
)
def test_bad_yaml_is_one_line_with_file_and_line(text, fragment):
    with pytest.raises(InputError) as caught:
        parse_yaml(text, "cfg.yaml")
    assert str(caught.value).startswith(fragment) and "\n" not in str(caught.value)
    assert parse_yaml("a: 1\n", "cfg.yaml") == {"a": 1}


def test_a_seed_is_what_torch_manual_seed_takes():
    assert SEED.holds(0) and SEED.holds(2**64 - 1)
    assert not SEED.holds(2**64) and not SEED.holds(-1)
    assert SEED.describe() == "in [0, 18446744073709551615]"  # in full, not 1.84467e+19
