"""``simplify.push_into_minmax`` (``fold.push_minmax``) for every expression: the code run
with symbolic coefficients, constants and Min / Max arguments (``proofs/symcoeff.py``)
along every path.

The code reads an expression ``x`` only through its terms: a term is a *hit* when its
coefficient is 1 or -1 and it is one Min / Max atom (a comprehension, one test per term);
with exactly one hit it builds ``rest = x - c*K(args)`` and ``K'(rest + c*a for a in args)``
by expression arithmetic (``add`` / ``scale``, exact), and keeps it only when ``size`` is
smaller (``size`` here answers anything: it only gates the rewrite).  So the Min / Max
term and a second Min / Max term, each with a symbolic coefficient, and a symbolic constant
cover every path for every number of terms: the second term is a second hit where its
coefficient is 1 or -1 (no rewrite) and otherwise fails the test, as a term of any other
class (a symbol, a product, another op atom) does, and is then read only by ``add``.  The atom's arguments are read one by one in
one comprehension (two arguments, an expression and an int, stand for any number), and the
pushed Min / Max is handed to ``expr``'s own constructor, here its specification: an
expression equal to ``K'`` of the arguments (``minmax.flatten``, ``minmax.const_merge``,
``minmax.offset_dominance``).  The identity on which the push rests, ``r + Min(m, a) ==
Min(r + m, r + a)`` (and its three duals), is the fold step of ``Min`` / ``Max``: it holds
for every arity by induction on ``Min(a1, ..., an) == Min(Min(a1, ..., a(n-1)), an)``.
"""
from __future__ import annotations

import itertools

import z3

from symshape.algebra import expr as E

from . import every, proves
from .code import Symbols
from .pyint import prove, require, zmax, zmin
from .code import prove_code
from .symcoeff import SInt, encode, patched, sym_ints
from .symexec import Explorer, raise_on_paths

S, T, U, W = E.Sym(930), E.Sym(931), E.Sym(932), E.Sym(933)


def _minmax_spec(kind: str, args) -> E.Expr:
    """``expr``'s Min / Max constructor as its proofs state it: an expression whose value
    is the min / max of ``args`` (the atom itself, unsimplified)."""
    return E.atom_expr(E.OpAtom(kind, tuple(args)))


def _push_paths(kind: str) -> list:
    """``push_into_minmax`` of ``x = c*K(kb, u) + d*Max(t, w) + k`` (``K`` the
    ``kind``; every coefficient and constant symbolic, ``u``, ``t``, ``w`` and ``s`` any
    values) along every path, ``size`` any answer (it only gates the rewrite): its output,
    where it rewrites, equals ``x``.  Returns whether each path rewrote."""
    from symshape.algebra import simplify as SI
    c, d, k, kb = sym_ints("c d k kb")
    zs = Symbols()
    rewrote: list = []
    sizes = itertools.count()

    def size(y):            # any answer: a fresh integer per call
        return SInt(z3.Int("size!%d" % next(sizes)))

    def run():
        saved = SI._minmax, SI.size
        SI._minmax, SI.size = _minmax_spec, size
        SI.type = E.type                    # SInt an int, as patched (symcoeff)
        try:
            m = E.OpAtom(kind, (kb, U.expr))
            n = E.OpAtom("Max", (T.expr, W.expr))
            x = E.Expr({(m,): c, (n,): d}, k)
            out = SI.push_into_minmax(x)
        finally:
            SI._minmax, SI.size = saved
            del SI.type
        rewrote.append(out is not None)
        return x if out is None else out
    ex = Explorer([c.v != 0])
    with patched(ex):
        paths = ex.paths(run)
    raise_on_paths(paths, "push_into_minmax(%s)" % kind)
    P = ex.P
    fold = zmin if kind == "Min" else zmax
    want = c.v * fold(kb.v, zs[U]) + d.v * zmax(zs[T], zs[W]) + k.v
    impl = [encode(P, got, zs) for _, got in paths]
    # one query for every path: each path's output equals x
    prove_code(lambda *vs: z3.And(*[z3.Implies(z3.And(*pc), v == want)
                                    for (pc, _), v in zip(paths, vs)]),
               impl, P=P, what="push_into_minmax(%s) (%d paths)" % (kind, len(paths)))
    return rewrote


@proves("fold.push_minmax", over=every(
    "every expression with one Min or Max term among any others (each term read only "
    "through its coefficient's being 1 or -1 and its being one Min / Max atom: one term of "
    "each class, every coefficient, constant and argument symbolic), along every path of "
    "push_into_minmax; any number of arguments (read alike in one comprehension; the "
    "push's identity is Min / Max's fold step, so it holds for every arity by induction); "
    "expr's Min / Max constructor as its specification (minmax.flatten, "
    "minmax.const_merge, minmax.offset_dominance)"))
def fold_push_minmax():
    r, m, a = z3.Ints("r m a")
    # the fold step of Min / Max: r + K(m, a) == K'(r + m, r + a) with m the fold so far
    prove(z3.And(r + zmin(m, a) == zmin(r + m, r + a), r - zmin(m, a) == zmax(r - m, r - a),
                 r + zmax(m, a) == zmax(r + m, r + a), r - zmax(m, a) == zmin(r - m, r - a)))
    for kind in ("Min", "Max"):             # the finite domain of kinds, exhausted
        require(any(_push_paths(kind)), "push_into_minmax(%s) rewrites on no path", kind)


# ---------------------------------------------------------------------------- dominance
#: the longest argument list ``undominated_up_to`` runs (arity 5 costs ~1.3 s of CPU)
DOMINANCE_ARITY = 4


def undominated_up_to(arity: int) -> int:
    """``expr.undominated`` on every list of ``n <= arity`` arguments with symbolic values,
    ``dominates(y, x)`` any answer a sound predicate may give (a fresh truth value per
    call, True only where ``y <= x``), along every path: the arguments kept are some of
    the input's, in its order, and their ``min`` is the input's (the code never reads the
    kind: a Max is this with the order reversed).  Returns the number of paths."""
    total = 0
    for n in range(1, arity + 1):
        total += _undominated(n)
    return total


def _undominated(n: int) -> int:
    vals = [z3.Int("dom.v%d" % i) for i in range(n)]
    ex = Explorer()
    calls = itertools.count()

    def dominates(y, x):
        b = z3.Bool("dom.%d_%d.%d" % (y, x, next(calls)))
        ex.assume(z3.Implies(b, vals[y] <= vals[x]))
        return ex.branch(b)
    paths = ex.paths(lambda: E.undominated(list(range(n)), dominates))
    impl, cases = [], []
    for pc, keep in paths:
        require(isinstance(keep, list) and keep and keep == sorted(set(keep)),
                "undominated(%d arguments) kept %r", n, keep)
        cases.append((z3.And(*pc), len(impl), len(keep)))
        impl += [vals[i] for i in keep]
    want = zmin(*vals)

    def claim(*t):
        return z3.And(*[z3.Implies(c, zmin(*t[k:k + m]) == want) for c, k, m in cases])
    prove_code(claim, impl, P=ex.P, what="undominated of %d arguments (%d paths)"
               % (n, len(paths)))
    return len(paths)
