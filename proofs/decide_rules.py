"""Proofs about the decision procedure's environment on samples: the bounds pipeline
(``ss.bounds``) and ``SymInt``'s operators (``decide.related_facts`` for every environment
in ``proofs/related_every.py``).

``decide.sound``, ``env.evaluate``, ``env.check`` and ``env.add_guard`` are proven for every
condition and environment in ``proofs/decide_specs_every.py``, ``z3bridge.implies`` in
``proofs/implies_every.py``; steps of ``decide`` along every path on symbolic inputs in
``proofs/decide_every.py``.
"""
from __future__ import annotations

import itertools

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.reasoning.env import ShapeEnv
from symshape.algebra.infinity import INT_OO
from symshape.algebra.ranges import ValueRange

from . import samples, proves
from .code import Symbols, divisors, encode, encode_cond, prove_code
from .pyint import Py, require
from .solver_rules import _in_ranges

COEFFS = (-1, 0, 1, 2)
CONSTS = (-3, 0, 2)


def _environments():
    """(name, env, symbols): boxes with finite and infinite ends, without and with
    recorded guards (an inequality between the two, a divisibility, an equality)."""
    env_of = _fresh_env
    yield ("box", *env_of([(5, 2, INT_OO), (3, 0, 9)], []))
    yield ("x >= y + 2", *env_of([(6, 2, INT_OO), (3, 2, INT_OO)],
                                 [lambda x, y: R.ge(x, y + 2)]))
    yield ("x + y <= 12, x % 2 == 0", *env_of([(4, 2, INT_OO), (5, 1, INT_OO)],
                                              [lambda x, y: R.le(x + y, 12),
                                               lambda x, y: R.eq(E.mod(x, 2), 0)]))


def _knowledge(P_, env: ShapeEnv, zs) -> list:
    """What the environment knows, in Z3: root ranges, facts, replacements."""
    k = _in_ranges(env, zs, [s for s in env.ranges if s not in env.replacements])
    k += [encode_cond(P_, f, zs) for f in env.facts]
    k += [zs[s] == encode(P_, v, zs) for s, v in env.replacements.items()]
    return k


def _fresh_env(specs, guards):
    env = ShapeEnv()
    syms = [env.create_symbol(h, "v%d" % i, ValueRange(lo, hi))
            for i, (h, lo, hi) in enumerate(specs)]
    for g in guards:
        env.add_guard(g(*(s.expr for s in syms)), None)
    return env, syms


def expressions(x, y) -> list:
    """The sizes of the grammar: ``a*x + b*t + c`` for every ``t`` of ``conditions``."""
    terms = [y, E.floordiv(x, 2), E.mod(x, 3), E.smin(x, y), E.smax(x, y), x * y]
    out = []
    for t in terms:
        for a, b, c in itertools.product(COEFFS, COEFFS, CONSTS):
            e = a * x + b * t + c
            if type(e) is not int:
                out.append(e)
    return list(dict.fromkeys(out))


@proves("bounds.pipeline",
        over=samples("every tenth size of the grammar under three environments"))
def bounds_pipeline():
    """``ss.bounds`` (``bounds_expr``) on every tenth size of the grammar under each
    environment: the range holds the size on every admitted point (Z3), and each finite
    end is attained by an admitted point (Z3: a model)."""
    from symshape.algebra.infinity import is_inf
    from symshape.reasoning.symbolic import bounds_expr
    finite = 0
    for name, env, syms in _environments():
        x, y = (s.expr for s in syms)
        for e in expressions(x, y)[::10]:
            got = bounds_expr(env, e)
            P_ = Py()
            zs = Symbols()
            know = _knowledge(P_, env, zs)
            v = encode(P_, e, zs)
            know += [d != 0 for d in divisors(P_, e, zs)]
            ends = [(b, low) for b, low in ((got.lower, True), (got.upper, False))
                    if not is_inf(b)]
            if not ends:
                continue
            prove_code(lambda *bs: z3.And(*[v >= b if low else v <= b
                                            for b, (_, low) in zip(bs, ends)]),
                       [z3.IntVal(b) for b, _ in ends], know, P=P_,
                       what="bounds(%s) = %s under %s" % (e, got, name))
            for b, _ in ends:
                s = z3.Solver()
                s.add(*know, *P_.side, v == b)
                require(s.check() == z3.sat, "bounds(%s) end %s under %s is not attained",
                        e, b, name)
                finite += 1
    require(finite >= 30, "only %d finite ends", finite)
