"""Settings a run would carry without effect, refused before anything is written.

Some settings are read by one training objective only (``data.mask_rate`` by the masked
language models, ``data.length_step`` by the grammars, ``data.shuffle`` by the chart
parser); given to another objective's run, they used to be accepted, recorded in its
``config.yaml`` and ignored, and the run trained as without them.  The grammars' length
curriculum has settings that cancel one another the same way.  A new run refuses them; a
resumed run refuses the ones its overrides bring (a run recorded before this check resumes
as it was recorded).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from induce.data.architectures import Objective, architecture
from induce.data.errors import ConfigError
from induce.runs.config import RunConfig

_MLM: frozenset[Objective] = frozenset({"masked-lm"})
_CHART: frozenset[Objective] = frozenset({"hinge"})
_GRAMMAR: frozenset[Objective] = frozenset({"likelihood"})

# The settings some objectives read and others do not (every other setting is read by all,
# or has its own check: train.compile, train.bf16, the decoders); a value other than the
# default is refused for the others.
READ_BY: dict[str, frozenset[Objective]] = {
    "data.mask_rate": _MLM,
    "data.eval_seed": _MLM,  # the masks of validation
    "data.eval_runs": _MLM,
    "data.eval_masks": _MLM,
    "data.batching": _MLM,
    "train.cuda_graphs": _MLM,  # the graphed step is the masked LMs'
    "data.batch_tokens": _MLM | _CHART,  # a grammar's batches are of batch_sentences
    "data.batch_sentences": _CHART | _GRAMMAR,
    "data.shuffle": _CHART,
    "data.subbatch_tokens": _CHART,
    "train.evals_per_epoch": _CHART,
    "train.evalb": _CHART,
    "data.length_step": _GRAMMAR,
    "data.final_max_length": _GRAMMAR,
    "data.length_groups": _GRAMMAR,
}

_READERS = {
    "masked-lm": "the masked language models",
    "hinge": "the chart parser",
    "likelihood": "the grammars",
}


def setting_problems(config: RunConfig) -> dict[str, str]:
    """The settings of ``config`` that would have no effect, each with the reason (keyed by
    the dotted setting)."""
    objective = architecture(config.arch).objective
    problems: dict[str, str] = {}
    for key, readers in READ_BY.items():
        if objective not in readers and _value(config, key) != _default(key):
            names = " and ".join(_READERS[r] for r in sorted(readers))
            problems[key] = f"is read by {names} only, not by a {config.arch} run: leave it out"
    if objective in _GRAMMAR:
        problems.update(_curriculum_problems(config))
    if objective in _CHART:
        problems.update(_chart_problems(config))
    return problems


def _chart_problems(config: RunConfig) -> dict[str, str]:
    """The chart parser's batch settings that another one switches off."""
    d, problems = config.data, {}
    if d.batch_sentences and d.batch_tokens != _default("data.batch_tokens"):
        problems["data.batch_tokens"] = (
            "is not read while data.batch_sentences cuts the batches: set that to 0"
        )
    if d.shuffle == "batches" and d.subbatch_tokens != _default("data.subbatch_tokens"):
        problems["data.subbatch_tokens"] = (
            "splits the batches of data.shuffle=sentences only: a batch of data.shuffle="
            "batches runs whole"
        )
    return problems


def _curriculum_problems(config: RunConfig) -> dict[str, str]:
    """The length curriculum (``length_limit``: ``max_length``, growing by ``length_step``
    each epoch up to ``final_max_length``) where one setting cancels another."""
    d = config.data
    if not d.max_length and (d.length_step or d.final_max_length):
        key = "data.length_step" if d.length_step else "data.final_max_length"
        return {key: "grows the length limit data.max_length, which is 0 (no limit): set it"}
    if d.final_max_length and not d.length_step:
        return {
            "data.final_max_length": "ends the growth of data.length_step, which is 0: the "
            "limit stays data.max_length"
        }
    if d.final_max_length and d.final_max_length < d.max_length:
        return {
            "data.final_max_length": f"{d.final_max_length} is below data.max_length "
            f"{d.max_length}, where the limit starts"
        }
    return {}


# Settings a resumed run keeps as recorded: what a change would make of the run.
FIXED_ON_RESUME = {
    "train.seed": "a run continued with another seed is a run of neither, which report "
    "would take for one seed's",
    "train.init_from": "gives a new run its first weights: a resumed run continues from its "
    "checkpoint",
}


def check_settings(config: RunConfig, recorded: RunConfig | None = None) -> None:
    """Refuse the first of :func:`setting_problems`; for a resumed run, only those not
    already in its ``recorded`` settings (what its overrides bring), and a change of what
    it must keep (:data:`FIXED_ON_RESUME`)."""
    known = setting_problems(recorded) if recorded is not None else {}
    for key, problem in setting_problems(config).items():
        if key not in known:
            raise ConfigError(problem, key)
    for key, why in FIXED_ON_RESUME.items():
        before = None if recorded is None else _value(recorded, key)
        if recorded is not None and _value(config, key) != before:
            raise ConfigError(f"is the run's own on a resume ({before}): {why}", key)


def _value(config: RunConfig, key: str) -> Any:
    group, name = key.split(".")
    return getattr(getattr(config, group), name)


def _default(key: str) -> Any:
    group, name = key.split(".")
    fields = {f.name: f for f in dataclasses.fields(RunConfig)}
    default_group = fields[group].default
    return getattr(default_group, name)
