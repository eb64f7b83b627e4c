"""The size algebra: integer size expressions in canonical form (``expr``), the integer
infinities (``infinity``), value ranges with a sound transfer function per operator
(``ranges``), normalised relations between sizes (``relations``) and the simplifier that
rewrites an expression under what is known (``simplify``).  Depends on nothing else in
symshape but ``errors``."""
