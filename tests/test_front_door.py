"""The README's two commands and CI agree."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", readme, re.S).group(1).strip().splitlines()
    assert len(block) == 2, "the quick start is exactly two commands"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert block[1] in ci
    assert block[0].startswith("pip install -e . && induce ")
