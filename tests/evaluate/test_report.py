"""``induce report`` on broken run directories: a one-line error naming the file (and line or
key), exit code 2, no table file; a metrics.jsonl whose last write was cut short is read
without its torn line."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from induce.cli.app import app
from induce.reporting import read_run
from induce.runs.directory import read_metrics, read_settings

BEST = {"kind": "eval", "step": 100, "best": True, "valid_ppl": 45.5, "uf1": 61.0, "uas": 50.0}
LATER = {"kind": "eval", "step": 200, "best": False, "valid_ppl": 47.0, "uf1": 60.0}


def _run(folder, config="arch: udgn\ntrain:\n  seed: 1\n", metrics=None):
    (folder / "eval").mkdir(parents=True)
    (folder / "config.yaml").write_text(config)
    if metrics is not None:
        (folder / "metrics.jsonl").write_bytes(metrics)
    return folder


def _lines(*records):
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def _report(tmp_path, run):
    out = tmp_path / "table.md"
    result = CliRunner().invoke(app, ["report", str(run), "--markdown", str(out)])
    return result, out


@pytest.mark.parametrize(
    "config, metrics, evals, error",
    [
        ("arch: udgn\ntrain: [\n", None, {}, "config.yaml:3: not valid YAML: "),
        ("- udgn\n- 1\n", None, {}, "config.yaml: not a mapping of settings (a YAML list)"),
        ("", None, {}, "config.yaml: not a mapping of settings (empty)"),
        (None, _lines(BEST) + b'{"kind": "ev\n' + _lines(LATER), {}, "metrics.jsonl:2: not JSON"),
        (None, b"[1, 2]\n", {}, "metrics.jsonl:1: not a JSON record"),
        (None, None, {"u": '{"sentence_f1": 61.2}'}, "u.json: a report with sentence_f1 but no"),
        (None, None, {"d": '{"uas": 50.0}'}, "d.json: a report with uas but no uuas"),
        (
            None,
            None,
            {"u": '{"sentence_f1": "61.2", "corpus_f1": 60}'},
            'u.json: sentence_f1 is not a number: "61.2"',
        ),
        (None, None, {"m": '{"perplexity": true}'}, "m.json: perplexity is not a number: true"),
        (
            None,
            None,
            {"u": '{"sentence_f1": 1, "corpus_f1": 2, "per_label_recall": {"NP": "5"}}'},
            "u.json: per_label_recall.NP is not a number",
        ),
        (None, None, {"x": "[1, 2]"}, "x.json: not a report of induce evaluate"),
        (None, None, {"x": '"uas"'}, "x.json: not a report of induce evaluate"),
        (None, None, {"x": '{"settings": 5, "all": "x"}'}, "x.json: settings is not a mapping"),
        (None, None, {"x": '{"settings": [], "uas": 1}'}, "x.json: settings is not a mapping"),
        (
            None,
            None,
            {"d": '{"settings": {"gold_scheme": 5}, "uas": 50, "uuas": 60}'},
            "d.json: settings.gold_scheme is not the name of a scheme",
        ),
        (  # a line end would end the LaTeX note's comment: the rest live LaTeX
            None,
            None,
            {"d": '{"settings": {"gold_scheme": "a\\n\\\\end{tabular}"}, "uas": 5, "uuas": 6}'},
            "d.json: settings.gold_scheme is not the name of a scheme",
        ),
        (
            None,
            _lines({**BEST, "valid_ppl": "45.5"}),
            {},
            'metrics.jsonl: the best validation (step 100): valid_ppl is not a number: "45.5"',
        ),
    ],
)
def test_broken_runs_are_one_line_errors(tmp_path, config, metrics, evals, error):
    run = _run(tmp_path / "run", **({"config": config} if config is not None else {}))
    if metrics is not None:
        (run / "metrics.jsonl").write_bytes(metrics)
    for name, text in evals.items():
        (run / "eval" / f"{name}.json").write_text(text)
    result, out = _report(tmp_path, run)
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert error in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "tail",
    [b'{"kind": "eval", "st', b'{"kind": "\xc3', b"\0\0\0\0", b"{", b"   "],
    ids=["cut record", "cut character", "zeros", "brace", "blank"],
)
def test_a_torn_last_line_is_left_out(tmp_path, tail):
    run = _run(tmp_path / "run", metrics=_lines(BEST, LATER) + tail)
    assert read_metrics(run / "metrics.jsonl") == [BEST, LATER]
    assert read_run(run).values == {"valid PPL": 45.5, "valid UF1": 61.0, "valid UAS": 50.0}
    result, out = _report(tmp_path, run)
    assert result.exit_code == 0 and out.exists()
    # only a last line without its newline is torn; one with it is a broken record
    (run / "metrics.jsonl").write_bytes(_lines(BEST) + b'{"kind": "eval", "st\n')
    assert "metrics.jsonl:2: not JSON" in _report(tmp_path, run)[0].stderr


def test_a_torn_first_and_only_line(tmp_path):
    run = _run(tmp_path / "run", metrics=b'{"kind": "eval", "st')
    assert read_metrics(run / "metrics.jsonl") == []
    assert read_run(run).values == {}
    (run / "metrics.jsonl").write_bytes(b"\xef\xbb\xbf" + _lines(BEST)[:-1])  # BOM, no newline
    assert read_metrics(run / "metrics.jsonl") == [BEST]


def test_settings_that_are_not_json_still_group_runs(tmp_path):
    """YAML dates, integer keys and a train section that is no mapping: read, not a crash."""
    a = _run(tmp_path / "a", config="arch: udgn\nwhen: 2024-01-01\n1: x\ntrain: [1, 2]\n")
    b = _run(tmp_path / "b", config="arch: udgn\nwhen: 2024-01-01\n1: x\ntrain: [1, 2]\n")
    assert read_run(a).setting == read_run(b).setting and read_run(a).seed is None
    assert read_settings(a)["train"] == [1, 2]


def test_keys_a_run_predates_and_thread_counts_do_not_split_a_setting(tmp_path):
    old = _run(tmp_path / "old", config="arch: udgn\ntrain:\n  seed: 1\n  bf16: false\n")
    new = _run(
        tmp_path / "new",
        config="arch: udgn\ntrain:\n  seed: 2\n  bf16: false\n  cpu_bf16: false\n  threads: 8\n",
    )
    other = _run(tmp_path / "other", config="arch: udgn\ntrain:\n  seed: 3\n  cpu_bf16: true\n")
    assert read_run(old).setting == read_run(new).setting
    assert read_run(other).setting != read_run(old).setting  # a real difference still counts
    assert [read_run(r).seed for r in (old, new, other)] == [1, 2, 3]


def test_a_run_named_twice_is_refused(tmp_path, monkeypatch):
    """``report r r ./r r/`` used to count one run as four seeds (a std of 0.00 out of
    nothing); the same directory under another name or through a link is refused."""
    from induce.data.errors import InputError
    from induce.reporting import report

    a = _run(tmp_path / "a", metrics=_lines(BEST))
    _run(tmp_path / "b", config="arch: udgn\ntrain:\n  seed: 2\n", metrics=_lines(LATER))
    (tmp_path / "link").symlink_to(a, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    for names in (["a", "b", "a"], ["a", "./a/"], ["b", str(a), "link"], ["a", "a/../a"]):
        result = CliRunner().invoke(app, ["report", *names, "--markdown", "t.md"])
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
        assert "the run directory is named twice" in result.stderr
        assert "it would count as two seeds" in result.stderr
        assert not (tmp_path / "t.md").exists()
        with pytest.raises(InputError, match="named twice"):
            report(names)
    done = CliRunner().invoke(app, ["report", "a", "b"])
    assert done.exit_code == 0 and "| udgn | custom | 2 |" in done.stdout, done.output


def test_a_copied_run_is_refused(tmp_path, monkeypatch):
    """A copy of a run (``cp -r a c``), or a run repeated with the same settings and seed,
    is not a second seed: refused, naming both; the same seed in another setting is fine."""
    import shutil

    from induce.data.errors import InputError
    from induce.reporting import report

    a = _run(tmp_path / "a", metrics=_lines(BEST))
    _run(tmp_path / "b", config="arch: udgn\ntrain:\n  seed: 2\n", metrics=_lines(LATER))
    shutil.copytree(a, tmp_path / "c")
    _run(tmp_path / "d", config="arch: udgn\ntrain:\n  seed: 1\n  threads: 4\n", metrics=b"")
    monkeypatch.chdir(tmp_path)
    for names, first in ((["a", "b", "c"], "a"), (["c", "d"], "c")):
        result = CliRunner().invoke(app, ["report", *names, "--markdown", "t.md"])
        assert result.exit_code == 2, result.output
        assert result.stderr.count("\n") == 1 and result.stdout == ""
        assert f"{names[-1]}: the same settings and seed (train.seed 1) as {first}" in (
            result.stderr
        )
        assert not (tmp_path / "t.md").exists()
        with pytest.raises(InputError, match="a copy or a repeat of one run"):
            report(names)
    _run(tmp_path / "e", config="arch: udgn\nmodel:\n  d_model: 64\ntrain:\n  seed: 1\n")
    done = CliRunner().invoke(app, ["report", "a", "b", "e"])
    assert done.exit_code == 0, done.output


UF1 = {"sentence_f1": 61.0, "corpus_f1": 60.0}
EVALB = {"settings": {"metric": "brackets", "evalb": {"name": "collins"}}, "all": {"f1": 90.0}}


def _seed(tmp_path, seed: int, evals: dict[str, dict]) -> object:
    run = _run(tmp_path / f"r{seed}", config=f"arch: udgn\ntrain:\n  seed: {seed}\n")
    for name, report in evals.items():
        (run / "eval" / f"{name}.json").write_text(json.dumps(report))
    return run


def test_two_reports_of_one_kind_in_a_run_are_refused(tmp_path):
    """A run's two UF1 reports (valid-uf1.json, test-uf1.json) gave one column, the file
    sorted last winning without a word: the table showed validation's number as the
    result."""
    run = _seed(tmp_path, 1, {"test-uf1": UF1, "valid-uf1": {**UF1, "sentence_f1": 70.0}})
    result, out = _report(tmp_path, run)
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr.startswith(
        f"error: {run / 'eval' / 'valid-uf1.json'}: UF1 is also in test-uf1.json: a run's eval/"
    )


def test_evalb_reports_are_named_by_their_file_as_dependency_reports_are(tmp_path):
    """scripts/chart_ptb.sh writes evalb-valid.json and evalb-test.json: both were
    "F1 collins", validation's winning; each is now its own column."""
    valid = {**EVALB, "all": {"f1": 91.0}}
    run = _seed(tmp_path, 1, {"evalb-test": EVALB, "evalb-valid": valid, "evalb": EVALB})
    assert read_run(run).values == {
        "F1 collins": 90.0,
        "F1 collins test": 90.0,
        "F1 collins valid": 91.0,
    }


def test_a_row_of_reports_scored_otherwise_is_refused(tmp_path):
    """One setting's seeds scored under two conventions were averaged into one UF1."""
    scored = [{**UF1, "settings": {"metric": "unsupervised", "convention": {"name": c},
                                   "gold": f"g{k}.mrg", "prediction": f"p{k}.ptb"}}
              for k, c in enumerate(("structformer", "cpcfg"))]  # fmt: skip
    runs = [_seed(tmp_path, k + 1, {"uf1": report}) for k, report in enumerate(scored)]
    result = CliRunner().invoke(app, ["report", *map(str, runs)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {runs[1] / 'eval' / 'uf1.json'}: UF1 was scored otherwise than in "
        f"{runs[0] / 'eval' / 'uf1.json'} (settings.convention differs): the runs' row would "
        "average the two\n"
    )
    same = {
        **scored[1],
        "settings": {**scored[1]["settings"], "convention": {"name": "structformer"}},
    }
    (runs[1] / "eval" / "uf1.json").write_text(json.dumps(same))  # other paths: the same scoring
    assert CliRunner().invoke(app, ["report", *map(str, runs)]).exit_code == 0


def test_a_setting_one_report_lacks_is_said_as_such(tmp_path):
    """A report from an induce before a setting existed lacks the key: "differs" sent the
    user looking for a value that was never written."""
    settings = {"metric": "unsupervised", "convention": {"name": "structformer"}}
    newer = {**UF1, "settings": {**settings, "length_limit": 10}}
    runs = [
        _seed(tmp_path, 1, {"uf1": {**UF1, "settings": settings}}),
        _seed(tmp_path, 2, {"uf1": newer}),
    ]
    result = CliRunner().invoke(app, ["report", *map(str, runs)])
    assert result.exit_code == 2
    assert (
        f"(settings.length_limit is in one of the two only: {runs[0] / 'eval' / 'uf1.json'}, "
        "without it, was most likely written by an earlier induce; evaluate that run again)"
    ) in result.stderr


def test_a_column_some_runs_lack_is_said(tmp_path):
    """A seed whose evaluation failed dropped out of its column's mean without a word, while
    the runs column counted it."""
    runs = [
        _seed(tmp_path, 1, {"uf1": UF1}),
        _seed(tmp_path, 2, {"uf1": UF1}),
        _seed(tmp_path, 3, {"mlm": {"perplexity": 50.0}}),
    ]
    result = CliRunner().invoke(app, ["report", *map(str, runs)])
    assert result.exit_code == 0
    assert f"warning: udgn: UF1 from 2 of its 3 runs (none in {runs[2]}): its mean (std)" in (
        result.stderr
    )
    # a NaN (JSON's NaN, as Python writes it) is dropped as a missing value, and said so:
    # finding the run that lacked the column raised StopIteration (a traceback)
    (runs[2] / "eval" / "uf1.json").write_text(json.dumps({**UF1, "sentence_f1": math.nan}))
    result = CliRunner().invoke(app, ["report", *map(str, runs)])
    assert result.exit_code == 0, result.output
    assert f"UF1 from 2 of its 3 runs (NaN in {runs[2]})" in result.stderr
    # so is an infinity (JSON's Infinity): it was the row's mean, and pandas' RuntimeWarning
    (runs[2] / "eval" / "uf1.json").write_text(json.dumps({**UF1, "sentence_f1": math.inf}))
    result = CliRunner().invoke(app, ["report", *map(str, runs)])
    assert result.exit_code == 0, result.output
    assert f"UF1 from 2 of its 3 runs (inf in {runs[2]})" in result.stderr
    assert "inf" not in result.stdout and "RuntimeWarning" not in result.stderr
    # finite numbers whose mean is not: said; an integer beyond a float: one error line
    for run in runs[:2]:
        (run / "eval" / "uf1.json").write_text(json.dumps({**UF1, "sentence_f1": 1e308}))
    result = CliRunner().invoke(app, ["report", *map(str, runs)])
    assert result.exit_code == 0, result.output
    assert "UF1: the mean (std) of its runs' numbers is beyond a float's range" in result.stderr
    (runs[0] / "eval" / "uf1.json").write_text(f'{{"sentence_f1": 1{"0" * 400}, "corpus_f1": 1}}')
    result = CliRunner().invoke(app, ["report", *map(str, runs)])
    assert result.exit_code == 2 and "sentence_f1 is beyond a float's range" in result.stderr


def _dataset(run, name: str, train_sentences: int, where: str = "/somewhere") -> None:
    """A run's dataset record as ``induce train`` writes it, its paths under ``where``."""
    (run / "dataset.yaml").write_text(
        f"path: {where}/{name}\nnormalization:\n  lowercase: true\n"
        f"counts:\n  train:\n    sentences: {train_sentences}\n"
        f"    unknown_token_rate: {0.01 if where == '/somewhere' else 0.02}\n"
        f"sources:\n  treebank: {where}/treebank_3\n  layout: ldc ({where}/treebank_3)\n"
        f"  files: 25\n  sha256: {'ab' * 32}\n"
    )


def test_seeds_trained_on_other_data_are_other_rows(tmp_path):
    """Seeds of one config on two datasets were averaged into one row (a 500-word demo and
    the PTB); the dataset's record now belongs to the setting, its path does not."""
    runs = [_seed(tmp_path, s, {"u": UF1}) for s in (1, 2, 3)]
    _dataset(runs[0], "ptb", 1000)
    # the same data at another machine's paths (and a rate a later version reckons anew)
    _dataset(runs[1], "ptb", 1000, where="/elsewhere")
    _dataset(runs[2], "tiny", 20)
    a, b, c = (read_run(r) for r in runs)
    assert a.setting == b.setting != c.setting
    result = CliRunner().invoke(app, ["report", *map(str, runs)])
    assert result.exit_code == 0, result.output
    assert "| udgn (dataset=ptb " in result.stdout and "| 2 |" in result.stdout
    assert "| udgn (dataset=tiny " in result.stdout


def test_numbers_scored_against_other_golds_are_not_averaged(tmp_path):
    """A validation split's UF1 and a test split's were averaged: the report's gold digest
    (of the gold's words, so the same gold at two paths agrees) tells them apart."""
    one = {**UF1, "settings": {"gold": "a/valid.trees", "gold_digest": "1111"}}
    two = {**UF1, "settings": {"gold": "b/valid.trees", "gold_digest": "1111"}}
    other = {**UF1, "settings": {"gold": "a/test.trees", "gold_digest": "2222"}}
    runs = [_seed(tmp_path, s, {"u": r}) for s, r in ((1, one), (2, two), (3, other))]
    assert CliRunner().invoke(app, ["report", str(runs[0]), str(runs[1])]).exit_code == 0
    refused = CliRunner().invoke(app, ["report", str(runs[0]), str(runs[2])])
    assert refused.exit_code == 2 and "settings.gold_digest differs" in refused.stderr


def test_the_gold_digest_is_of_the_words_not_the_file(tmp_path):
    from induce.data.ptb import parse_trees
    from induce.evaluate.common import gold_digest

    a = parse_trees("(S (NP (DT the) (NN cat)) (VP (VBD sat)))\n")
    b = parse_trees("(TOP (S (NP (DT the)\n  (NN cat))\n (VP (VBZ sat))))\n", "other.mrg")
    c = parse_trees("(S (NP (DT the) (NN dog)) (VP (VBD sat)))\n")
    assert gold_digest(a) == gold_digest(b) != gold_digest(c)
    assert len(gold_digest(a)) == 16


def test_a_run_still_training_or_without_numbers_is_said(tmp_path):
    import os

    live = _seed(tmp_path, 1, {"u": UF1})
    (live / ".lock").write_text(f"{os.getpid()}\n")  # this process: alive
    empty = _seed(tmp_path, 2, {})
    result = CliRunner().invoke(app, ["report", str(live), str(empty)])
    assert result.exit_code == 0, result.output
    assert f"{live}: still training (process {os.getpid()})" in result.stderr
    assert f"{empty}: no numbers" in result.stderr
    (live / ".lock").write_text("999999999\n")  # a killed trainer's lock: not training
    assert "still training" not in CliRunner().invoke(app, ["report", str(live)]).stderr
    (live / ".lock").write_text("999999999 elsewhere.example 7\n")  # one this host can't see
    elsewhere = CliRunner().invoke(app, ["report", str(live)]).stderr
    assert "still training (process 999999999 on elsewhere.example)" in elsewhere


def test_a_grid_names_each_row_by_what_tells_it_apart(tmp_path):
    """On a 2 x 2 grid (size x lr) the three first keys tied and two rows read alike."""
    from induce.reporting import setting_labels

    runs = []
    for k, (nt, t, rank, lr) in enumerate(
        [(10, 20, 16, 1), (10, 20, 16, 3), (20, 40, 32, 1), (20, 40, 32, 3)]
    ):
        config = (
            f"arch: tnpcfg\nmodel:\n  nt: {nt}\n  t: {t}\n  rank: {rank}\n"
            f"optim:\n  lr: 0.00{lr}\ntrain:\n  seed: {k}\n"
        )
        runs.append(read_run(_run(tmp_path / f"g{k}", config=config)))
    labels = setting_labels(runs)
    assert len(set(labels)) == 4, labels
    assert all("optim.lr=" in label for label in labels)


def test_a_bar_in_a_column_name_stays_in_its_cell(tmp_path):
    """A report named ``deps-x|y.json`` gave a markdown header of one cell more than its rows;
    LaTeX printed ``|``, ``<`` and ``>`` as other glyphs (OT1)."""
    from induce.reporting import aggregate, to_latex, to_markdown

    run = _seed(tmp_path, 1, {"deps-x|y<z>": {"uas": 50.0, "uuas": 60.0}})
    table = aggregate([read_run(run)])
    header, rule, row = to_markdown(table).splitlines()[:3]
    assert "UAS x\\|y<z>" in header
    count = lambda line: len(line.replace("\\|", "").split("|"))  # noqa: E731
    assert count(header) == count(rule) == count(row)
    assert r"UAS x\textbar{}y\textless{}z\textgreater{}" in to_latex(table)


def test_every_scored_report_names_its_gold_and_report_refuses_two_golds(tmp_path):
    """The reports of evaluate brackets, unsupervised and deps carry gold_digest; two seeds
    scored against two splits are refused, the same gold under two names is one."""
    valid, test = tmp_path / "valid.mrg", tmp_path / "test.mrg"
    valid.write_text("(TOP (S (NP (DT the) (NN cat)) (VP (VBD sat))))\n")
    test.write_text("(TOP (S (NP (DT a) (NN dog)) (VP (VBD ran))))\n")
    (tmp_path / "copy.mrg").write_text(valid.read_text())
    conllu = tmp_path / "g.conllu"
    conllu.write_text(
        "1\tthe\t_\tDET\tDT\t_\t2\tdet\t_\t_\n2\tcat\t_\tNOUN\tNN\t_\t0\troot\t_\t_\n\n"
    )
    runs = {}
    for seed, gold in ((1, valid), (2, tmp_path / "copy.mrg"), (3, test)):
        run = runs[seed] = _seed(tmp_path, seed, {})
        for kind in ("brackets", "unsupervised"):
            out = run / "eval" / f"{kind}.json"
            args = ["evaluate", kind, str(gold), str(gold), "--json", str(out), "-q"]
            assert CliRunner().invoke(app, args).exit_code == 0
            assert len(json.loads(out.read_text())["settings"]["gold_digest"]) == 16
    deps = tmp_path / "deps.json"
    args = ["evaluate", "deps", str(conllu), str(conllu), "--json", str(deps), "-q"]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert len(json.loads(deps.read_text())["settings"]["gold_digest"]) == 16
    same = CliRunner().invoke(app, ["report", str(runs[1]), str(runs[2])])
    assert same.exit_code == 0 and "| udgn | custom | 2 |" in same.stdout, same.output
    other = CliRunner().invoke(app, ["report", str(runs[1]), str(runs[3])])
    assert other.exit_code == 2 and "settings.gold_digest differs" in other.stderr
