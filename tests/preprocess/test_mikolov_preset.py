"""``preprocess ptb --preset mikolov``: Mikolov's sections and his text's normalisation
($ and # kept, a token that is a number and % as N, digits inside words kept)."""

from __future__ import annotations

from induce.data.normalize import Normalization, load_tagset
from tests.preprocess.fixtures import preset_dataset

# each token of section 22 as ours and his ptb.valid.txt write it, where the other rules part
MIKOLOV_TOKENS = [
    ("12.50", "N"),  # "whole" too; "runs" gives N.N
    ("1\\/2", "N"),  # a fraction, its slash escaped as the treebank writes it
    ("%", "N"),
    ("2:30", "N"),
    ("1989-90", "N"),
    (".9.82", "N"),  # a number that begins with its point
    ("1,000,000", "N"),
    ("190.58-point", "190.58-point"),  # a word with digits in it keeps them
    ("30-year", "30-year"),
    ("1980s", "1980s"),
    ("$", "$"),
    ("-", "-"),  # no digit: no number
    ("Dollars", "dollars"),
]


def test_the_mikolov_number_rule():
    rule = Normalization(numbers="mikolov")
    words = [word for word, _ in MIKOLOV_TOKENS]
    assert rule.words(words) == [his for _, his in MIKOLOV_TOKENS]
    assert rule.words(["%", "%"]) == ["N", "N"]  # neighbours each, at the ends of the text
    assert Normalization(numbers="mikolov", digits=None).words(["%", "5"]) == ["%", "5"]


def test_his_words_keep_the_currency_and_number_signs():
    rule = Normalization(numbers="mikolov", word_tags=load_tagset("mikolov_word_tags"))
    pairs = [("$", "$"), ("CD", "12.50"), ("#", "#"), (",", ","), ("NN", "%"), ("-NONE-", "*U*")]
    assert rule.line(pairs) == "$ N # N"


def test_the_preset_writes_his_text(tmp_path):
    sections = {"00": range(0, 14), "21": range(14, 20), "23": range(20, 30)}
    out, manifest = preset_dataset(tmp_path, "mikolov", sections)
    assert manifest["normalization"]["numbers"] == "mikolov"
    assert manifest["normalization"]["tagset"] == "mikolov_word_tags"
    lines = (out / "train.txt").read_text().splitlines()
    assert "prices rose N N in march" in lines  # "3 %"
    assert "shares of acme corp. closed at $ N" in lines  # "$ 12.50", the trace gone
    assert "the firm earned about $ N million in the quarter" in (out / "test.txt").read_text()
    # --tagset overrides the preset's
    again, _ = preset_dataset(tmp_path, "mikolov", sections, "--tagset", "ptb_word_tags")
    assert "shares of acme corp. closed at N" in (again / "train.txt").read_text()


def test_the_number_rule_is_an_option_of_text_and_ptb(tmp_path):
    """``preprocess text`` could only write digit runs: a dataset for a run whose data wrote
    whole numbers (an imported PCFG) was refused by its evaluation, with no way to make one."""
    import yaml
    from typer.testing import CliRunner

    from induce.cli.app import app

    (tmp_path / "t.txt").write_text("he paid 1,000.50 dollars\nit rose 3 %\n")
    for rule, line in [("whole", "he paid N dollars"), ("mikolov", "it rose N N")]:
        out = tmp_path / rule
        args = ["preprocess", "text", "--train", str(tmp_path / "t.txt"), "-o", str(out)]
        result = CliRunner().invoke(app, [*args, "--numbers", rule])
        assert result.exit_code == 0, result.output
        manifest = yaml.safe_load((out / "manifest.yaml").read_text())
        assert manifest["normalization"]["numbers"] == rule
        assert line in (out / "train.txt").read_text().splitlines()
    bad = CliRunner().invoke(app, [*args[:-1], str(tmp_path / "b"), "--numbers", "all"])
    assert bad.exit_code == 2 and "--numbers must be one of runs, whole, mikolov" in bad.output
    sections = {"02": range(0, 12), "22": range(12, 16), "23": range(16, 20)}
    _, manifest = preset_dataset(tmp_path, "pcfg", sections, "--numbers", "runs")
    assert manifest["normalization"]["numbers"] == "runs"  # over the preset's whole
