"""The constraint set as one straight-line Python input check.

``ConstraintSet`` is the single contract of a program: the expected shape of every input
(ints and expressions over root symbols), the range of every root symbol, and the residual
guards.  ``range_constraints`` and the runtime check are both generated from it, so they
cannot disagree.

``emit_check`` writes Python lines that, walking the inputs in argument order,
  * check type, rank and dtype,
  * bind each root symbol at its first linear occurrence (``s0 = x.shape[1]``;
    ``s1 = (y.shape[0] - 1) // 3`` after a divisibility check) and check its range there,
  * check every other axis against its expression as soon as its symbols are bound,
  * then check the residual guards,
raising ``UserError`` that names the input, the axis, the expected and the actual value.
"""
from __future__ import annotations

import ast
import re
from typing import Callable, Dict, List, Tuple


from . import relations as R
from .errors import InternalError
from .expr import Expr, IntLike, Sym, format_expr, format_py
from .infinity import INT_OO, is_inf
from .ranges import ValueRange


class InputDesc:
    """One input leaf: an array (``dims``, ``dtype``) or a specialised scalar (``value``)."""

    __slots__ = ("path", "access", "dims", "dtype", "value", "is_array", "sym")

    def __init__(self, path: str, access: str, dims=None, dtype=None, value=None,
                 sym=None) -> None:
        self.path = path            # user-facing: x, batch[0], feats['a']
        self.access = access        # Python expression reaching the leaf from the parameters
        self.dims = dims            # tuple of int | Expr for arrays
        self.dtype = dtype
        self.value = value
        self.sym = sym              # the size expression of a symbolic int input
        self.is_array = dims is not None


class OfClass:
    """The value of an input that may be any object of ``cls`` (not specialised)."""

    __slots__ = ("cls",)

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def __repr__(self) -> str:
        return "any %s" % self.cls.__name__


_LEAD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


class ConstraintSet:
    def __init__(self, inputs: List[InputDesc], ranges: Dict[Sym, ValueRange],
                 facts: List, fact_frames: Dict, dim_names: Dict[Sym, str]) -> None:
        self.inputs = inputs
        self.ranges = ranges        # root symbols only
        self.facts = facts          # residual guards over root symbols
        self.fact_frames = fact_frames
        self.dim_names = dim_names  # symbol -> Dim name for named dims
        # (condition, text) of ss.check on data-dependent sizes, checked where computed
        self.runtime_checks: List[Tuple[object, str]] = []
        # parameter -> the list / tuple / dict layout of its example (symshape.pytree
        # treespec), when the parameter is a container
        self.trees: Dict[str, tuple] = {}
        # parameters left at a default that is not data (a function, an object): the
        # program was traced with it, so a call may only leave it out
        self.configured: Dict[str, object] = {}
        # Dim.AUTO axes the program pinned to one value: axis name -> why (for the message)
        self.specialized: Dict[str, str] = {}

    def roots(self) -> List[Sym]:
        seen: Dict[Sym, None] = {}
        for d in self.inputs:
            if type(d.sym) is Expr:
                for s in sorted(d.sym.free_symbols, key=lambda s: s.key):
                    seen.setdefault(s, None)
            if d.is_array:
                for e in d.dims:
                    if type(e) is Expr:
                        for s in sorted(e.free_symbols, key=lambda s: s.key):
                            seen.setdefault(s, None)
        for f in self.facts:
            for s in sorted(f.free_symbols, key=lambda s: s.key):
                seen.setdefault(s, None)
        return list(seen)

    def range_constraints(self) -> Dict[IntLike, ValueRange]:
        """Each root symbol and each compound input-dim expression, with its range."""
        from .ranges import bound
        out: Dict[IntLike, ValueRange] = {}
        for s in sorted(self.roots(), key=lambda s: s.key):
            out[s.expr] = self.ranges[s]
        for d in self.inputs:
            if d.is_array:
                for e in d.dims:
                    if type(e) is Expr and e.as_symbol() is None and e not in out:
                        out[e] = self._exact(e) if self.facts else \
                            bound(e, self.ranges.__getitem__)
        return out

    def _exact(self, e: Expr) -> ValueRange:
        """A compound dim's range under the residual guards too (exact, cached)."""
        cache = self.__dict__.setdefault("_exact_cache", {})
        got = cache.get(e)
        if got is None:
            from .projection import project
            syms, facts, grew = set(e.free_symbols), [], True
            while grew:                          # every fact connected to e's symbols
                grew = False
                for f in self.facts:
                    if f not in facts and f.free_symbols & syms:
                        facts.append(f)
                        syms |= f.free_symbols
                        grew = True
            got = cache[e] = project(e, facts, self.ranges)
        return got


# --------------------------------------------------------------------------- emission
def _lit(v) -> str:
    return "'int_oo'" if v is INT_OO else repr(v)


class CheckWriter:
    """Generates the check lines; ``names`` maps each root to how messages call it."""

    def __init__(self, cs: ConstraintSet) -> None:
        self.cs = cs
        self.lines: List[str] = []
        self.consts: Dict[str, object] = {}
        self.bound: Dict[Sym, str] = {}          # symbol -> python variable
        self.origin: Dict[Sym, str] = {}         # symbol -> user-facing name
        self.pending: List[Tuple[str, str, Expr]] = []   # (axis var, axis name, expr)
        self.var_names: Dict[int, str] = {}      # id(InputDesc) -> variable holding it
        # translation validation (symshape.validate) reads the emitted lines themselves

    def const(self, v) -> str:
        name = "_k%d" % len(self.consts)
        self.consts[name] = v
        return name

    def user_name(self, s: Sym) -> str:
        return self.origin.get(s, self.cs.dim_names.get(s, s.name))

    def fmt_user(self, e: IntLike) -> str:
        return format_expr(e, self.user_name)

    def py(self, e: IntLike) -> str:
        return format_py(e, lambda s: self.bound[s])

    def emit(self) -> List[str]:
        checked = set()
        for i, d in enumerate(self.cs.inputs):
            self._structure(d.access, checked)
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
            k = self.const(default)
            self.lines.append("if %s is not %s: _rt.bad_configured(%r, %s)" % (name, k, name, k))
        return self.lines

    # inputs ------------------------------------------------------------------
    def _structure(self, access: str, checked: set) -> None:
        """Before the first leaf of a nested parameter: its list / tuple / dict layout, so a
        wrong structure is a UserError rather than an IndexError inside the program."""
        lead = _LEAD.match(access)
        spec = getattr(self.cs, "trees", {}).get(lead.group(0)) if lead else None
        if spec is not None and access != lead.group(0):
            # the example's own layout: dicts with int keys stay dicts, any key text works
            root = lead.group(0)
            if root not in checked:
                checked.add(root)
                self.lines.append("_rt.check_spec(%r, %s, %s)"
                                  % (root, root, self.const(spec)))
            return
        m = _ACCESS.match(access)
        if m is None or not m.group(2):
            return
        root = m.group(1)
        if root in checked:
            return
        checked.add(root)
        tree: dict = {}
        for d in self.cs.inputs:
            mm = _ACCESS.match(d.access)
            if mm is None or mm.group(1) != root:
                continue
            node = tree
            for key in _KEYS.findall(mm.group(2)):
                node = node.setdefault(ast.literal_eval(key), {})
        k = self.const(tree)
        self.lines.append("_rt.check_tree(%r, %s, %s)" % (root, root, k))

    def _scalar(self, i: int, d: InputDesc) -> None:
        if isinstance(d.value, OfClass):
            # any object of the class will do (a random generator argument)
            k = self.const(d.value.cls)
            self.lines.append("if not isinstance(%s, %s): _rt.bad_class(%r, %r, %s)"
                              % (d.access, k, d.path, d.value.cls.__name__, d.access))
            return
        k = self.const(d.value)
        self.lines.append("if not _rt.same_scalar(%s, %s): _rt.bad_scalar(%r, %s, %s)"
                          % (d.access, k, d.path, k, d.access))

    def _symint(self, i: int, d: InputDesc) -> None:
        var = "_i%d" % i
        self.lines.append("%s = %s" % (var, d.access))
        self.lines.append("if type(%s) is not int: _rt.bad_int(%r, %s)" % (var, d.path, var))
        if type(d.sym) is int:
            self.lines.append("if %s != %d: _rt.bad_scalar(%r, %d, %s)"
                              % (var, d.sym, d.path, d.sym, var))
            return
        self._dim(var, d.path, d.sym)
        self._flush()

    def _array(self, i: int, d: InputDesc) -> None:
        a = self.var_names.get(id(d), "_a%d" % i)
        L = self.lines
        if a != d.access:
            L.append("%s = %s" % (a, d.access))
        dt = self.const(d.dtype)
        L.append("if type(%s) is not _ndarray or %s.ndim != %d or %s.dtype != %s: "
                 "_rt.bad_array(%r, %s, %d, %s)" % (a, a, len(d.dims), a, dt, d.path, a,
                                                     len(d.dims), dt))
        if not d.dims:
            return
        names = ["_%s_%d" % (a, k) for k in range(len(d.dims))]
        L.append("%s = %s.shape" % (", ".join(names) + ("," if len(names) == 1 else ""), a))
        for k, e in enumerate(d.dims):
            axis = "%s.shape[%d]" % (d.path, k)
            var = names[k]
            if type(e) is int:
                why = getattr(self.cs, "specialized", {}).get(axis)
                L.append("if %s != %d: _rt.bad_static(%r, %d, %s%s)" % (
                    var, e, axis, e, var, "" if why is None else ", %r" % why))
                continue
            self._dim(var, axis, e)
            self._flush()

    def _dim(self, var: str, axis: str, e: Expr) -> None:
        unbound = [s for s in e.free_symbols if s not in self.bound]
        if not unbound:
            self._eq(var, axis, e)
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
        L = self.lines
        v = s.name
        num = var if (type(rest) is int and rest == 0) else "(%s - %s)" % (var, self.py(rest))
        if a == 1:
            L.append("%s = %s" % (v, num))
        else:
            L.append("%s, _r = divmod(%s, %d)" % (v, num, a))
            L.append("if _r: _rt.bad_congruence(%r, %s, %r)"
                     % (axis, var, format_expr(e_of(a, s, rest), self._pretty_root(s, axis))))
        self.bound[s] = v
        if a == 1 and type(rest) is int and rest == 0:
            self.origin[s] = axis
        elif s not in self.cs.dim_names:
            # messages name this root by how it was read off the axis: (y.shape[0] - 1)/3
            text = self._solved_text(s, a, rest, axis)
            self.origin[s] = text if a != 1 else "(%s)" % text
        label = self.cs.dim_names.get(s)
        vr = self.cs.ranges[s]
        conds = []
        if not is_inf(vr.lower):
            conds.append("%s < %d" % (v, vr.lower))
        if not is_inf(vr.upper):
            conds.append("%s > %d" % (v, vr.upper))
        if conds:
            what = axis if (a == 1 and type(rest) is int and rest == 0) else \
                "%s (%s = %s)" % (axis, label or v, self._solved_text(s, a, rest, axis))
            L.append("if %s: _rt.bad_range(%r, %s, %s, %s, %r)"
                     % (" or ".join(conds), what, v, _lit(vr.lower), _lit(vr.upper), label))

    def _pretty_root(self, s: Sym, axis: str) -> Callable[[Sym], str]:
        return lambda t: self.cs.dim_names.get(t, self.user_name(t)) if t is s else \
            self.user_name(t)

    def _solved_text(self, s: Sym, a: int, rest: IntLike, axis: str) -> str:
        if type(rest) is int and rest == 0:
            return "%s/%d" % (axis, a) if a != 1 else axis
        r = self.fmt_user(rest)
        if type(rest) is not int:
            r = "(%s)" % r
        elif rest < 0:
            return "(%s + %d)/%d" % (axis, -rest, a) if a != 1 else "%s + %d" % (axis, -rest)
        return "(%s - %s)/%d" % (axis, r, a) if a != 1 else "%s - %s" % (axis, r)

    def _eq(self, var: str, axis: str, e: Expr) -> None:
        self.lines.append("if %s != %s: _rt.bad_relation(%r, %s, %r, %s)"
                          % (var, self.py(e), axis, var, self.fmt_user(e), self.py(e)))

    def _flush(self, final: bool = False) -> None:
        progress = True
        while progress and self.pending:
            progress = False
            rest = []
            for var, axis, e in self.pending:
                unbound = [s for s in e.free_symbols if s not in self.bound]
                if not unbound:
                    self._eq(var, axis, e)
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
        self.lines.append("if not (%s): _rt.bad_guard(%r)"
                          % (cond_py(f, self.py), f.format(self.user_name, py=True) + origin))


_ACCESS = re.compile(r"^([A-Za-z_][A-Za-z_0-9]*)((?:\[[^\]]+\])*)$")
_KEYS = re.compile(r"\[([^\]]+)\]")


def e_of(a: int, s: Sym, rest: IntLike) -> IntLike:
    return s.expr * a + rest


def cond_py(c, py: Callable[[IntLike], str]) -> str:
    if isinstance(c, R.BoolOp):
        return (" %s " % c.op).join("(%s)" % cond_py(a, py) for a in c.args)
    op = {"==": "==", "!=": "!=", "<=": "<="}[c.op]
    return "%s %s 0" % (py(c.expr), op)
