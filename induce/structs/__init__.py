"""Differentiable structures over batched score tensors, in the manner of torch-struct and
SuPar's ``structs``: each structure gives the log-partition of its scores under a semiring
(:data:`LOG`: the sum over structures, :data:`MAX`: the best one), marginals as the
derivative of the log-partition (autograd) and the best structure as the derivative of the
max-partition.

- :mod:`induce.structs.spans`: binary bracketings scored by their spans, labelled or not
  (span CKY; the chart parser's Viterbi with back-pointers and its hinge loss);
- :mod:`induce.structs.dependencies`: projective (Eisner) and non-projective (Matrix-Tree)
  dependency trees scored by their arcs;
- :mod:`induce.structs.pcfg`: the inside algorithm of a binary PCFG, dense rules or
  low-rank rules in rank space.

Every structure works on a padded batch of sentences of different lengths at once (masks or
lengths, never equal-length batches) with one vectorised step per span width: no Python loop
over sentences or spans.  ``tests/structs`` checks each against brute-force enumeration under
both semirings in float64.  This package imports torch and nothing else of ``induce``.
"""

from induce.structs.semiring import LOG, MAX, Semiring, derivative

__all__ = ["LOG", "MAX", "Semiring", "derivative"]
