"""The traced op-shape check every op proof uses, and the two sweeps still bounded by rank
(advanced indexing: ``index.advanced``; ``np.einsum``: ``linalg.contract``).

``_check`` traces a one-op NumPy program with the real tracer (``op_rules.Contract``): each
input axis is its own named ``Dim(min=0)`` (``min=1`` only where the op's domain says so),
so the sizes are Z3 integers >= 0; the claim is that every output size the engine computed
equals NumPy's documented shape (``proofs/numpy_shapes.py``, written from NumPy's docs, not
from ``capture/ops``) and that every input the contract admits satisfies NumPy's own
conditions (equal sizes, divisibility, non-empty extents), for every point of the contract,
and conversely that the contract admits every input NumPy accepts (``proofs/converse.py``).
Offsets and positions that NumPy takes as Python ints (split points, slice bounds, integer
indices, pad widths) are traced as symbolic int inputs, so they are quantified too.  The
every-input op proofs (``proofs/*_every.py``) trace one representative input per code path
with it; the two sweeps here run over every rank up to a bound.
"""
from __future__ import annotations

import itertools
from typing import Callable, Dict, List, Sequence

import numpy as np
import z3

import symshape as ss

from . import numpy_shapes as N
from .converse import admits_numpy_inputs
from .op_rules import Contract
from .pyint import require

#: the highest rank every rule here is proven for (3 where a rule says so)
MAX_RANK = 4
DYN = ss.Dim.DYNAMIC
SIZES = (3, 4, 5, 6)
#: how many calls on inputs of their own one traced program holds (``_check_many``)
BATCH = 16


def _dims(prefix: str, rank: int, lo: int = 0, static: Dict[int, int] = None) -> tuple:
    static = static or {}
    return tuple(static[i] if i in static else ss.Dim("%s%d" % (prefix, i), min=lo)
                 for i in range(rank))


def _check(f, arrays: Sequence, spec: Callable, what: str, ints: Sequence = (),
           lo: int = 0, names: Sequence[str] = "xyz", not_one: bool = False) -> None:
    """Trace ``f(*arrays, *ints)`` (arrays as ``(shape, static axes)``, ints symbolic) and
    prove the output shapes are ``spec(P, input shapes, int values)``'s for every point of
    the contract, and NumPy's conditions hold there; and conversely that the contract
    admits every input NumPy accepts (``proofs/converse.py``; ``not_one``: the symbolic
    sizes other than 1, a broadcasting sweep tracing its size-1 axes as static 1s)."""
    args, shapes = [], {}
    for name, (shape, static) in zip(names, arrays):
        args.append(np.ones(shape))
        shapes[name] = _dims(name, len(shape), lo, static)
    for k, v in enumerate(ints):
        args.append(v)
        shapes["k%d" % k] = DYN
    tr = Contract(f, tuple(args), shapes)
    ins = tr.ins
    for sh, (shape, static) in zip(ins, arrays):
        free = [d for i, d in enumerate(sh) if i not in (static or {})]
        require(all(not z3.is_int_value(d) for d in free),
                "%s: the trace specialised an input size: %s", what, sh)

    def full(P, ins_):
        out, ok = spec(P, [tuple(s) for s in ins_[:len(arrays)]], ins_[len(arrays):])
        return out, [z3.BoolVal(c) if isinstance(c, bool) else c for c in ok]
    admits_numpy_inputs(tr, arrays, spec, ints, lo, what, not_one)
    if any(o for o in tr.outs):
        tr.prove(full, what)
        return
    # every output is a scalar (np.argmax(x)): nothing of the code's to compare but the
    # rank; NumPy's conditions must still hold on the contract
    want, ok = full(tr.P, ins)
    require([len(w) for w in want] == [len(o) for o in tr.outs],
            "%s: ranks %s, NumPy's are %s", what, [len(o) for o in tr.outs],
            [len(w) for w in want])
    tr.P.prove(z3.And(*ok), tr.hyps, what=what)


def _check_all(cases: Sequence, arrays: Sequence, what: str, ints: Sequence = (),
               not_one: bool = False) -> None:
    """``_check`` of several calls on the same inputs as one program returning all their
    results (one trace, one proof): ``cases`` are ``(f, spec)`` pairs as for ``_check``.
    Only for calls that record no guard, so that the contract is each call's own."""
    g, _, spec, _ = _group(cases, arrays, ints)
    _check(_prog(g, len(arrays), len(ints)), arrays, spec, "%s (%d calls)" % (what, len(cases)),
           ints=ints, not_one=not_one)


def _check_many(cases: Sequence, what: str, not_one: bool = False) -> None:
    """``_check`` of several calls, each on inputs of its own, as one program of all their
    inputs returning all their results (one trace, one proof, one converse query):
    ``cases`` are ``(f, arrays, spec, ints)`` as for ``_check``.  Each call's sizes are
    symbols of its own, so the contract is the conjunction of each call's own (a guard one
    call records mentions its own sizes only) and the claims -- NumPy's shapes and
    conditions, and the converse -- are each call's, proven for all of them at once."""
    arrays: List = []
    ints: List = []
    cuts = []
    for _, arr, _, iv in cases:
        cuts.append((len(arrays), len(arrays) + len(arr), len(ints), len(ints) + len(iv)))
        arrays += list(arr)
        ints += list(iv)
    n = len(arrays)

    def g(*a):
        out = []
        for (f, _, _, _), (i, j, k, m) in zip(cases, cuts):
            r = f(*a[i:j], *a[n + k:n + m])
            out.extend(r if isinstance(r, (tuple, list)) else [r])
        return tuple(out)

    def spec(P, ins, v):
        shapes, ok = [], []
        for (_, _, sp, _), (i, j, k, m) in zip(cases, cuts):
            o, c = sp(P, ins[i:j], v[k:m])
            shapes += o
            ok += c
        return shapes, ok
    names = ["a%d_" % i for i in range(n)]
    params = ", ".join(names + ["k%d" % i for i in range(len(ints))])
    prog = eval("lambda %s: g(%s)" % (params, params), {"g": g})  # noqa: S307
    _check(prog, arrays, spec, "%s (%d calls)" % (what, len(cases)), ints=ints, names=names,
           not_one=not_one)


def _group(cases: Sequence, arrays: Sequence, ints: Sequence = ()) -> tuple:
    """Several calls on the same inputs (``(f, spec)`` pairs as for ``_check_all``) as one
    ``_check_many`` case: one function returning all their results, one spec."""
    fns = [f for f, _ in cases]

    def f(*a):
        out = []
        for fn in fns:
            r = fn(*a)
            out.extend(r if isinstance(r, (tuple, list)) else [r])
        return tuple(out)

    def spec(P, ins, v):
        shapes, ok = [], []
        for _, sp in cases:
            o, c = sp(P, ins, v)
            shapes += o
            ok += c
        return shapes, ok
    return f, list(arrays), spec, tuple(ints)


def _chunks(items: Sequence, size: int) -> List:
    """``items`` in consecutive lists of ``size`` (the last one shorter)."""
    items = list(items)
    return [items[i:i + size] for i in range(0, len(items), size)]


def _shape(rank: int, static: Dict[int, int] = None) -> tuple:
    static = static or {}
    return tuple(static.get(i, SIZES[i]) for i in range(rank)), static


def _sign_mix(axes: Sequence[int], nd: int) -> tuple:
    """The axes written alternately negative and positive (both spellings are covered)."""
    return tuple(a - nd if k % 2 == 0 else a for k, a in enumerate(axes))


# ---------------------------------------------------------------------------- reductions
def _bind1(fn, *a, **kw):
    """``fn(x, *a, **kw)`` as a program of ``x`` alone (a default would be one more
    input)."""
    return lambda x: fn(x, *a, **kw)


def _bind2(fn, *a, **kw):
    return lambda x, y: fn(x, y, *a, **kw)


def _prog(g, arrays: int, ints: int):
    """``g`` as a program whose parameters are named as ``_check`` names its inputs
    (``x, y, z`` then ``k0, k1, ...``): the static arguments live in ``g``'s closure."""
    params = ", ".join(list("xyz"[:arrays]) + ["k%d" % i for i in range(ints)])
    return eval("lambda %s: g(%s)" % (params, params), {"g": g})  # noqa: S307


#: the checks for a case outside the rule sweeps (tests/proofs/test_converse.py)
check_shapes, program_of = _check, _prog


# ---------------------------------------------------------------------------- indexing
def _index_case(rank: int, pos: int, kind: str, ex: tuple, step, ell: str) -> tuple:
    """The ``_check_many`` case of one index expression (its ints: the examples ``ex``)."""
    def items(vals):
        if kind == "int":
            comp = vals[0]
        elif kind == "slice":
            comp = slice(vals[0], vals[1], step)
        else:
            comp = None
        if ell == "before":
            return (Ellipsis, comp)
        if ell == "after":
            return (comp, Ellipsis)
        return (slice(None),) * pos + (comp,)
    return (lambda x, *v: x[items(v)], [_shape(rank)],
            lambda P, ins, v: N.basic_index(ins[0], items(tuple(v))), ex)


def advanced_sweep() -> None:
    """x[i0, ...] with one to three 1-D index arrays at every placement among the axes of
    every rank 1..4, the other axes full slices: adjacent arrays' broadcast shape replaces
    them in place, non-adjacent ones put it first (NumPy's "Combining advanced and basic
    indexing"); both directions (part of ``index.advanced``)."""
    cases = []
    for rank in range(1, MAX_RANK + 1):
        for n in range(1, min(rank, 3) + 1):
            for pos in itertools.combinations(range(rank), n):
                text = ", ".join("i[%d]" % pos.index(a) if a in pos else ":"
                                 for a in range(rank))
                f = eval("lambda x, *i: x[%s]" % text)   # noqa: S307
                arrays = [_shape(rank)] + [((2,), {})] * n
                cases.append((lambda x, *i, f=f: f(x, *(a.astype(np.intp) % 1 for a in i)),
                              arrays,
                              lambda P, ins, v, p=pos: N.advanced_index(ins[0], ins[1:], p),
                              ()))
    # index arrays of equal example lengths trace their broadcast as equal sizes (an
    # example 1 would specialise): the converse covers the sizes other than 1
    for part in _chunks(cases, BATCH):
        _check_many(part, "x[index arrays at every placement, ranks 1..4]", not_one=True)


# ---------------------------------------------------------------------------- einsum
#: an example size per einsum letter: equal letters get equal examples
_LETTER = dict(zip("ijklmnbABC", (3, 4, 5, 6, 2, 7, 2, 2, 3, 4)))


def _outputs(term_letters: str) -> List[str]:
    """Implicit output ('') and every ordered selection of the distinct letters."""
    letters = sorted(set(term_letters))
    return [""] + ["->" + "".join(p) for n in range(len(letters) + 1)
                   for p in itertools.permutations(letters, n)]


def _einsum_case(subs: Sequence[str], terms: Sequence[str]) -> tuple:
    """The einsum calls ``subs`` on operands whose axes are labelled ``terms`` (for their
    example sizes, ``_LETTER``; an ``...`` spelled out in A, B, C) as one ``_check_many``
    case: the calls share their operands, so one contract (the equalities the labels
    imply)."""
    arrays = [(tuple(_LETTER[c] for c in t), {}) for t in terms]
    return _group([(lambda *a, s=s: np.einsum(s, *a), lambda P, ins, v, s=s: N.einsum(s, ins))
                   for s in subs], arrays)


def _einsum_all(cases: Sequence, what: str) -> None:
    for part in _chunks(cases, BATCH):
        _check_many(part, "np.einsum(%s)" % what)


def einsum_sweep() -> None:
    """np.einsum with symbolic sizes (part of ``linalg.contract``): one operand of every
    rank 0..3 labelled by every string of its rank over as many letters (diagonals such as
    ``ii``, ``iji``, ``iii`` included) with the implicit output and every ordered
    selection of its letters; two operands of every pair of ranks 0..3, the first labelled
    ``ijk``, the second by every placement of shared letters and new ones, with the
    implicit output, the free letters in reverse order and all letters (batch axes kept);
    three operands (chains, a shared batch letter); and ``...`` standing for 0..2 axes in
    either or both operands, in front or behind."""
    cases = []
    for rank in range(0, MAX_RANK):
        for term in map("".join, itertools.product("ijk"[:rank], repeat=rank)):
            cases.append(_einsum_case([term + o for o in _outputs(term)], [term]))
    _einsum_all(cases, "one operand, every labelling and output")
    cases = []
    for ra, rb in itertools.product(range(0, MAX_RANK), repeat=2):
        a = "ijk"[:ra]
        for b in itertools.product(*[tuple(a) + ("lmn"[p],) for p in range(rb)]):
            b = "".join(b)
            if len(set(b)) < len(b):
                continue
            sub = a + "," + b
            free = [c for c in sub if c.isalpha() and sub.count(c) == 1]
            seen = "".join(dict.fromkeys(c for c in sub if c.isalpha()))
            outs = ["", "->" + "".join(sorted(free, reverse=True)), "->" + seen]
            cases.append(_einsum_case([sub + o for o in outs], [a, b]))
    _einsum_all(cases, "two operands, every placement of shared letters")
    cases = [_einsum_case([sub], sub.split("->")[0].split(","))
             for sub in ("ij,jk,kl", "ij,jk,kl->li", "bi,bj,bk->bijk", "i,i,i->", "i,j,k")]
    for pa, pb in itertools.product(("...", "i...", "...ij"), ("...", "...j", "j...")):
        for wa, wb in itertools.product(range(3), repeat=2):
            ta = pa.replace("...", "ABC"[2 - wa:2])
            tb = pb.replace("...", "ABC"[2 - wb:2])
            ell = pa + "," + pb
            subs = [ell, ell + "->..." + "".join(sorted(set(pa + pb) - {"."}))]
            cases.append(_einsum_case(subs, [ta, tb]))
    _einsum_all(cases, "three operands, and ... of widths 0..2")
