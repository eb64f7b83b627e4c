"""Reasoning about sizes: the shape environment that owns symbols, ranges, replacements and
guards (``env``), what it learns from a guard (``solver``), whether a relation is implied
(``decision``, with ``z3bridge`` for what ranges cannot settle), exact bounds as projections
(``projection``), symbolic sizes outside export (``symbolic``: ``ss.symbolic_shape`` and
``ss.bounds``), and the translation validation of an exported program (``validate``).
Built on ``symshape.algebra``."""
