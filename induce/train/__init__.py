"""``induce train``: the masked-LM training engine (one loop for every architecture, on CPU,
one GPU or ``torchrun``) and its validation.  Runs it writes are read through
:mod:`induce.runs`."""
