"""The input check as typed records, and the renderers that write them.

``CheckWriter`` (symshape.guards) turns a constraint set into a list of records, in the
order the check runs.  A record holds its inputs as values: symbols and expressions
(``Sym``, ``Expr``, relations), sizes, dtypes, the input's path as the user calls it, and
the *check variables* it reads or binds (local names the check itself chooses, such as
``_a0`` for an array or ``s0`` for a root symbol).  Nothing downstream parses code:

* ``PyRenderer`` writes each record as exactly one line of Python, parameterised by how a
  parameter is named (a body with renamed parameters), how a constant is named (each
  dispatcher variant has its own), which name holds the array type (``numpy.ndarray``,
  ``cupy.ndarray``) and what a failed test does: call the ``_rt.bad_*`` protocol of
  ``symshape.runtime`` (which raises), ``break`` (the JIT's dispatcher) or return the
  failure record with the line's index (the JIT's recompile reasons);
* ``TextRenderer`` writes what a record requires in the user's names: the texts the failure
  calls carry (``y.shape[0] + 1``, ``4*dx``) and the guard a check enforces
  (``x.shape[0] in [2, int_oo]``), without run-time values;
* translation validation (``symshape.validate``) gives every record its Z3 meaning.

Check records end in a failure call (``fails`` is the ``_rt`` method); the others bind
variables or check a container layout (which raises itself).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import relations as R
from .expr import Expr, IntLike, Sym, format_expr, format_py
from .infinity import is_inf


# --------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Access:
    """How the check reaches an input leaf: a parameter, then container keys
    (``feats['a'][0]`` is ``Access('feats', "['a'][0]")``)."""
    param: str
    keys: str = ""


@dataclass(frozen=True)
class StructCheck:
    """Parameter ``param`` has the list / tuple / dict layout ``layout``: a pytree treespec
    (``treespec``) or the nested dict of the keys the inputs read."""
    param: str
    layout: Any
    treespec: bool


@dataclass(frozen=True)
class Read:
    """``var`` holds the input leaf at ``access`` (an array or an int input)."""
    var: str
    access: Access


@dataclass(frozen=True)
class ReadShape:
    """``names`` hold the sizes of the array in ``var``, one per axis."""
    var: str
    names: Tuple[str, ...]


@dataclass(frozen=True)
class ArrayCheck:
    """The array in ``var`` (input ``path``) has the backend's array type, ``ndim`` axes
    and ``dtype``."""
    path: str
    var: str
    ndim: int
    dtype: Any
    fails = "bad_array"


@dataclass(frozen=True)
class IntCheck:
    """The int input in ``var`` (input ``path``) is a Python int."""
    path: str
    var: str
    fails = "bad_int"


@dataclass(frozen=True)
class IntValue:
    """The int input in ``var`` equals ``value`` (a specialised symbolic int)."""
    path: str
    var: str
    value: int
    fails = "bad_scalar"


@dataclass(frozen=True)
class ScalarCheck:
    """The input at ``access`` is the specialised Python scalar ``value`` (same type)."""
    path: str
    access: Access
    value: Any
    fails = "bad_scalar"


@dataclass(frozen=True)
class ClassCheck:
    """The input at ``access`` is any instance of ``cls`` (a random generator argument)."""
    path: str
    access: Access
    cls: type
    fails = "bad_class"


@dataclass(frozen=True)
class ConfiguredCheck:
    """Parameter ``param`` is the very object ``default`` it was traced with."""
    param: str
    default: Any
    fails = "bad_configured"


@dataclass(frozen=True)
class StaticDim:
    """The size in ``var`` (axis ``axis``) is the static ``size``; ``why``: the program (not
    the spec) pinned a Dim.AUTO axis to it, and where (for the message)."""
    axis: str
    var: str
    size: int
    why: Optional[str] = None
    fails = "bad_static"


@dataclass(frozen=True)
class Bind:
    """``sym`` is read off the size in ``var``: ``var == coeff*sym + rest`` (``rest`` over
    symbols bound before).  With ``coeff != 1`` the remainder lands in ``_r``."""
    sym: Sym
    var: str
    coeff: int
    rest: IntLike


@dataclass(frozen=True)
class CongruenceCheck:
    """The remainder of the preceding ``Bind`` of ``sym`` is 0: the size in ``var`` (axis
    ``axis``) has the form ``coeff*sym + rest``."""
    axis: str
    var: str
    sym: Sym
    coeff: int
    rest: IntLike
    fails = "bad_congruence"


@dataclass(frozen=True)
class RangeCheck:
    """``lo <= sym <= hi`` (an infinite bound is not tested); ``sym`` was bound from axis
    ``axis`` as ``coeff*sym + rest``; ``label`` is its Dim name, if any."""
    sym: Sym
    lo: Any
    hi: Any
    axis: str
    coeff: int
    rest: IntLike
    label: Optional[str]
    fails = "bad_range"


@dataclass(frozen=True)
class RelationCheck:
    """The size in ``var`` (axis ``axis``) equals ``expr`` over bound symbols."""
    axis: str
    var: str
    expr: Expr
    fails = "bad_relation"


@dataclass(frozen=True)
class GuardCheck:
    """The residual guard ``cond`` (a relation over bound symbols) holds; ``note`` says where
    the program made it (`` (from f.py:3 ...)``), or is empty."""
    cond: Any
    note: str = ""
    fails = "bad_guard"


@dataclass(frozen=True)
class SizeCheck:
    """An ``ss.check`` condition on sizes the program computes, with the user's ``text``;
    ``fails`` is ``bad_check`` (the function's own checks) or ``bad_guard`` (a branch's)."""
    cond: Any
    text: str
    fails: str = "bad_check"


@dataclass(frozen=True)
class LenCheck:
    """The container at ``access`` (input ``path``) is a ``kind`` (``"list"`` /
    ``"tuple"``) of ``n`` items (the JIT's layout guard of a variant)."""
    path: str
    access: Access
    kind: str
    n: int
    fails = "bad_len"


@dataclass(frozen=True)
class KeysCheck:
    """The container at ``access`` (input ``path``) is a dict with exactly ``keys``."""
    path: str
    access: Access
    keys: frozenset
    fails = "bad_keys"


@dataclass(frozen=True)
class RebindCheck:
    """The global (``kind == "global"``, in the module dict ``where``) or closure variable
    (``"closure"``, in the cell ``where``) ``name`` that ``reader`` read while tracing is
    still the object ``obj``: rebinding it must recompile.  One identity test; arrays are
    read by reference, so an in-place change needs no recompile."""
    kind: str
    where: Any
    name: str
    obj: Any
    reader: str
    fails = "bad_rebound"

    @property
    def what(self) -> str:
        return "global" if self.kind == "global" else "closure variable"


#: a global that is gone reads as this (never the object traced)
MISSING = type("Missing", (), {"__repr__": lambda self: "<missing>"})()


CHECKS = (LenCheck, KeysCheck, RebindCheck, ArrayCheck, IntCheck, IntValue, ScalarCheck, ClassCheck, ConfiguredCheck, StaticDim,
          CongruenceCheck, RangeCheck, RelationCheck, GuardCheck, SizeCheck)


def is_check(rec) -> bool:
    """Whether ``rec`` ends in a failure call (rather than binding variables)."""
    return isinstance(rec, CHECKS)


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


def _zero(e: IntLike) -> bool:
    return type(e) is int and e == 0


# --------------------------------------------------------------------------- user text
class Names:
    """How messages call each root symbol: the Dim name, or the axis it was read from
    (``x.shape[1]``, ``(y.shape[0] - 1)/3``); filled by the writer as it binds."""

    def __init__(self, dim_names: Dict[Sym, str]) -> None:
        self.dim_names = dim_names
        self.origin: Dict[Sym, str] = {}
        # a root read off an axis as axis == a*s + rest: (a, rest, axis)
        self.solved: Dict[Sym, Tuple[int, IntLike, str]] = {}

    def user(self, s: Sym) -> str:
        return self.origin.get(s, self.dim_names.get(s, s.name))


class TextRenderer:
    """What a record requires, in the user's names (no code, no run-time values)."""

    def __init__(self, names: Names) -> None:
        self.names = names

    def expr(self, e: IntLike) -> str:
        return format_expr(e, self.names.user, py=True)

    def solved(self, s: Sym, a: int, rest: IntLike, axis: str) -> str:
        """How ``s`` is read off ``axis == a*s + rest``: ``(y.shape[0] - 1)/3``; with a
        negative ``a``, ``(rest - axis)/-a``: ``10 - x.shape[0]``, never ``/-1``."""
        if a < 0 and _zero(rest):
            return "-%s/%d" % (axis, -a) if a != -1 else "-%s" % axis
        if a < 0:
            r = self.expr(rest)
            if type(rest) is not int:
                r = "(%s)" % r
            return "(%s - %s)/%d" % (r, axis, -a) if a != -1 else "%s - %s" % (r, axis)
        if _zero(rest):
            return "%s/%d" % (axis, a) if a != 1 else axis
        r = self.expr(rest)
        if type(rest) is not int:
            r = "(%s)" % r
        elif rest < 0:
            return "(%s + %d)/%d" % (axis, -rest, a) if a != 1 else "%s + %d" % (axis, -rest)
        return "(%s - %s)/%d" % (axis, r, a) if a != 1 else "%s - %s" % (axis, r)

    def form(self, rec: CongruenceCheck) -> str:
        """``2*s1 + 1``: the form the axis must have; the root itself by its Dim name or
        symbol (it has no other name yet: this size is what defines it)."""
        s = rec.sym
        dims = self.names.dim_names
        # a root without a Dim name is "an integer k" to the user, not its symbol
        return format_expr(s.expr * rec.coeff + rec.rest,
                           lambda t: dims.get(s, "k") if t is s else self.names.user(t),
                           py=True)

    def range_subject(self, rec: RangeCheck) -> str:
        """``x.shape[0]``, or ``y.shape[0] (s1 = (y.shape[0] - 1)/2)`` for a solved root."""
        if rec.coeff == 1 and _zero(rec.rest):
            return rec.axis
        return "%s (%s = %s)" % (rec.axis, rec.label or rec.sym.name,
                                 self.solved(rec.sym, rec.coeff, rec.rest, rec.axis))

    def guard(self, rec: GuardCheck) -> str:
        return rec.cond.format(self.names.user, py=True) + rec.note

    def describe(self, rec) -> str:
        """The guard a check record enforces: ``x.shape[0] == 5``,
        ``x.shape[0] in [2, int_oo] (Dim batch)``."""
        t = type(rec)
        if t is ArrayCheck:
            return "%s: ndarray, ndim %s, dtype %s" % (rec.path, rec.ndim, rec.dtype)
        if t is StaticDim:
            return "%s == %s" % (rec.axis, rec.size)
        if t is RangeCheck:
            label = (" (Dim %s)" % rec.label) if isinstance(rec.label, str) else ""
            return "%s in [%s, %s]%s" % (self.range_subject(rec), rec.lo, rec.hi, label)
        if t is RelationCheck:
            return "%s == %s" % (rec.axis, self.expr(rec.expr))
        if t is CongruenceCheck:
            return "%s == %s" % (rec.axis, self.form(rec))
        if t is GuardCheck:
            return self.guard(rec)
        if t is SizeCheck:
            return rec.text
        if t is IntCheck:
            return "type(%s) is int" % rec.path
        if t is IntValue:
            return "%s == %r" % (rec.path, rec.value)
        if t is ScalarCheck:
            return "%s == %r" % (rec.path, rec.value)
        if t is ClassCheck:
            return "isinstance(%s, %s)" % (rec.path, rec.cls.__name__)
        if t is ConfiguredCheck:
            return "%s is the default traced" % rec.param
        if t is LenCheck:
            return "%s: %s of length %d" % (rec.path, rec.kind, rec.n)
        if t is KeysCheck:
            return "%s: dict with keys {%s}" % (rec.path, ", ".join(sorted(map(repr, rec.keys))))
        if t is RebindCheck:
            return "%s %s is the object traced" % (rec.what, rec.name)
        if hasattr(rec, "guard_text"):     # a record of its own kind (the JIT's state guards)
            return rec.guard_text()
        raise TypeError("not a check record: %r" % (rec,))


# --------------------------------------------------------------------------- Python
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
            num = rec.var if _zero(rec.rest) else "(%s - %s)" % (rec.var, self.py(rec.rest))
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


class InputCheck:
    """One input check: its records, in order, and the names its messages use."""

    def __init__(self, records: List[Any], names: Names) -> None:
        self.records = records
        self.names = names

    def text(self) -> TextRenderer:
        return TextRenderer(self.names)

    def renderer(self, const: Callable[[Any], str], **how) -> PyRenderer:
        """A ``PyRenderer`` of these records (``how``: its other options)."""
        return PyRenderer(self.text(), const, **how)

    def guards(self) -> List[str]:
        """The guard each check record enforces, in the user's names."""
        text = self.text()
        return [text.describe(r) for r in self.records if is_check(r)]


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
