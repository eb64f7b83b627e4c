"""Proof of ``reshape.explicit`` for targets of every length: an induction on the code's
product fold, each size's checks proven alone.

``reshape`` (``capture/ops/shape.py``) reads a target without -1 in four ways, each read
here from its code:

* every size mapped alone through ``_int_size`` and checked alone by ``_not_negative``
  (a comprehension and a loop over the whole target, no slice, no break);
* the holes, ``[i for i, s in enumerate(target) if type(s) is int and s == -1]``: none on
  this rule's domain (no literal -1), which is that very filter;
* the product ``prod(target)``, which is ``functools.reduce(_times, sizes, 1)``: a left
  fold from 1, so ``prod`` of every number of sizes is their product once its step is
  (the induction: ``prod(ts + (e,)) == _times(prod(ts), e)``, the step run on an
  arbitrary accumulator);
* ``list(target)`` as the output shape, the target itself.

So the proof runs the code's own ``_int_size``, ``_not_negative`` and ``_times`` on a size
whose value and kind (a literal int or a symbolic ``SymInt``) are symbolic, along every
path (``proofs/sized.py``), requires that every read of ``target`` in ``reshape`` is one
of the reads above (``target_reads``), and runs ``reshape`` itself on a symbolic target of
two sizes (the composition, both directions, against NumPy's rule: ``shape_every``).
Together: for every length n, reshape of ``numel`` elements to ``(e1, ..., en)`` is admitted
exactly when every size is >= 0 and ``numel == e1 * ... * en``, with the target as the
shape -- NumPy's rule.
"""
from __future__ import annotations

import ast
from contextlib import contextmanager
from typing import Dict

import z3

from symshape.capture.ops import shape as SH
from symshape.errors import UserError

from . import every, proves
from .code import prove_code
from .folds import fold_from
from .pyint import ProofFailure, require
from .reads import header, mentions, require_reads, source_tree
from .shape_every import reshape_claim
from .sized import combine, run_paths, sizes
from .symcoeff import SInt


# ---------------------------------------------------------------------------- the fold


def product_fold() -> None:
    """``prod`` is the fold of ``_times`` from 1, and ``_times`` run on an arbitrary
    product so far (a symbolic integer: the induction hypothesis) and a size of either
    kind, along every path, gives their product."""
    step, start = fold_from(SH.prod)
    require(start == 1, "prod starts its fold at %d, not 1", start)
    acc = z3.Int("acc")
    e, = sizes("e")
    ex, paths = run_paths(lambda: step(SInt(acc), e), [], [SH])
    out, = combine(paths, lambda got: [got])
    prove_code(lambda o: o == acc * e.v, [out], P=ex.P, what="prod's step: acc * e")


# ---------------------------------------------------------------------------- one size
class _Opaque:
    """The target as ``_not_negative`` gets it: any read but the message's fails."""

    def __getattr__(self, name):
        raise ProofFailure("_not_negative reads its target (%s), not its size alone" % name)

    def __iter__(self):
        raise ProofFailure("_not_negative iterates over its target, not its size alone")

    def __len__(self):
        raise ProofFailure("_not_negative reads its target's length, not its size alone")


@contextmanager
def _messages_unread():
    """``shape_repr`` (a message's text) given nothing to read while a step runs."""
    saved = SH.shape_repr
    SH.shape_repr = lambda shape: "<target>"
    try:
        yield
    finally:
        SH.shape_repr = saved


def size_checks() -> None:
    """``_int_size`` then ``_not_negative`` on one size of symbolic value and kind, along
    every path: both pass exactly when a literal is >= -1 and a symbolic size >= 0, and
    ``_int_size`` returns the size itself (the target holds the sizes as given)."""
    s, = sizes("s")

    def run():
        try:
            got = SH._int_size(s)
            SH._not_negative(got, _Opaque())
        except UserError:
            return None
        return got
    with _messages_unread():
        ex, paths = run_paths(run, [], [SH])
    for pc, got in paths:
        require(not isinstance(got, Exception), "a check raises %r", got)
        require(got is None or got is s, "_int_size returns %r for the size %r", got, s)
    ok, = combine(paths, lambda got: [got is not None])
    prove_code(lambda k: k == z3.If(s.lit, s.v >= -1, s.v >= 0), [ok], P=ex.P,
               what="reshape's checks of one size")


# ---------------------------------------------------------------------------- the reads
#: every statement of ``reshape`` that reads ``target`` (its text; for a loop or an ``if``
#: its header) -> why it reads the target as the induction needs (each size alone, the
#: product fold, the target as a whole)
TARGET_READS: Dict[str, str] = {
    "target = tuple((_int_size(s) for s in _sizes(newshape)))": "every size mapped alone",
    "for s in target": "every size checked alone (the body: _not_negative(s, target))",
    "_not_negative(s, target)": "one size checked (the target in the message only)",
    "holes = [i for i, s in enumerate(target) if type(s) is int and s == -1]":
        "the literal -1 sizes: none on this rule's domain",
    "known = prod((s for i, s in enumerate(target) if i != holes[0]))":
        "the -1 case (reshape.infer), not this rule's",
    "if not numel == prod(target)": "the product fold against the element count",
    "out = list(target)": "the target itself as the output shape",
    "return t.emit('reshape', (x.node,), {'shape': tuple(map(to_expr, target))}, "
    "tuple(out), x.dtype)": "the output shape and the target as the node's attribute",
}


#: likewise for the output list ``out`` (the target, one size inferred where a -1 is)
OUT_READS = ("out = list(target)", "out[holes[0]] = numel // known",
             "return t.emit('reshape', (x.node,), {'shape': "
             "tuple(map(to_expr, target))}, tuple(out), x.dtype)")


def target_reads() -> None:
    """Every statement of ``reshape`` that mentions ``target`` is one of ``TARGET_READS``
    and every one that mentions ``out`` one of ``OUT_READS`` (or a ``raise``: a message),
    the check loop's body is the one call, and the branch without a -1 is exactly the
    product test and ``out = list(target)``."""
    tree = source_tree(SH.reshape)
    require_reads(tree, "out", OUT_READS, "reshape")
    seen = require_reads(tree, "target", TARGET_READS, "reshape")
    require(seen == set(TARGET_READS), "reshape no longer reads its target as %s",
            sorted(set(TARGET_READS) - seen))
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For) and mentions(n.iter, "target")]
    require(all([ast.unparse(b) for b in n.body] == ["_not_negative(s, target)"]
                for n in loops),
            "reshape's loop over the target does more than check each size alone")
    branch = [n for n in ast.walk(tree) if isinstance(n, ast.If) and ast.unparse(n.test) ==
              "holes"]
    require(len(branch) == 1, "reshape has no single `if holes:` branch")
    rest = branch[0].orelse
    require(len(rest) == 2 and header(rest[0]) == "if not numel == prod(target)"
            and [type(b) for b in rest[0].body] == [ast.Raise] and not rest[0].orelse
            and ast.unparse(rest[1]) == "out = list(target)",
            "reshape's branch without a -1 is not the product test and the target: %s",
            [ast.unparse(b) for b in rest])


@proves("reshape.explicit", over=every(
    "every target without -1 of every length and every element count numel >= 0, each "
    "size a Z3 integer, a literal int or a symbolic size (the kind symbolic), along every "
    "path; both directions: by induction on the code's product fold (prod read from its "
    "code to be functools.reduce of _times from 1, _times proven on an arbitrary "
    "accumulator), each size's checks (_int_size, _not_negative) proven alone, every read "
    "of the target in reshape read from its code to be one of these, and reshape run on a "
    "target of two symbolic sizes"))
def reshape_explicit():
    product_fold()
    size_checks()
    target_reads()
    reshape_claim(sizes("e1 e2"), "reshape to (e1, e2)", "none")
