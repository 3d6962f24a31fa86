"""``induce convert``: distances and heights to structures, head rules, format conversions.

Every command reads a file or ``-`` (stdin) and writes stdout, or ``--output FILE`` written
atomically (nothing half-written on errors or Ctrl-C).  No torch is imported, but by
``convert checkpoint``, which writes a run directory from an official checkpoint.
"""

from __future__ import annotations

import sys
from typing import TypeVar

import typer

from induce.cli.common import handle_errors, warn, with_progress
from induce.data.errors import ConfigError

app = typer.Typer(
    help="Convert between syntactic distances/heights, trees and dependencies, and between "
    "treebank formats.",
    no_args_is_help=True,
)

INPUT = typer.Argument(
    ..., help="Input file (a directory of treebank files for trees); - for stdin."
)
OUTPUT = typer.Option(
    None, "--output", "-o", help="Write here (atomically) instead of stdout (- for stdout)."
)
REMOVE_PUNCT = typer.Option(
    False,
    "--remove-punct",
    help="Remove punctuation (, . : `` '' -LRB- -RRB-) the same way "
    "from trees and dependency files.",
)
KEEP_TAGS = typer.Option(
    None,
    "--keep-tags",
    help="Keep only words whose tag is in this tag set (e.g. "
    "ptb_word_tags, the unsupervised-parsing word filter).",
)


def _emit(text: str, output: str | None) -> None:
    if output and output != "-":
        from induce.data.files import atomic_write

        atomic_write(output, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def _tag_filters(remove_punct: bool, keep_tags: str | None):
    from induce.data.normalize import load_tagset

    drop = load_tagset("ptb_punctuation") if remove_punct else None
    keep = load_tagset(keep_tags) if keep_tags else None
    return drop or frozenset(), keep


C = TypeVar("C", bound=str)


def _choice(value: str, allowed: tuple[C, ...], option: str) -> C:
    """``value``, typed as one of ``allowed`` (a usage error naming ``option`` otherwise)."""
    if value not in allowed:
        raise typer.BadParameter(f"{option} must be one of {', '.join(allowed)}")
    return allowed[allowed.index(value)]


@app.command("distances")
@handle_errors
def distances(
    source: str = INPUT,
    to: str = typer.Option(
        "ptb",
        "--to",
        help="ptb (Algorithm 1), conllu (Algorithm 3) or both (JSON lines with tree, heads, root).",
    ),
    ties: str = typer.Option(
        "left",
        "--ties",
        help="Equal distances: split at the leftmost (left) or rightmost (right) first.",
    ),
    output: str | None = OUTPUT,
) -> None:
    """Trees and dependencies from syntactic distances and heights (StructFormer Alg. 1-3).

    Each input line: {"words": [...], "distances": [n-1 numbers], "heights": [n numbers]}
    (heights only for conllu/both; optional "tags")."""
    _choice(to, ("ptb", "conllu", "both"), "--to")
    from induce.convert.distances import convert_distances
    from induce.structure.distances import TIES

    done = convert_distances(source, need_heights=to != "ptb", ties=_choice(ties, TIES, "--ties"))
    if to == "ptb":
        from induce.data.ptb import format_trees

        text = format_trees(c.tree for c in done)
    elif to == "conllu":
        from induce.data.conll_write import format_deps

        text = format_deps((c.deptree() for c in done), "conllu")
    else:
        from induce.data.jsonl import format_jsonl

        text = format_jsonl(c.record() for c in done)
    _emit(text, output)


@app.command("headrules")
@handle_errors
@with_progress
def headrules(
    source: str = INPUT,
    rules: str = typer.Option(
        "penn2malt", "--rules", "-r", help="Head table: penn2malt, collins or a YAML file."
    ),
    to: str = typer.Option("conllu", "--to", help="conllu, conllx or malt."),
    output: str | None = OUTPUT,
) -> None:
    """Dependency trees from treebank trees with head rules (traces removed first)."""
    _choice(to, ("conllu", "conllx", "malt"), "--to")
    from induce.convert.headrules import convert_headrules
    from induce.data.conll_write import format_deps

    done = convert_headrules(source, rules)
    _emit(format_deps(done.sentences, to), output)
    _warn_left_out(done.empty, 0)
    if done.labels_need_function_tags:  # once written: a failed write stays one error line
        warn(
            "the trees carry no function tags (NP-SBJ, ...-PRD): labels such as SBJ and PRD "
            "cannot be assigned"
        )


@app.command("trees")
@handle_errors
@with_progress
def trees(
    source: str = INPUT,
    strip_traces: bool = typer.Option(
        False, "--strip-traces", help="Remove -NONE- elements and phrases left empty."
    ),
    strip_function_tags: bool = typer.Option(
        False, "--strip-function-tags", help="NP-SBJ-1 -> NP (-LRB- etc. kept)."
    ),
    remove_punct: bool = REMOVE_PUNCT,
    keep_tags: str | None = KEEP_TAGS,
    unwrap: bool = typer.Option(
        False, "--unwrap", help="Drop a TOP/ROOT/S1 or unlabelled root with one child."
    ),
    collapse_unary: bool = typer.Option(
        False, "--collapse-unary", help="Collapse unary chains (the top label stays)."
    ),
    lowercase: bool = typer.Option(False, "--lowercase", help="Lower-case the words."),
    binarize: str | None = typer.Option(
        None, "--binarize", help="right or left factored; new nodes are labelled X|<A-B-...>."
    ),
    unbinarize: bool = typer.Option(
        False, "--unbinarize", help="Splice out X|<...> nodes made by --binarize."
    ),
    to: str = typer.Option(
        "ptb",
        "--to",
        help="ptb (one tree per line), distances (JSON lines, Definition 3.1) or text (the "
        "words, one sentence a line, case kept: the input for parse --pretokenized whose "
        "output evaluate brackets scores against these trees).",
    ),
    one_per_line: bool = typer.Option(
        False, "--one-per-line", hidden=True, help="Ignored: the output is always one per line."
    ),
    output: str | None = OUTPUT,
) -> None:
    """Clean and reshape treebank trees; multi-line .mrg files become one tree per line."""
    if one_per_line:  # kept so that old scripts still run; it never changed anything
        warn("--one-per-line is ignored (trees are always written one per line)")
    _choice(to, ("ptb", "distances", "text"), "--to")
    shape = {
        "strip_function_tags": strip_function_tags,
        "unwrap": unwrap,
        "collapse_unary": collapse_unary,
        "binarize": binarize,
        "unbinarize": unbinarize,
    }
    changed = [name for name, value in shape.items() if value]
    if to == "text" and changed:  # the words stay what they were: an option of no effect
        raise ConfigError("changes the trees, not their words, which --to text writes", changed[0])
    from induce.convert.trees import TreeOps, convert_trees
    from induce.structure.binarize import FACTORS

    factor = None if binarize is None else _choice(binarize, FACTORS, "--binarize")

    drop, keep = _tag_filters(remove_punct, keep_tags)
    ops = TreeOps(
        strip_traces=strip_traces,
        strip_function_tags=strip_function_tags,
        drop_tags=drop,
        keep_tags=keep,
        unwrap=unwrap,
        collapse_unary=collapse_unary,
        lowercase=lowercase,
        unbinarize=unbinarize,
        binarize=factor,
    )
    done = convert_trees(source, ops)
    if to == "ptb":
        from induce.data.ptb import format_trees

        _emit(format_trees(done.trees), output)
    elif to == "text":
        from induce.convert.trees import text_lines

        _emit(text_lines(done.trees), output)
    else:
        from induce.convert.trees import distance_records
        from induce.data.jsonl import format_jsonl

        _emit(format_jsonl(distance_records(done)), output)
    _warn_left_out(done.empty, done.dropped)  # once written, as headrules warns


@app.command("deps")
@handle_errors
@with_progress
def deps(
    source: str = INPUT,
    source_format: str | None = typer.Option(
        None, "--from", help="conllu, conllx or malt (default: guess)."
    ),
    to: str = typer.Option(
        "conllu", "--to", help="conllu, conllx, malt, or heights (JSON lines, Definition 3.2)."
    ),
    remove_punct: bool = REMOVE_PUNCT,
    keep_tags: str | None = KEEP_TAGS,
    output: str | None = OUTPUT,
) -> None:
    """Convert dependency files (Malt-TAB, CoNLL-X -> CoNLL-U, ...), optionally without
    punctuation, or write each word's syntactic height.  Between CoNLL-U and CoNLL-X, LEMMA
    and FEATS stay and UPOS is CPOSTAG (a CPOSTAG that is no UPOS name is left out)."""
    _choice(to, ("conllu", "conllx", "malt", "heights"), "--to")
    from induce.convert.deps import convert_deps, height_records

    drop, keep = _tag_filters(remove_punct, keep_tags)
    done, dropped = convert_deps(source, source_format, drop, keep)
    if to == "heights":
        from induce.data.jsonl import format_jsonl

        _emit(format_jsonl(height_records(done)), output)
    elif to == "conllu" and done.raw is not None:  # CoNLL-U in: keep every other column
        from induce.data.conll_write import format_conllu_like

        _emit(format_conllu_like(done, done.sentences), output)
    else:
        from induce.data.conll_write import format_deps

        _emit(format_deps(done.sentences, to, done.word_columns()), output)
    _warn_left_out(0, dropped)


@app.command("checkpoint")
@handle_errors
def checkpoint(
    source: str = typer.Argument(
        ...,
        help="The official checkpoint: a state dict (torch or .safetensors), or the "
        "training script's pickled [model, ...] / {model, idx2word, ...} with --trust-pickle.",
    ),
    arch: str = typer.Option(
        ..., "--arch", help="structformer, udgn, npcfg, cpcfg, tnpcfg, simplepcfg or scpcfg."
    ),
    dictionary: str | None = typer.Option(
        None,
        "--dict",
        help="The official dict.pkl / ptb-dict.pkl, compound-pcfg's .dict (word id per "
        "line), or a word list in id order; a compound-pcfg pickle carries its own.",
    ),
    out: str = typer.Option(..., "--out", "-o", help="The run directory to create."),
    trust_pickle: bool = typer.Option(
        False,
        "--trust-pickle",
        help="Read a whole pickled model (runs code named in the file: only for a checkpoint "
        "you trust; the official code must be on PYTHONPATH).",
    ),
    relations: str | None = typer.Option(
        None, "--relations", help="StructFormer: the official --relations (default head,child)."
    ),
    weight_act: str | None = typer.Option(
        None,
        "--weight-act",
        help="StructFormer: the official --weight_act (softmax, sigmoid) [default: softmax].",
    ),
) -> None:
    """Import an official checkpoint (StructFormer, UDGN; Kim et al.'s N-/C-PCFG; the TN-PCFG
    repository's TN-, SN- and SC-PCFG) as a run directory that parse, evaluate and report
    read."""
    from induce.runs import remember_run
    from induce.runs.official import ARCHS, import_checkpoint
    from induce.runs.official_pcfg import ARCHS as GRAMMARS
    from induce.runs.official_pcfg import import_pcfg_checkpoint

    if arch in GRAMMARS:
        for name, value in (("relations", relations), ("weight_act", weight_act)):
            if value is not None:  # StructFormer's: given to a grammar, of no effect
                raise ConfigError(f"is StructFormer's: a {arch} checkpoint has none", name)
        import_pcfg_checkpoint(source, arch, out, dictionary, trust_pickle)
        remember_run(out)
        typer.echo(f"wrote {out}", err=True)
        return
    if dictionary is None:
        raise ConfigError("is needed: the official dictionary or a word list", "dictionary")
    import_checkpoint(
        source,
        _choice(arch, (*ARCHS, *GRAMMARS), "--arch"),
        out,
        dictionary,
        trust_pickle=trust_pickle,
        relations=None if relations is None else relations.split(","),
        weight_act=weight_act or "softmax",
    )
    remember_run(out)
    typer.echo(f"wrote {out}", err=True)


def _warn_left_out(empty: int, wordless: int) -> None:
    """What a conversion left out, said after its output is written (a failed write stays
    one error line)."""
    if empty:
        warn(
            f"{empty} empty sentence(s) left out: the blank lines between the trees of a "
            "one-tree-per-line file (a parser's failed parses)"
        )
    if wordless:
        warn(f"{wordless} sentence(s) left without words were dropped")
