"""``simplify.push_into_minmax`` (``fold.push_minmax``) and the Min / Max dominance routine
``expr.undominated`` with its caller ``simplify.fold_minmax`` (``fold.minmax_dominance``)
for every input: the code run with symbolic coefficients, constants, argument values and
dominance answers (``proofs/symcoeff.py``, ``proofs/symexec.py``) along every path (for
``undominated``, by induction on its loop: ``undominated_every``).

The code reads an expression ``x`` only through its terms: a term is a *hit* when its
coefficient is 1 or -1 and it is one Min / Max atom (a comprehension, one test per term);
with exactly one hit it builds ``rest = x - c*K(args)`` and ``K'(rest + c*a for a in args)``
by expression arithmetic (``add`` / ``scale``, exact), and keeps it only when ``size`` is
smaller (``size`` here answers anything: it only gates the rewrite).  So the Min / Max
term and a second Min / Max term, each with a symbolic coefficient, and a symbolic constant
cover every path for every number of terms: the second term is a second hit where its
coefficient is 1 or -1 (no rewrite) and otherwise fails the test, as a term of any other
class (a symbol, a product, another op atom) does, and is then read only by ``add``.  The
atom's arguments are read one by one in one comprehension (two arguments, an expression
and an int, stand for any number), and the pushed Min / Max is handed to ``expr``'s own constructor, here its specification: an
expression equal to ``K'`` of the arguments (``minmax.flatten``, ``minmax.const_merge``,
``minmax.offset_dominance``).  The identity on which the push rests, ``r + Min(m, a) ==
Min(r + m, r + a)`` (and its three duals), is the fold step of ``Min`` / ``Max``: it holds
for every arity by induction on ``Min(a1, ..., an) == Min(Min(a1, ..., a(n-1)), an)``.
"""
from __future__ import annotations

import itertools

import z3

from symshape.algebra import expr as E
from symshape.algebra import simplify as SM

from . import every, proves
from .alike import read_alike
from .code import Symbols, prove_code
from .pyint import prove, require, zmax, zmin
from .symcoeff import SInt, encode, patched, sym_ints
from .symexec import Explorer, raise_on_paths

S, T, U, W = E.Sym(930), E.Sym(931), E.Sym(932), E.Sym(933)


def _minmax_spec(kind: str, args) -> E.Expr:
    """``expr``'s Min / Max constructor as its proofs state it: an expression whose value
    is the min / max of ``args`` (the atom itself, unsimplified)."""
    return E.atom_expr(E.OpAtom(kind, tuple(args)))


def _push_paths(kind: str) -> list:
    """``push_into_minmax`` of an int ``k`` (no rewrite) and of ``x = c*K(kb, u) +
    d*Max(t, w) + k`` (``K`` the ``kind``; every coefficient and constant symbolic, ``u``,
    ``t`` and ``w`` any values) along every path, ``size`` any answer (it only gates the rewrite): its output,
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
            require(SI.push_into_minmax(k) is None, "push_into_minmax rewrites an int")
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
    "every expression and every int: each term read only through its coefficient's being "
    "1 or -1 and its being one Min / Max atom (the Min / Max term, a second one whose "
    "coefficient may or may not pass, and the constant: a term of any other class fails "
    "the test as the second does and is then read only by add; every coefficient, "
    "constant and argument symbolic), along every path of push_into_minmax, size any "
    "answer; any number of arguments (read alike in one comprehension; the "
    "push's identity is Min / Max's fold step, so it holds for every arity by induction); "
    "expr's Min / Max constructor as its specification (an expression equal to the Min / "
    "Max of its arguments: minmax.flatten, minmax.const_merge, minmax.offset_dominance)"))
def fold_push_minmax():
    read_alike(SM.push_into_minmax)
    r, m, a = z3.Ints("r m a")
    # the fold step of Min / Max: r + K(m, a) == K'(r + m, r + a) with m the fold so far
    prove(z3.And(r + zmin(m, a) == zmin(r + m, r + a), r - zmin(m, a) == zmax(r - m, r - a),
                 r + zmax(m, a) == zmax(r + m, r + a), r - zmax(m, a) == zmin(r - m, r - a)))
    for kind in ("Min", "Max"):             # the finite domain of kinds, exhausted
        require(any(_push_paths(kind)), "push_into_minmax(%s) rewrites on no path", kind)


# ---------------------------------------------------------------------------- dominance
class _Oracle:
    """A dominance predicate (a function of its two arguments, indices into ``vals``):
    on the pairs of ``apart`` it answers False, on any other pair any answer a sound
    predicate may give (True only where ``vals[y] <= vals[x]``: the Min order; a Max is
    the same code with the order reversed), each pair's answer one fresh truth value."""

    def __init__(self, ex: Explorer, vals, apart=()) -> None:
        self.ex, self.vals, self.apart = ex, vals, set(apart)
        self.asked: dict = {}

    def __call__(self, y, x) -> bool:
        if (y, x) in self.apart:
            return False
        if (y, x) not in self.asked:
            b = z3.Bool("dom.%s_%s" % (y, x))
            self.ex.assume(z3.Implies(b, self.vals[y] <= self.vals[x]))
            self.asked[(y, x)] = b
        return self.ex.branch(self.asked[(y, x)])


def _undominated_paths(n: int, apart=()) -> list:
    """``undominated(list(range(n)), oracle)`` along every path: (path condition, what
    it kept, the oracle)."""
    vals = [z3.Int("dom.v%d" % i) for i in range(n)]
    ex = Explorer()
    out = []

    def run():
        oracle = _Oracle(ex, vals, apart)
        return E.undominated(list(range(n)), oracle), oracle
    for pc, got in ex.paths(run):
        if isinstance(got, Exception):
            raise got
        out.append((pc, got[0], got[1]))
    return out, vals, ex.P


def undominated_every() -> None:
    """``expr.undominated`` for every argument list, by induction on its loop: the loop
    folds its list ``keep`` over the arguments and returns it, so its state after a prefix
    is the function's own output on that prefix; the step keeps the invariant (the min of
    ``keep`` is the prefix's; ``keep`` is an antichain of the predicate: neither of two
    kept arguments dominates the other).  Base: no argument, one.  Step: from any state,
    the code run on that state followed by ``x`` (its pairs answering False: the
    invariant; the state's arguments then all kept, so the run reaches ``x`` from exactly
    that state); two kept arguments stand for any number (the body reads each alike: one
    ``any``, one comprehension).  On every path the new state's min is ``min(state, x)``,
    it is the state's arguments it kept followed by ``x`` (or the state, ``x`` skipped)
    and the kept arguments and ``x`` answered False both ways (the antichain)."""
    for pc, keep, _ in _undominated_paths(0)[0]:
        require(keep == [], "undominated([]) = %r", keep)
    for pc, keep, _ in _undominated_paths(1)[0]:
        require(keep == [0], "undominated([x]) = %r", keep)
    _step(1)        # the step from a state of one argument
    _step(2)        # from a state of two, which stand for any number (each read alike)


def _answered_false(pc, b) -> bool:
    """The path took the False outcome of the oracle's answer ``b``."""
    return b is not None and any(z3.eq(c, z3.Not(b)) for c in pc)


def _step(size: int) -> None:
    """The loop's step from a state of ``size`` kept arguments (an antichain) and a new
    argument ``x``, along every path (see ``undominated_every``)."""
    x = size                                    # the new argument after the state 0..size-1
    apart = [(i, j) for i in range(size) for j in range(size) if i != j]
    paths, vals, P = _undominated_paths(size + 1, apart)
    impl, cases = [], []
    for pc, keep, oracle in paths:
        added = keep[-1] == x
        require(keep == list(range(size)) or (added and keep == sorted(keep)),
                "undominated's step kept %r", keep)
        for y in (keep[:-1] if added else []):
            require(_answered_false(pc, oracle.asked.get((y, x))) and
                    _answered_false(pc, oracle.asked.get((x, y))),
                    "the step kept %d beside %d, not both ways undominated", y, x)
        cases.append((z3.And(*pc), len(impl), len(keep)))
        impl += [vals[i] for i in keep]
    want = zmin(*vals)

    def claim(*t):
        return z3.And(*[z3.Implies(c, zmin(*t[k:k + m]) == want) for c, k, m in cases])
    prove_code(claim, impl, P=P, what="undominated's step from %d kept (%d paths)"
               % (size, len(paths)))


def fold_minmax_every() -> None:
    """``simplify.fold_minmax`` of two arguments ``s``, ``t`` (any values; its arguments
    go whole to ``_minmax`` and to ``undominated``, proven for every list by
    ``undominated_every``) for both kinds, along every path, ``dominates`` any sound answer
    (``dominates_by_ranges``: ``range.bound``; ``dominates_by_facts``:
    ``fold.minmax_by_facts``) and ``_minmax`` (``smin`` / ``smax``) its specification: an
    expression equal to the Min / Max of its arguments, the one argument itself, else a
    Min / Max atom over them, an atom of the other kind or any other expression of that
    value (each explored): the output equals the Min / Max of the arguments."""
    from symshape.algebra import simplify as SI
    from .code import Symbols, encode as encode_plain
    zs = Symbols()
    for kind in ("Min", "Max"):                 # every kind, exhausted
        fold = zmin if kind == "Min" else zmax
        ex = Explorer()

        def run(kind=kind, fold=fold):
            others = itertools.count()

            def value(e):
                return encode_plain(ex.P, e, zs)

            def minmax(k, args):
                args = list(args)
                if len(args) == 1:
                    return args[0]
                if ex.branch(z3.Bool("flat.atom.%d" % len(args))):
                    return _minmax_spec(k, args)
                p, q = E.Sym(980 + next(others)), E.Sym(980 + next(others))
                if ex.branch(z3.Bool("flat.swap.%d" % len(args))):    # the other kind's atom
                    other = _minmax_spec("Max" if k == "Min" else "Min", [p.expr, q.expr])
                else:                                   # any other expression
                    other = p.expr
                ex.assume(value(other) == fold(*[value(a) for a in args]))
                return other

            def dominates(env, k, y, x):
                b = z3.Bool("dominates.%s.%s" % (y, x))
                ex.assume(z3.Implies(b, value(y) <= value(x) if k == "Min"
                                     else value(y) >= value(x)))
                return ex.branch(b)
            saved = SI._minmax, SI.dominates
            SI._minmax, SI.dominates = minmax, dominates
            try:
                return SI.fold_minmax(None, kind, [S.expr, T.expr])
            finally:
                SI._minmax, SI.dominates = saved
        paths = ex.paths(run)
        raise_on_paths(paths, "fold_minmax(%s)" % kind)
        want = fold(zs[S], zs[T])
        impl = [encode_plain(ex.P, got, zs) for _, got in paths]
        prove_code(lambda *vs, want=want: z3.And(*[z3.Implies(z3.And(*pc), v == want)
                                                   for (pc, _), v in zip(paths, vs)]),
                   impl, P=ex.P, what="fold_minmax(%s) (%d paths)" % (kind, len(paths)))


@proves("fold.minmax_dominance", over=every(
    "every argument list of undominated, by induction on its loop (its state after a "
    "prefix is its own output on the prefix, an antichain of the predicate; base: no "
    "argument, one; step: the code run on a state of one and of two kept arguments, which "
    "stand for any number: the body reads each alike in one any() and one comprehension, "
    "then a new argument), values symbolic and every answer a sound dominance predicate "
    "(a function) may give, along every path: the kept arguments' min is the input's; "
    "the code never reads the kind (Max: the order reversed); and fold_minmax of both "
    "kinds with dominates any sound answer (range.bound, fold.minmax_by_facts) and smin / "
    "smax as their specification (an expression equal to the Min / Max of the arguments: "
    "minmax.flatten, minmax.const_merge, minmax.offset_dominance), along every path"))
def fold_minmax_dominance():
    read_alike(E.undominated)
    undominated_every()
    fold_minmax_every()
