"""Proof of ``index.basic`` for every rank and every index: an induction on ``region``'s
loop, its step ``region_item`` run on any axis along every path.

Basic indexing (``capture/ops/indexing.py``) expands the index (``_expand``: the one
Ellipsis, or the end, stands for as many full slices as the axes no item consumes; more
than one Ellipsis or more consuming items than axes refused -- NumPy's rule, read here
from the code: every statement of ``_expand`` and ``getitem_value`` is a listed text),
then ``region`` folds ``region_item`` over the items from axis 0: ``region`` is read from
its code to be exactly that loop (``shape = []; norm = []; dim = 0; for i in items: dim =
region_item(x, i, shape, norm, dim); return (tuple(shape), norm)``), so the output shape
is the concatenation of each item's contribution at the axis the items before it
consumed.  The step is run on a stand-in array whose size at the symbolic axis ``dim``
is a Z3 integer ``n >= 0``, an arbitrary shape so far (the induction hypothesis), and
each kind of item (a finite domain, exhausted): None appends a 1 and consumes no axis; a
slice reads the size at ``dim``, appends ``slice_length(n, start, stop, step)`` of its
own bounds (whatever they are: opaque objects the code hands through ``as_int``; the
length itself is ``slice.length_step_pos`` / ``slice.length_step_neg``, proven for every
n and bound) and consumes the axis; an int ``v`` (a Z3 integer) is admitted exactly when
``-n <= v < n`` (NumPy's IndexError otherwise), appends nothing and consumes the axis.
The real tracer then runs four index expressions at rank 3 (an int, a negative-step
slice, None with an Ellipsis, a step-2 slice after an Ellipsis; ints symbolic).
"""
from __future__ import annotations

from contextlib import contextmanager

import z3

from symshape.capture.ops import indexing as IX
from symshape.errors import UserError

from . import every, proves
from .axes_every import Num, code_text
from .code import prove_code
from .intpaths import int_paths
from .op_shape_rules import _check_many, _index_case
from .pyint import ProofFailure, require
from .symcoeff import SInt, value

#: the whole code of ``_expand``, ``getitem_value`` and ``region`` (docstrings aside, each
#: ``raise``'s message as ``raise UserError``), as NumPy's rule reads: the items; the
#: consuming ones counted; more than one Ellipsis or more consuming items than axes
#: refused; the Ellipsis (or, without one, the end) replaced by a full slice for each axis
#: no item consumes; then the items checked (ints, slices of int bounds, None), the region
#: folded from axis 0 by ``region_item``, the node emitted with its shape (or x itself
#: where the index normalises to nothing: every item a trailing full slice)
CODE = {
    "_expand": (
        "items = list(idx) if isinstance(idx, tuple) else [idx]\n"
        "consumed = sum((1 for i in items if i is not None and i is not Ellipsis))\n"
        "if sum((1 for i in items if i is Ellipsis)) > 1:\n    raise UserError\n"
        "if consumed > ndim:\n    raise UserError\n"
        "out: List[Any] = []\n"
        "for i in items:\n    if i is Ellipsis:\n"
        "        out.extend([slice(None)] * (ndim - consumed))\n"
        "    else:\n        out.append(i)\n"
        "if not any((i is Ellipsis for i in items)):\n"
        "    out.extend([slice(None)] * (ndim - consumed))\n"
        "return out"),
    "getitem_value": (
        "items = _expand(idx, x.ndim)\n_check_basic(items)\n"
        "shape, norm = region(x, items)\nnorm = _simplify_items(norm, x.ndim)\n"
        "if not norm:\n    return x\n"
        "return t.emit('getitem', (x.node,), {'index': IndexAttr(norm)}, shape, x.dtype)"),
    "region": (
        "shape: list = []\nnorm: list = []\ndim = 0\n"
        "for i in items:\n    dim = region_item(x, i, shape, norm, dim)\n"
        "return (tuple(shape), norm)"),
}


def code_reads() -> None:
    """``_expand``, ``getitem_value`` and ``region`` are exactly the code of ``CODE``."""
    for name, text in CODE.items():
        got = code_text(getattr(IX, name))
        require(got == text, "%s is no longer the code the proof reads:\n%s", name, got)


# ---------------------------------------------------------------------------- the step
class _Sizes:
    """A shape whose size at any axis is ``n`` (a Z3 integer): the reads recorded."""

    def __init__(self, n) -> None:
        self.n = n
        self.reads: list = []

    def __getitem__(self, d):
        require(not isinstance(d, slice), "region_item slices the shape")
        self.reads.append(d)
        return SInt(self.n)

    def __iter__(self):
        raise ProofFailure("region_item iterates over the shape")

    def __len__(self):
        raise ProofFailure("region_item reads the rank")


class _X:
    def __init__(self, n) -> None:
        self.shape = _Sizes(n)


class _Bound:
    """A slice bound the code hands through (any: None, an int, a symbolic size)."""

    def __init__(self, name: str) -> None:
        self.name = name


@contextmanager
def _lengths():
    """``slice_length`` as its proven specification: the call recorded; ``describe`` (a
    message's text) given nothing to read."""
    saved = IX.slice_length, IX.describe
    IX.slice_length = lambda n, a, b, c: ("len", n, a, b, c)
    IX.describe = lambda v: "<size>"
    try:
        yield
    finally:
        IX.slice_length, IX.describe = saved


_PRIOR = object()     # the shape so far: the induction hypothesis, never read


def _step(item, n, dim):
    """``region_item`` on one item at axis ``dim`` (size ``n``) after an arbitrary shape:
    (shape, reads, next axis, the axis given) or None (refused)."""
    x = _X(n)
    shape: list = [_PRIOR]
    d = Num(dim)
    try:
        nxt = IX.region_item(x, item, shape, [], d)
    except UserError:
        return None
    return shape, x.shape.reads, nxt, d


def item_steps() -> None:
    """Each kind of item on any axis ``dim >= 0`` of any size ``n >= 0``."""
    n, dim, v = z3.Ints("n dim v")
    hyps = [n >= 0, dim >= 0]
    bounds = [_Bound(w) for w in ("start", "stop", "step")]
    with _lengths():
        _, none_paths = int_paths(lambda: _step(None, n, dim), hyps, IX)
        slice_ex, slice_paths = int_paths(lambda: _step(slice(*bounds), n, dim), hyps, IX)
        int_ex, int_paths_ = int_paths(lambda: _step(Num(v), n, dim), hyps, IX)
    require(len(none_paths) == 1 and len(slice_paths) == 1, "None / a slice at an axis "
            "takes %d / %d paths, not one", len(none_paths), len(slice_paths))
    (pc, got), = none_paths
    require(got is not None and got[0] == [_PRIOR, 1] and not got[1] and got[2] is got[3],
            "x[None] at an axis: %r, not a 1 appended and the axis kept", got)
    (pc, got), = slice_paths
    require(got is not None and got[0][:1] == [_PRIOR] and len(got[0]) == 2
            and got[0][1][0] == "len" and list(got[0][1][2:]) == bounds,
            "a slice at an axis appends %r, not slice_length of its own bounds", got)
    ln, reads, nxt = got[0][1][1], got[1], got[2]
    ex = slice_ex
    impl = [value(ln), value(reads[0]), value(nxt)]
    require(len(reads) == 1, "a slice reads the shape %d times", len(reads))
    prove_code(lambda a, r, d: z3.And(a == n, r == dim, d == dim + 1), impl, hyps,
               P=ex.P, what="x[start:stop:step] at axis dim")
    parts, impl = [], []
    for pc, got in int_paths_:
        require(not isinstance(got, BaseException), "x[v] raises %r", got)
        if got is None:
            parts.append((pc, None))
            continue
        shape, reads, nxt, _ = got
        require(shape == [_PRIOR] and len(reads) == 1, "x[v] appends %r", shape)
        parts.append((pc, len(impl)))
        impl += [value(reads[0]), value(nxt)]

    def claim(*t):
        ok = z3.And(-n <= v, v < n)
        return z3.And(*[z3.Implies(z3.And(*pc), z3.Not(ok) if k is None else
                                   z3.And(ok, t[k] == dim, t[k + 1] == dim + 1))
                        for pc, k in parts])
    prove_code(claim, impl, hyps, P=int_ex.P, what="x[v] at axis dim (%d paths)" % len(parts))


@proves("index.basic", over=every(
    "every rank and every basic index (ints, slices, None, one Ellipsis, of every length): "
    "by induction on region's loop, read from its code to fold region_item over the items "
    "from axis 0; region_item run on every kind of item (None, a slice, an int; a finite "
    "domain exhausted) at a symbolic axis dim of symbolic size n after an arbitrary shape, "
    "along every path: None appends 1 and keeps the axis, a slice appends slice_length of "
    "its own bounds (whatever they are; slice_length proven for every n and bound: "
    "slice.length_step_pos / _neg) and consumes the axis, an int v (a Z3 integer) is "
    "admitted exactly when -n <= v < n and consumes the axis; _expand (the Ellipsis or the "
    "end as a full slice per unconsumed axis, more than one Ellipsis or too many indices "
    "refused) and getitem_value read from the code whole; traced with the "
    "real tracer at rank 3 (an int, a slice of step -1, None with an Ellipsis, a slice of "
    "step 2 after one), ints symbolic"))
def index_basic():
    code_reads()
    item_steps()
    _check_many([_index_case(3, 1, "int", (-2,), None, ""),
                 _index_case(3, 2, "slice", (1, -1), -1, ""),
                 _index_case(3, 0, "none", (), None, "after"),
                 _index_case(3, 2, "slice", (-4, 5), 2, "before")],
                "x[int / slice / None / Ellipsis] on rank 3")
