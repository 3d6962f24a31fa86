"""``preprocess ptb --preset pcfg``: the PCFG papers' data (Kim et al. 2019), and their
number rule against the official regular expression."""

from __future__ import annotations

import random
import re

from induce.data.normalize import Normalization
from tests.preprocess.fixtures import preset_dataset

OFFICIAL = re.compile("[0-9]{1,}([,.]?[0-9]*)*")  # compound-pcfg process_ptb.py


def test_a_number_with_its_separators_is_one_symbol():
    whole = Normalization(numbers="whole")
    words = ["1,000.50", "1990s", "3.5%", "12", "a1b2", "$"]
    assert whole.words(words) == ["N", "Ns", "N%", "N", "aNbN", "$"]
    assert Normalization().words(words) == ["N,N.N", "Ns", "N.N%", "N", "aNbN", "$"]


def test_the_whole_number_rule_is_the_official_expression():
    rng = random.Random(0)
    whole = Normalization(lowercase=False, numbers="whole")
    for _ in range(3000):
        word = "".join(rng.choice("0123,.a-") for _ in range(rng.randint(1, 9)))
        assert whole.words([word]) == [OFFICIAL.sub("N", word)], word


def test_the_preset_writes_the_papers_data(tmp_path):
    sections = {"02": range(0, 12), "22": range(12, 16), "23": range(16, 20)}
    out, manifest = preset_dataset(tmp_path, "pcfg", sections)
    assert manifest["normalization"]["numbers"] == "whole"
    assert manifest["normalization"]["tagset"] == "ptb_word_tags"
    text = (out / "train.txt").read_text()
    assert not re.search(r"[A-MO-Z0-9]", text)  # lower-cased; numbers are N
    assert not re.search(r"(^| )[,.;:`']+( |$)", text, re.M)  # punctuation removed
