"""What every evaluation needs: pairing gold and prediction sentences and their tokens."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

from induce.data.errors import ConfigError, InputError
from induce.data.normalize import EMPTY_TAGS, load_tagset
from induce.structure.trees import normalize_word

if TYPE_CHECKING:  # each evaluation reads one kind of file: it imports that reader only
    from induce.data.conll import DepFile
    from induce.data.ptb import TreeFile

Prediction = TypeVar("Prediction", "TreeFile", "DepFile")


def gold_digest(gold: TreeFile | DepFile) -> str:
    """What tells one gold file from another wherever it lies: :func:`words_digest` of its
    sentences, which ``induce report`` compares so that it never averages numbers scored
    against two golds (a validation and a test split, or two treebanks), while the same gold
    at two paths is the same."""
    if hasattr(gold, "sentences"):  # a DepFile (its class is not imported: see above)
        return words_digest(list(tree.words) for tree in gold.sentences)
    return words_digest(tree.words() if tree is not None else [] for tree in gold.trees)


def words_digest(sentences: Iterable[Sequence[str]]) -> str:
    """A digest of sentences' words (16 hex digits of SHA-256): the identity of a gold, or
    of the text a perplexity is of, that does not depend on where the file lies."""
    import hashlib

    digest = hashlib.sha256()
    for words in sentences:
        digest.update(("\x1f".join(words) + "\x1e").encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:16]


def prediction_or_baseline(
    gold: Prediction,
    pred_path: str | Prediction | None,
    read: Callable[[str | Prediction], Prediction],
    baseline: str | None,
    baselines: Sequence[str],
    wordless: Callable[[], Sequence[int]],
) -> tuple[Prediction | None, str, int, list[int | None]]:
    """``(prediction, "", 0, index)`` with the prediction file read and paired with the gold
    (:func:`match_counts`), or ``(None, name, seed, index)`` of the ``baseline`` to score
    instead; ``index[k]`` is gold sentence ``k``'s prediction sentence."""
    if baseline is not None:
        name, seed = parse_baseline(baseline, baselines)
        return None, name, seed, list(range(len(gold)))
    assert pred_path is not None, "give a prediction file or a baseline"
    pred = read(pred_path)
    return pred, "", 0, match_counts(gold, pred, wordless)


def match_counts(
    gold: TreeFile | DepFile,
    pred: TreeFile | DepFile,
    wordless: Callable[[], Sequence[int]] | None = None,
) -> list[int | None]:
    """The prediction sentence of each gold sentence, checking that there is one per gold
    sentence.

    Blank lines at the end of a one-tree-per-line prediction are empty sentences (a parser's
    failed last parses), as EVALB reads them: the prediction is padded with them.  A
    prediction of the words alone has no sentence for a gold sentence without words (``--``
    alone, when punctuation is not a word): where the prediction lacks exactly the
    ``wordless()`` gold sentences, those have none (``None``; the scorers skip them before
    reading a prediction).  Any other difference is an error, which names the first sentence
    whose words are not among its gold sentence's (where a sentence was most likely dropped,
    split or merged), or else the sentences past the shorter file's end.
    """
    count, gold_count = len(pred), len(gold)
    if count == gold_count:
        return list(range(count))
    from induce.data.ptb import TreeFile  # not imported by the dependency evaluation

    empty = 0  # empty lines: a tree file's failed parses
    if isinstance(pred, TreeFile):
        if count < gold_count <= count + pred.trailing_blank_lines:
            pred.pad_to(gold_count)
            return list(range(gold_count))
        empty = sum(1 for item in pred.trees if item is None)
    skipped = set(wordless()) if wordless is not None and count < gold_count else set()
    if skipped and count == gold_count - len(skipped):
        kept = iter(range(count))
        index = [None if k in skipped else next(kept) for k in range(gold_count)]
        if _astray(gold, pred, index) is None:  # else a sentence with words was lost too
            return index
    note = f" ({empty} of them empty lines, read as failed parses as EVALB does)" if empty else ""
    raise InputError(
        f"{gold_count} sentences in the gold file {gold.path} but {count} in the prediction"
        f"{note}{_first_astray(gold, pred)}",
        pred.path,
    )


def _first_astray(gold: TreeFile | DepFile, pred: TreeFile | DepFile) -> str:
    """``"; the first ... is sentence N ..."``: the first prediction sentence with a word its
    gold sentence lacks (normalised as :func:`align_tokens` compares them).

    A prediction holds its gold sentence's words, or those of them a convention keeps, so a
    word the gold sentence lacks is where the two files part.  Where every sentence agrees as
    far as the shorter file goes, the sentences past its end are named instead."""
    k = _astray(gold, pred, list(range(min(len(gold), len(pred)))))
    if k is not None:
        return (
            "; the first sentence with words its gold sentence lacks is sentence "
            f"{k + 1} (line {_line(pred, k)}; gold line {_line(gold, k)})"
        )
    first, last = min(len(pred), len(gold)) + 1, max(len(pred), len(gold))
    if first == 1:
        return ""  # an empty file: the counts say it all
    past, has = (
        (f"sentence {first}", "has") if first == last else (f"sentences {first}-{last}", "have")
    )
    if len(pred) < len(gold):
        return (
            f"; the prediction agrees with the gold's first {first - 1}, and gold {past} "
            f"(from gold line {_line(gold, first - 1)}) {has} no prediction"
        )
    return (
        f"; the prediction agrees with every gold sentence, and its {past} "
        f"(from line {_line(pred, first - 1)}) {has} no gold sentence"
    )


def _astray(
    gold: TreeFile | DepFile, pred: TreeFile | DepFile, index: Sequence[int | None]
) -> int | None:
    """The first gold sentence ``k`` whose prediction sentence ``index[k]`` has a word it
    lacks (normalised as :func:`align_tokens` compares them), else ``None``."""
    golds, preds = _word_lists(gold), _word_lists(pred)
    for k, j in enumerate(index):
        g, p = golds[k], None if j is None else preds[j]
        if p is not None and g is not None and not {_key(w) for w in p} <= {_key(w) for w in g}:
            return k
    return None


def _line(sentences: TreeFile | DepFile, index: int) -> str:
    """Sentence ``index``'s line, with its file where a folder's file is not the one named."""
    source, line = sentences.where(index)
    return str(line) if source == sentences.path else f"{source}:{line}"


def _word_lists(sentences: TreeFile | DepFile) -> list[Sequence[str] | None]:
    from induce.data.ptb import TreeFile

    if isinstance(sentences, TreeFile):
        return [None if t is None else t.words() for t in sentences.trees]
    return [s.words for s in sentences.sentences]


def require_sentences(count: int, path: str) -> None:
    if count == 0:
        raise InputError("no sentences in the file", path)


def _show_tokens(tokens: Sequence[str], limit: int = 25) -> str:
    shown = " ".join(tokens[:limit])
    return f"[{shown} ...(+{len(tokens) - limit})]" if len(tokens) > limit else f"[{shown}]"


_NUMBER = re.compile(r"n[n,.]*")
# a token that is a number, with its fractions' slashes, times' colons and ranges' hyphens,
# or "%": Mikolov's text writes each as one N
_NUMBER_TOKEN = re.compile(r"[n.,\\/:-]*n[n.,\\/:-]*|%")


def _key(word: str) -> str:
    # Idempotent: a model's "N" (a normalised number) must match the treebank's "12", under
    # every number rule: digit runs ("1,000." as "N,N."), whole numbers ("N", the PCFG
    # data's) and Mikolov's ("1\\/2" and "%" as "N").  Lower-cased first: a prediction may
    # be lower-cased where the gold is not ("n.v." for "N.V."), so a letter n reads as a
    # number mark on both sides ("inn" keys as "in"): harmless where only the tokens at one
    # position are compared.  The key only decides whether two tokens at one position are
    # the same word.
    key = _NUMBER.sub("n", normalize_word(word).lower())
    return "n" if _NUMBER_TOKEN.fullmatch(key) else key


def align_tokens(
    gold_tokens: Sequence[str], keep: Sequence[bool], pred_tokens: Sequence[str], where: str
) -> bool:
    """Decide what the prediction's tokens are, comparing normalised words (lower-case, digit
    runs as ``N``, so a model's normalised output matches the treebank's words).

    Returns ``True`` when the prediction has all gold tokens (punctuation included) and must be
    reduced to the kept words, ``False`` when it already has exactly the kept words.  Anything
    else raises :class:`InputError` (``where`` locates the sentence) showing both token lists.
    """
    pred = [_key(w) for w in pred_tokens]
    if len(pred) == len(gold_tokens):
        gold = [_key(w) for w in gold_tokens]
        if pred == gold:
            return True
        reference = gold_tokens
    else:
        kept = [w for w, k in zip(gold_tokens, keep) if k]
        gold = [_key(w) for w in kept]
        if pred == gold:
            return False
        reference = kept
    position = next(
        (i for i, (a, b) in enumerate(zip(gold, pred)) if a != b), min(len(gold), len(pred))
    )
    raise InputError(
        f"{where}: tokens differ from the gold (first at token {position + 1}); "
        f"gold {_show_tokens(list(reference))} vs prediction {_show_tokens(list(pred_tokens))}"
    )


def word_filter(tagset: str) -> Callable[[str], bool]:
    """A predicate on tags: in the named tag set, or anything but empty elements for
    ``all``.  The tag sets of words are named ``*_word_tags``: another (``ptb_punctuation``,
    what ``--remove-punct`` removes) would score the punctuation alone."""
    tags = load_tagset(tagset)
    if tags is not None and not tagset.endswith("_word_tags"):
        raise ConfigError(
            f"{tagset} lists no words' tags (a tag set of words is named *_word_tags)",
            setting="tagset",
        )
    if tags is None:
        return lambda tag: tag not in EMPTY_TAGS
    return tags.__contains__


def parse_baseline(spec: str, allowed: Sequence[str]) -> tuple[str, int]:
    """``"random:7"`` -> ``("random", 7)``; other names take seed 0 (unused)."""
    name, _, seed = spec.partition(":")
    if name not in allowed:
        raise ConfigError(
            f"unknown baseline {spec!r}; choose from {', '.join(allowed)} "
            "(random takes an optional :SEED)"
        )
    if seed and name != "random":
        raise ConfigError(f"baseline {name!r} takes no seed")
    try:
        return name, int(seed) if seed else 0
    except ValueError:
        raise ConfigError(f"baseline seed must be an integer, got {seed!r}") from None
