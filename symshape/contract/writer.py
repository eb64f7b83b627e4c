"""The constraint set as one straight-line input check, built as typed records.

``CheckWriter`` builds the check as typed records (``symshape.contract.records``) that,
walking the inputs in argument order,
  * check type, rank and dtype,
  * bind each root symbol at its first linear occurrence (``s0 = x.shape[1]``;
    ``s1 = (y.shape[0] - 1) // 3`` after a divisibility check) and check its range there,
  * check every other axis against its expression as soon as its symbols are bound,
  * then check the residual guards,
raising ``UserError`` that names the input, the axis, the expected and the actual value.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Tuple

from symshape.errors import InternalError
from symshape.algebra.expr import Expr, IntLike, Sym
from symshape.algebra.infinity import is_inf
from symshape.rules import rule
from symshape.contract.constraint_set import ConstraintSet, InputDesc, OfClass, keys_text
from symshape.contract.input_check import InputCheck
from symshape.contract.records import (ArrayCheck, Bind, ClassCheck, CongruenceCheck, ConfiguredCheck,
                      GuardCheck, IntCheck, IntValue, RangeCheck, Read, ReadShape,
                      RelationCheck, ScalarCheck, StaticDim, StructCheck)
from symshape.contract.render_python import PyRenderer, numbered_consts
from symshape.contract.render_text import Names, TextRenderer


class CheckWriter:
    """Builds the input check of a constraint set as typed records (``symshape.contract.records``).

    ``checks``: the records, in the order the check runs; ``lines`` / ``emit()``: the same
    rendered as Python raising through ``_rt``, with its constants in ``consts``;
    ``bound``: root symbol -> the variable holding it; ``names``: how messages call each
    root.  ``var_names`` may name the variable holding an array input (by ``id`` of its
    ``InputDesc``) before ``emit``."""

    def __init__(self, cs: ConstraintSet) -> None:
        self.cs = cs
        self.checks: List[object] = []
        self.lines: List[str] = []
        self.consts: Dict[str, object] = {}
        self.bound: Dict[Sym, str] = {}          # symbol -> python variable
        self.names = Names(cs.dim_names)
        self.origin = self.names.origin          # symbol -> user-facing name
        self.pending: List[Tuple[str, str, Expr]] = []   # (axis var, axis name, expr)
        self.var_names: Dict[int, str] = {}      # id(InputDesc) -> variable holding it
        # the name a parameter has in the function the check is written into (a parameter
        # named like generated code's own names is renamed there; records keep the user's)
        self.param: Callable[[str], str] = str

    def user_name(self, s: Sym) -> str:
        """How messages call the root ``s`` (after ``emit``: the axis it is read from)."""
        return self.names.user(s)

    def text(self) -> TextRenderer:
        """The renderer of what the records require, in the user's names."""
        return TextRenderer(self.names)

    def renderer(self, **how) -> PyRenderer:
        """A Python renderer of the records (``PyRenderer`` options in ``how``); constants
        land in ``consts`` as ``_k0``, ``_k1``... unless ``how`` names them otherwise."""
        how.setdefault("const", numbered_consts(self.consts))
        how.setdefault("param", self.param)
        return PyRenderer(self.text(), **how)

    def access(self, d: InputDesc) -> str:
        """The Python reaching input ``d`` in the function the check is written into."""
        return self.param(d.param) + keys_text(d.keys)

    def input_check(self) -> InputCheck:
        """The records (after ``emit``) with the names their messages use."""
        return InputCheck(self.checks, self.names)

    @rule("check.emitted")
    def emit(self) -> List[str]:
        """Build the records; returns them rendered as Python lines (also ``lines``)."""
        checked = set()
        add = self.checks.append
        for i, d in enumerate(self.cs.inputs):
            self._structure(d, checked)
            if d.is_array:
                self._array(i, d)
            elif d.sym is not None:
                self._symint(i, d)
            else:
                self._scalar(i, d)
        self._flush(final=True)
        for f in self.cs.facts:
            self._fact(f)
        for name, default in self.cs.configured.items():
            # a function or object default is compiled into the program: any other value
            # would be silently ignored
            add(ConfiguredCheck(name, default))
        self.consts.clear()
        self.lines = self.renderer().lines(self.checks)
        return self.lines

    # inputs ------------------------------------------------------------------
    def _structure(self, d: InputDesc, checked: set) -> None:
        """Before the first leaf of a nested parameter: its list / tuple / dict layout, so a
        wrong structure is a UserError rather than an IndexError inside the program."""
        root = d.param
        if not d.keys or root in checked:
            return
        checked.add(root)
        spec = getattr(self.cs, "trees", {}).get(root)
        if spec is not None:
            # the example's own layout: dicts with int keys stay dicts, any key text works
            self.checks.append(StructCheck(root, spec, True))
            return
        # no layout recorded (a hand-built set): the nested dict of the keys its leaves read
        tree: dict = {}
        for other in self.cs.inputs:
            if other.param == root:
                node = tree
                for key in other.keys:
                    node = node.setdefault(key, {})
        self.checks.append(StructCheck(root, tree, False))

    def _scalar(self, i: int, d: InputDesc) -> None:
        if isinstance(d.value, OfClass):
            # any object of the class will do (a random generator argument)
            self.checks.append(ClassCheck(d.path, d.reach, d.value.cls))
            return
        self.checks.append(ScalarCheck(d.path, d.reach, d.value))

    def _symint(self, i: int, d: InputDesc) -> None:
        var = "_i%d" % i
        self.checks.append(Read(var, d.reach))
        self.checks.append(IntCheck(d.path, var))
        if type(d.sym) is int:
            self.checks.append(IntValue(d.path, var, d.sym))
            return
        self._dim(var, d.path, d.sym)
        self._flush()

    def _array(self, i: int, d: InputDesc) -> None:
        a = self.var_names.get(id(d), "_a%d" % i)
        add = self.checks.append
        if a != self.access(d):
            add(Read(a, d.reach))
        add(ArrayCheck(d.path, a, len(d.dims), d.dtype))
        if not d.dims:
            return
        names = tuple("_%s_%d" % (a, k) for k in range(len(d.dims)))
        add(ReadShape(a, names))
        for k, e in enumerate(d.dims):
            axis = "%s.shape[%d]" % (d.path, k)
            var = names[k]
            if type(e) is int:
                add(StaticDim(axis, var, e, getattr(self.cs, "specialized", {}).get(axis)))
                continue
            self._dim(var, axis, e)
            self._flush()

    def _dim(self, var: str, axis: str, e: Expr) -> None:
        unbound = [s for s in e.free_symbols if s not in self.bound]
        if not unbound:
            self.checks.append(RelationCheck(axis, var, e))
            return
        lin = e.linear_coeffs()
        if len(unbound) == 1 and lin is not None and lin.get(unbound[0]) is not None:
            s = unbound[0]
            a = lin[s]
            rest = e - s.expr * a          # bound part plus constant
            self._bind(s, var, axis, a, rest)
            return
        self.pending.append((var, axis, e))

    def _bind(self, s: Sym, var: str, axis: str, a: int, rest: IntLike) -> None:
        add = self.checks.append
        add(Bind(s, var, a, rest))
        if a != 1:
            add(CongruenceCheck(axis, var, s, a, rest))
        self.bound[s] = s.name
        plain = a == 1 and type(rest) is int and rest == 0
        if plain:
            self.origin[s] = axis
        elif s not in self.cs.dim_names:
            # messages name this root by how it was read off the axis: (y.shape[0] - 1)/3
            text = self.text().solved(s, a, rest, axis)
            # a sum or a negation (a = 1, a < 0) is bracketed where it stands in a larger
            # expression; a quotient (y.shape[0] - 1)/3 is not
            self.origin[s] = text if a > 1 else "(%s)" % text
            self.names.solved[s] = (a, rest, axis)
        vr = self.cs.ranges[s]
        if not is_inf(vr.lower) or not is_inf(vr.upper):
            add(RangeCheck(s, vr.lower, vr.upper, axis, a, rest, self.cs.dim_names.get(s)))

    def _flush(self, final: bool = False) -> None:
        progress = True
        while progress and self.pending:
            progress = False
            rest = []
            for var, axis, e in self.pending:
                unbound = [s for s in e.free_symbols if s not in self.bound]
                if not unbound:
                    self.checks.append(RelationCheck(axis, var, e))
                    progress = True
                    continue
                lin = e.linear_coeffs()
                if len(unbound) == 1 and lin is not None and unbound[0] in lin:
                    s = unbound[0]
                    self._bind(s, var, axis, lin[s], e - s.expr * lin[s])
                    progress = True
                    continue
                rest.append((var, axis, e))
            self.pending = rest
        if final and self.pending:
            raise InternalError("cannot bind the symbols of %s from the input shapes"
                                % ", ".join(a for _, a, _ in self.pending))

    def _fact(self, f) -> None:
        for s in f.free_symbols:
            if s not in self.bound:
                raise InternalError("guard %s mentions %s, which no input binds"
                                    % (f.format(), s.name))
        frame = self.cs.fact_frames.get(f)
        origin = (" (from %s)" % frame.describe()) if frame is not None else ""
        self.checks.append(GuardCheck(f, origin))
