"""Tiny corpora shaped like the real releases, made from induce's own sample treebank."""

from __future__ import annotations

from pathlib import Path

from induce.data.ptb import read_trees
from induce.data.types import Tree
from induce.evaluate.baselines import builtin_treebank


def sample_trees() -> list[Tree]:
    return [t for t in read_trees(builtin_treebank()).trees if t is not None]


def ldc_text(trees: list[Tree]) -> str:
    """Trees the way LDC files print them: a blank line, ``( (S`` on its own, indented
    continuation lines."""
    out = [""]
    for tree in trees:
        inner = tree.children[0]  # the sample's TOP child
        lines = [f"( ({inner.label} "]
        for child in inner.children:
            lines.append("    " + child.to_string() + " ")
        lines[-1] += "))"
        out.extend(lines)
    return "\n".join(out) + "\n"


def make_ptb(root: Path, sections: dict[str, range]) -> list[Tree]:
    """``root/parsed/mrg/wsj/SS/wsj_SSNN.mrg``; ``sections`` maps a section to tree indices
    (two trees per file).  Returns the sample trees."""
    trees = sample_trees()
    for section, indices in sections.items():
        folder = root / "parsed" / "mrg" / "wsj" / section
        folder.mkdir(parents=True, exist_ok=True)
        chosen = [trees[i] for i in indices]
        for k in range(0, len(chosen), 2):
            (folder / f"wsj_{section}{k // 2:02d}.mrg").write_text(ldc_text(chosen[k : k + 2]))
    return trees


def preset_dataset(
    root: Path, preset: str, sections: dict[str, range], *more: str
) -> tuple[Path, dict]:
    """``preprocess ptb --preset PRESET`` (and ``more`` arguments) over :func:`make_ptb`'s
    treebank of ``sections`` under ``root``: the dataset folder and its manifest."""
    import yaml
    from typer.testing import CliRunner

    from induce.cli.app import app

    if not (root / "ptb").exists():
        make_ptb(root / "ptb", sections)
    out = root / f"data-{preset}-{len(more)}"
    args = ["preprocess", "ptb", "-t", str(root / "ptb"), "-o", str(out), "--preset", preset]
    result = CliRunner().invoke(app, [*args, *more])
    assert result.exit_code == 0, result.output
    return out, yaml.safe_load((out / "manifest.yaml").read_text())


def make_bllip(root: Path) -> dict[str, list[str]]:
    """``root/{1987,1988,1989}/wN_SSS/`` article files with ``(S1 ...)`` trees, AUX tags and
    ``#N`` coreference suffixes.  Returns the file names per role."""
    trees = sample_trees()
    layout = {1987: [1, 2, 71, 122, 3], 1988: [1, 2, 54, 107], 1989: [10, 11, 28, 37]}
    k = 0
    roles: dict[str, list[str]] = {}
    for year, sections in layout.items():
        for section in sections:
            folder = root / str(year) / f"w{str(year)[-1]}_{section:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            for article in range(2):
                text = []
                for _ in range(2):
                    tree = trees[k % len(trees)]
                    k += 1
                    line = tree.to_string().replace("(TOP ", "(S1 ", 1)
                    line = line.replace("(NP-SBJ ", "(NP-SBJ#1 ").replace("(MD ", "(AUX ")
                    text.append(line)
                name = f"{folder.name}_{article:03d}"
                (folder / name).write_text("\n".join(text) + "\n")
                roles.setdefault(f"{year}/{section}", []).append(name)
    return roles
