"""``induce train``: one training loop for every architecture (:mod:`induce.train.loop`), on
CPU, one GPU or ``torchrun``, with each objective's hooks (masked LMs, supervised parsers) and
their validation.  Runs it writes are read through :mod:`induce.runs`."""
