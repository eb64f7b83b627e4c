"""``code_guards_divisor``, which the proofs of the division rules share (those proofs, and
the other proofs of the expression layer's rules, ``symshape/algebra/expr.py``, live in
``proofs/expr_every.py``, ``proofs/divmod_every.py``, ``proofs/monomial_every.py`` and
``proofs/pysource_every.py``).
"""
from __future__ import annotations

from typing import Callable

from .pyint import require


def code_guards_divisor(divide: Callable) -> None:
    """The side condition ``divisor != 0`` of a rewrite that drops the divisor is checked by
    the code: dividing by a size (a ``SymInt`` whose range admits 0) records the guard
    ``divisor != 0``, so the program's contract excludes the inputs where eager Python
    raises ZeroDivisionError; a data-dependent divisor becomes a check run where it is
    computed."""
    from symshape.reasoning.env import ShapeEnv
    from symshape.algebra.infinity import INT_OO
    from symshape.algebra.ranges import ValueRange
    from symshape.sizes.symint import SymInt
    env = ShapeEnv()
    a = env.create_symbol(6, "a", ValueRange(0, INT_OO))
    b = env.create_symbol(3, "b", ValueRange(0, INT_OO))
    divide(SymInt(a.expr, 6, env), SymInt(b.expr, 3, env))
    require(env.ranges[b].lower >= 1 or any(b in g.cond.free_symbols for g in env.guards),
            "dividing by a size that may be 0 records no guard: range %s, guards %s",
            env.ranges[b], [g.cond for g in env.guards])
    env = ShapeEnv()
    u = env.create_unbacked("u", ValueRange(0, INT_OO))
    divide(6, SymInt(u.expr, None, env))
    require(any(u in c.free_symbols for c, _, _ in env.checks),
            "dividing by a data-dependent size that may be 0 records no run-time check")
