"""Run directories and what is done with a trained run: settings, weights, history, the
device, and the batched loops over a model (``inference``).

``train`` writes runs; ``parse``, ``evaluate`` and ``report`` read them through this package
and never import ``induce.train``.  Importing it does not import torch (the loops in
``induce.runs.inference`` and ``induce.runs.device`` do).
"""

from induce.runs.config import RunConfig, load_config
from induce.runs.directory import Run, latest_run, open_run, remember_run

__all__ = ["Run", "RunConfig", "latest_run", "load_config", "open_run", "remember_run"]
