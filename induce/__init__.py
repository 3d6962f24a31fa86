"""induce: unsupervised grammar induction and its evaluation.

The package imports nothing heavy at start-up: ``induce evaluate`` and ``induce convert`` must
start fast and run without torch.
"""

__version__ = "0.1.0"
