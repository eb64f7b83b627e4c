"""Input-check records as Python, one line each (``PyRenderer``), parameterised by how a
parameter is named (a body with renamed parameters), how a constant is named (each
dispatcher variant has its own), which name holds the array type (``numpy.ndarray``,
``cupy.ndarray``) and what a failed test does: call the ``_rt.bad_*`` protocol of
``symshape.runtime`` (which raises), ``break`` (the JIT's dispatcher) or return the failure
record with the line's index (the JIT's recompile reasons).  The text ``module()`` runs is
parsed back and proven equivalent to the contract (``symshape.contract.validate``)."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

from symshape.algebra import relations as R
from symshape.algebra.expr import IntLike, format_py
from symshape.algebra.infinity import is_inf
from symshape.contract.records import (MISSING, Access, ArrayCheck, Bind, ClassCheck, CongruenceCheck,
                      ConfiguredCheck, GuardCheck, IntCheck, IntValue, KeysCheck, LenCheck,
                      RangeCheck, Read, ReadShape, RebindCheck, RelationCheck, ScalarCheck,
                      SizeCheck, StaticDim, StructCheck)
from symshape.contract.render_text import Names, TextRenderer, zero


def cond_py(c, py: Callable[[IntLike], str]) -> str:
    """Python source of a relation (or a ``BoolOp`` of them) with sizes written by ``py``."""
    if isinstance(c, R.BoolOp):
        return (" %s " % c.op).join("(%s)" % cond_py(a, py) for a in c.args)
    op = {"==": "==", "!=": "!=", "<=": "<="}[c.op]
    return "%s %s 0" % (py(c.expr), op)


def _lit(v) -> str:
    """A range end as Python source: an int, or the text ``'int_oo'`` / ``'-int_oo'`` (the
    failure call prints it; generated code never names the infinities themselves)."""
    return repr(str(v)) if is_inf(v) else repr(v)


class PyRenderer:
    """Writes records as Python, one line each.

    ``param``: the name of a parameter in the generated function; ``const``: registers a
    constant value and returns the name code reads it by; ``array_type``: the name holding
    the backend's array type; ``fail``: ``"raise"`` (``_rt.bad_*(..)``), ``"break"``, or
    ``"why"`` (``return <index>, _W.bad_*(..)``: the failure record, from the protocol
    bound to ``_W``)."""

    def __init__(self, text: TextRenderer, const: Callable[[Any], str],
                 param: Callable[[str], str] = str, array_type: str = "_ndarray",
                 fail: str = "raise") -> None:
        self.text = text
        self.const = const
        self.param = param
        self.array_type = array_type
        self.fail = fail

    def lines(self, records) -> List[str]:
        return [self.line(rec, k) for k, rec in enumerate(records)]

    def access(self, a: Access) -> str:
        return self.param(a.param) + a.keys

    @staticmethod
    def py(e: IntLike) -> str:
        return format_py(e, lambda s: s.name)

    def line(self, rec, index: int = 0) -> str:
        t = type(rec)
        if t is Read:
            return "%s = %s" % (rec.var, self.access(rec.access))
        if t is ReadShape:
            names = ", ".join(rec.names) + ("," if len(rec.names) == 1 else "")
            return "%s = %s.shape" % (names, rec.var)
        if t is Bind:
            num = rec.var if zero(rec.rest) else "(%s - %s)" % (rec.var, self.py(rec.rest))
            if rec.coeff == 1:
                return "%s = %s" % (rec.sym.name, num)
            return "%s, _r = divmod(%s, %d)" % (rec.sym.name, num, rec.coeff)
        if t is StructCheck:
            fn = "check_spec" if rec.treespec else "check_tree"
            return "_rt.%s(%r, %s, %s)" % (fn, rec.param, self.param(rec.param),
                                           self.const(rec.layout))
        test, args = self.test_and_args(rec)
        if self.fail == "break":
            return "if %s: break" % test
        if self.fail == "why":
            return "if %s: return %d, _W.%s(%s)" % (test, index, rec.fails, ", ".join(args))
        return "if %s: _rt.%s(%s)" % (test, rec.fails, ", ".join(args))

    def test_and_args(self, rec) -> Tuple[str, List[str]]:
        """The failure test of a check record and the arguments of its failure call."""
        t = type(rec)
        if t is ArrayCheck:
            a, dt = rec.var, self.const(rec.dtype)
            return ("type(%s) is not %s or %s.ndim != %d or %s.dtype != %s"
                    % (a, self.array_type, a, rec.ndim, a, dt),
                    [repr(rec.path), a, str(rec.ndim), dt])
        if t is IntCheck:
            return "type(%s) is not int" % rec.var, [repr(rec.path), rec.var]
        if t is IntValue:
            return ("%s != %d" % (rec.var, rec.value),
                    [repr(rec.path), "%d" % rec.value, rec.var])
        if t is ScalarCheck:
            acc, k = self.access(rec.access), self.const(rec.value)
            return "not _rt.same_scalar(%s, %s)" % (acc, k), [repr(rec.path), k, acc]
        if t is ClassCheck:
            acc = self.access(rec.access)
            return ("not isinstance(%s, %s)" % (acc, self.const(rec.cls)),
                    [repr(rec.path), repr(rec.cls.__name__), acc])
        if t is ConfiguredCheck:
            p, k = self.param(rec.param), self.const(rec.default)
            return "%s is not %s" % (p, k), [repr(rec.param), k]
        if t is StaticDim:
            args = [repr(rec.axis), "%d" % rec.size, rec.var]
            return ("%s != %d" % (rec.var, rec.size),
                    args if rec.why is None else args + [repr(rec.why)])
        if t is CongruenceCheck:
            return "_r", [repr(rec.axis), rec.var, repr(self.text.form(rec))]
        if t is RangeCheck:
            v = rec.sym.name
            conds = []
            if not is_inf(rec.lo):
                conds.append("%s < %d" % (v, rec.lo))
            if not is_inf(rec.hi):
                conds.append("%s > %d" % (v, rec.hi))
            if not isinstance(rec.label, str) and type(rec.rest) is int and not (
                    rec.coeff == 1 and rec.rest == 0):
                # a root with no Dim name is reported on its axis (x.shape[0] = 21 is
                # outside [5, 17]), never by its internal symbol
                # the axis is coeff*v + rest: a negative coeff swaps the ends (and an
                # infinite end changes sign)
                ends = [b * rec.coeff if is_inf(b) else rec.coeff * b + rec.rest
                        for b in (rec.lo, rec.hi)]
                on_axis = [_lit(b) for b in (ends if rec.coeff > 0 else ends[::-1])]
                return (" or ".join(conds),
                        [repr(rec.axis), "(%d*%s + %d)" % (rec.coeff, v, rec.rest)] + on_axis +
                        [repr(rec.label)])
            return (" or ".join(conds),
                    [repr(self.text.range_subject(rec)), v, _lit(rec.lo), _lit(rec.hi),
                     repr(rec.label)])
        if t is RelationCheck:
            e = self.py(rec.expr)
            return ("%s != %s" % (rec.var, e),
                    [repr(rec.axis), rec.var, repr(self.text.expr(rec.expr)), e])
        if t is GuardCheck:
            return "not (%s)" % cond_py(rec.cond, self.py), [repr(self.text.guard(rec))]
        if t is SizeCheck:
            return "not (%s)" % cond_py(rec.cond, self.py), [repr(rec.text)]
        if t is LenCheck:
            acc = self.access(rec.access)
            return ("type(%s) is not %s or len(%s) != %d" % (acc, rec.kind, acc, rec.n),
                    [repr(rec.path), acc, repr(rec.kind), "%d" % rec.n])
        if t is KeysCheck:
            acc, k = self.access(rec.access), self.const(rec.keys)
            return ("type(%s) is not dict or %s.keys() != %s" % (acc, acc, k),
                    [repr(rec.path), acc, k])
        if t is RebindCheck:
            w, o = self.const(rec.where), self.const(rec.obj)
            test = ("%s.get(%r, %s) is not %s" % (w, rec.name, self.const(MISSING), o)
                    if rec.kind == "global" else "%s.cell_contents is not %s" % (w, o))
            return test, [repr(rec.what), repr(rec.name), repr(rec.reader)]
        if hasattr(rec, "py_test"):        # a record of its own kind (the JIT's state guards)
            return rec.py_test(self)
        raise TypeError("not a check record: %r" % (rec,))


def numbered_consts(consts: Dict[str, Any], prefix: str = "_k") -> Callable[[Any], str]:
    """A ``const`` for ``PyRenderer``: each value gets the next name ``_k0``, ``_k1``...,
    recorded in ``consts`` (the namespace the code runs in reads them)."""
    def const(v) -> str:
        name = "%s%d" % (prefix, len(consts))
        consts[name] = v
        return name
    return const


def render_size_checks(checks, fails: str = "bad_check") -> List[str]:
    """``ss.check`` conditions on sizes the program computes (``(cond, text)`` pairs) as
    Python lines raising through ``_rt``; sizes are read by their symbols' names."""
    r = PyRenderer(TextRenderer(Names({})), const=_no_const)
    return [r.line(SizeCheck(c, t, fails)) for c, t in checks]


def _no_const(v) -> str:
    raise TypeError("a size check has no constants")
