"""The contract inside the graph: the input check's records as ONNX nodes.

``CheckWriter`` (``symshape.contract``) writes the input check as typed records in the order
it runs.  Here each record becomes graph nodes: ``ReadShape`` / ``Bind`` read the size
symbols off the inputs' shapes (always: later sizes are computed from them), and with
``guards=True`` every check record becomes one *guard node*: a ``Reshape`` of a one-element
token to ``[1]`` when the condition holds and to ``[2]`` when it does not, named after the
guard in the user's terms (``x.shape[0] in [2, 64] (Dim batch)``, ``x.shape[0] +
y.shape[0] <= 100 (from model.py:12 ...)``).  onnxruntime's error for a failing node
names it, so a violating input fails with the guard's text.  The guards are chained, and
every user input is read through a ``Reshape`` to its own shape times the last token, so
no computation starts before all guards have passed.

Rank, dtype and static sizes are checked by onnxruntime itself against the declared input
types (its message names the input and the axis).
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from symshape.contract import records as R
from symshape.contract.input_check import InputCheck
from symshape.algebra.infinity import is_inf
from symshape.algebra.relations import BoolOp, Rel

from .graph import GraphWriter
from .sizes import SizeValues

#: the prefix of every guard node's name (what onnxruntime's error shows first)
GUARD_PREFIX = "symshape guard failed: "


def condition(w: GraphWriter, sizes: SizeValues, c) -> str:
    """A size condition (``Rel`` / ``BoolOp`` / bool) as a bool scalar tensor."""
    if isinstance(c, bool):
        return w.const(np.array(c))
    if isinstance(c, Rel):
        v = sizes.scalar(c.expr)
        zero = w.const(0, np.int64)
        op = {"==": "Equal", "<=": "LessOrEqual"}.get(c.op)
        if op is None:
            return w.op("Not", [w.op("Equal", [v, zero])], "ne")
        return w.op(op, [v, zero], "rel")
    if isinstance(c, BoolOp):
        parts = [condition(w, sizes, a) for a in c.args]
        out = parts[0]
        for p in parts[1:]:
            out = w.op("And" if c.op == "and" else "Or", [out, p], c.op)
        return out
    raise TypeError("not a size condition: %r" % (c,))


class GuardChain:
    """The chain of guard nodes; ``token`` is the last one's one-element int64 output."""

    def __init__(self, w: GraphWriter) -> None:
        self.w = w
        self.token: Optional[str] = None
        self.texts: List[str] = []

    def check(self, ok: str, text: str) -> None:
        """Add the guard node failing unless bool scalar ``ok`` holds, named after ``text``."""
        w = self.w
        good = w.const(np.array([1], np.int64), base="guard_ok")
        bad = w.const(np.array([2], np.int64), base="guard_bad")
        prev = self.token or good
        target = w.op("Where", [ok, good, bad], "guard_shape")
        self.token = w.op("Reshape", [prev, target], "guard", name=GUARD_PREFIX + text)
        self.texts.append(text)

    def gate(self, x: str, base: str) -> str:
        """``x`` once every guard so far has passed (itself when there are none)."""
        if self.token is None:
            return x
        w = self.w
        shape = w.op("Mul", [w.op("Shape", [x]), self.token], "checked_shape")
        return w.op("Reshape", [x, shape], base, allowzero=1)


def bind_and_check(check: InputCheck, w: GraphWriter, sizes: SizeValues,
                   inputs: Dict[str, str], chain: Optional[GuardChain]) -> None:
    """Run the records: bind each size symbol in ``sizes`` (``inputs``: input path -> the
    ONNX input), and with a ``chain`` add a guard node per check record."""
    text = check.text()
    var: Dict[str, str] = {}           # check variable -> tensor
    rem: Dict[object, str] = {}        # symbol -> remainder of its bind
    zero = w.const(0, np.int64)
    for rec in check.records:
        t = type(rec)
        if t is R.Read:
            path = rec.access.param + rec.access.keys
            if path in inputs:
                var[rec.var] = inputs[path]
        elif t in (R.ArrayCheck, R.IntCheck):
            if rec.path in inputs:
                var[rec.var] = inputs[rec.path]
        elif t is R.ReadShape:
            if rec.var not in var:
                continue
            shape = w.op("Shape", [var[rec.var]], "shape")
            for i, n in enumerate(rec.names):
                var[n] = w.op("Gather", [shape, w.const(np.array(i, np.int64))], "dim", axis=0)
        elif t is R.Bind:
            if rec.var not in var:
                continue
            v = var[rec.var]
            if not (type(rec.rest) is int and rec.rest == 0):
                v = w.op("Sub", [v, sizes.scalar(rec.rest)], "size")
            if rec.coeff != 1:
                c = w.const(rec.coeff, np.int64)
                rem[rec.sym] = w.op("Mod", [v, c], "rem", fmod=0)
                v = w.op("Div", [w.op("Sub", [v, rem[rec.sym]]), c], "size")
            sizes.bind(rec.sym, v)
        elif chain is None:
            continue
        elif t is R.RangeCheck:
            s = sizes.scalar(rec.sym.expr)
            oks = []
            if not is_inf(rec.lo):
                oks.append(w.op("GreaterOrEqual", [s, w.const(int(rec.lo), np.int64)]))
            if not is_inf(rec.hi):
                oks.append(w.op("LessOrEqual", [s, w.const(int(rec.hi), np.int64)]))
            for ok in oks[:1] if len(oks) == 1 else [w.op("And", oks)] if oks else []:
                chain.check(ok, text.describe(rec))
        elif t is R.RelationCheck and rec.var in var:
            ok = w.op("Equal", [var[rec.var], sizes.scalar(rec.expr)])
            chain.check(ok, text.describe(rec))
        elif t is R.CongruenceCheck and rec.sym in rem:
            chain.check(w.op("Equal", [rem[rec.sym], zero]), text.describe(rec))
        elif t is R.GuardCheck:
            chain.check(condition(w, sizes, rec.cond), text.describe(rec))
        elif t in (R.IntValue, R.ScalarCheck) and isinstance(rec.value, int) and \
                rec.path in inputs:
            ok = w.op("Equal", [inputs[rec.path], w.const(int(rec.value), np.int64)])
            chain.check(ok, text.describe(rec))
