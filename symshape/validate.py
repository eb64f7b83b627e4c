"""Translation validation (``SYMSHAPE_VALIDATE=1``; always on in the test suite).

After every export, Z3 checks that
  (a) the final constraint set -- root ranges, residual facts, and each replaced symbol
      equal to its replacement -- implies every guard recorded while tracing;
  (b) the generated input check accepts exactly the inputs the constraint set admits: the
      check's records, the very ones the Python renderer writes, are given their Z3
      meaning (``CheckMeaning``: a bind a definition, every check an acceptance condition;
      tests check that the rendered Python of each record agrees with that meaning), and
      what they accept is equivalent to "every input size equals its expression for some
      root values in range satisfying the facts";
  (d) the run-time checks emitted for data-dependent sizes imply every ``ss.check`` made on
      them, with the data-dependent sizes free (never assuming a replacement the solver
      derived from the check itself), and none is left unemitted;
  (e) each branch's generated function (``ss.cond``, ``ss.map``, ``ss.while_loop``),
      executed in order, enforces every ``ss.check`` made inside the branch, and reads no
      size before the branch binds it;
and ``export`` checks (c) that applied suggested fixes leave no violation.
A failure is an ``InternalError`` that prints the expressions involved.
"""
from __future__ import annotations

import ast
import functools
import os
from typing import Dict, Iterable, List, Optional

from . import check_ir as C
from . import relations as R
from .errors import InternalError
from .expr import Sym
from .infinity import is_inf
from .rules import rule
from .z3bridge import RLIMIT, Encoder, cond_term, minmax_term, serialized, z3mod


def enabled() -> bool:
    return os.environ.get("SYMSHAPE_VALIDATE", "") not in ("", "0")


@serialized
def validate_guards(env, cs) -> None:
    z3 = z3mod()
    enc = Encoder()
    hyp = []
    for s, v in env.replacements.items():
        if s.unbacked:
            continue
        hyp.append(enc.cond(R.eq(s.expr, v)))
    for f in cs.facts:
        hyp.append(enc.cond(f))
    goals = [g for g in env.guards if not any(s.unbacked for s in g.cond.free_symbols)]
    if not goals:
        return
    goal_formulas = [(g, enc.cond(g.cond)) for g in goals]
    for s in list(enc.vars):
        if s in env.replacements or s.unbacked:
            continue
        hyp += enc.range(s, env.ranges[s])
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT * 5)
    solver.add(*hyp)
    solver.add(*enc.side)
    for g, formula in goal_formulas:
        solver.push()
        solver.add(z3.Not(formula))
        res = solver.check()
        solver.pop()
        if res == z3.sat:
            raise InternalError(
                "translation validation: the constraint set does not imply the guard %s "
                "recorded at %s.\n  replacements: %s\n  ranges: %s\n  facts: %s"
                % (g.cond.format(), g.frame.location if g.frame else "?",
                   {k.name: str(v) for k, v in env.replacements.items()},
                   {k.name: str(v) for k, v in cs.ranges.items()},
                   [f.format() for f in cs.facts]))


@serialized
def validate_check(cs, writer, records: Optional[List] = None) -> None:
    """(b): the input check's records (``writer.checks`` unless given), the very records
    the Python renderer writes, against the constraint set."""
    sizes, size_var = _size_vars()
    enc, adm = _admitted(cs, size_var)
    # accepted: what the check records mean, over the input sizes
    ex = CheckMeaning(size_var)
    ex.run(writer.checks if records is None else records)
    _same_set(enc, adm, ex, sizes, "generated input check")


def _size_vars():
    """The Z3 integers of the input sizes by user name, made on first use: (the dict of
    those made, the function making them)."""
    z3 = z3mod()
    sizes = {}

    def size_var(name):
        v = sizes.get(name)
        if v is None:
            v = sizes[name] = z3.Int("in_" + name)
        return v
    return sizes, size_var


def _admitted(cs, size_var):
    """What the constraint set admits, over the input sizes (``size_var(name)``): some
    root values in range, satisfying the facts, give every input size its expression."""
    enc = Encoder()
    adm = []
    for d in cs.inputs:
        dims = d.dims if d.is_array else ((d.sym,) if d.sym is not None else ())
        for k, e in enumerate(dims):
            name = "%s.shape[%d]" % (d.path, k) if d.is_array else d.path
            adm.append(size_var(name) == enc.expr(e))
    for f in cs.facts:
        adm.append(enc.cond(f))
    for s in list(enc.vars):
        adm += enc.range(s, cs.ranges[s])
    adm += enc.side
    return enc, adm


def _same_set(enc, adm, ex, sizes, what: str) -> None:
    """The sizes ``ex`` (``accept``, ``side``, ``read``) accepts are exactly those ``adm``
    admits (its roots existential), and ``ex`` reads every input size."""
    z3 = z3mod()
    acc_f = z3.And(*ex.accept) if ex.accept else z3.BoolVal(True)
    acc_f = z3.And(acc_f, *ex.side) if ex.side else acc_f
    adm_f = z3.And(*adm) if adm else z3.BoolVal(True)
    missing = set(sizes) - ex.read
    if missing:
        raise InternalError("translation validation: the %s never looks at %s"
                            % (what, sorted(missing)))
    # 1. accepted => admitted: the admitted side's roots are existential, so "the check
    #    accepts and no root values admit the sizes" must be unsat
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT * 5)
    solver.add(acc_f)
    goal_vars = [enc.vars[s] for s in enc.vars] + enc.fresh
    solver.add(z3.ForAll(goal_vars, z3.Not(adm_f)) if goal_vars else z3.Not(adm_f))
    if solver.check() == z3.sat:
        raise InternalError("translation validation: the %s accepts inputs the constraint "
                            "set rejects:\n  counterexample sizes: %s" % (what, solver.model()))
    # 2. admitted => accepted: the check's own quotients are functions of the sizes (pinned
    #    by their definitions, a zero divisor being a rejection), so no quantifier is needed
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT * 5)
    solver.add(adm_f, *ex.side)
    solver.add(z3.Not(z3.And(*ex.accept)) if ex.accept else z3.BoolVal(False))
    if solver.check() == z3.sat:
        raise InternalError("translation validation: the %s rejects inputs the constraint "
                            "set admits:\n  counterexample sizes: %s" % (what, solver.model()))


@serialized
@rule("check.text")
def validate_check_text(cs, lines: List[str], params: Optional[Iterable[str]] = None) -> None:
    """(b) on the *text*: the Python lines of the input check (what ``module()`` and the
    compiled forms run, after rendering) are parsed back (``CheckText``) and proven to
    accept exactly the sizes the constraint set admits; every name they read is defined
    (``params``: the function's parameters, by default the inputs' own names)."""
    params = {d.param for d in cs.inputs} if params is None else set(params)
    sizes, size_var = _size_vars()
    enc, adm = _admitted(cs, size_var)
    ex = CheckText(size_var, params)
    ex.run(lines)
    _same_set(enc, adm, ex, sizes, "input check's Python text")


# --------------------------------------------------------------------------- check records
def py_divmod(ex, a, b):
    """Python's ``divmod(a, b)`` in Z3 for an executor ``ex`` (``accept``, ``side``): a
    fresh quotient pinned by its definition; a zero divisor raises, so it is not accepted."""
    z3 = ex.z3
    q = z3.FreshInt("cq")
    ex.accept.append(b != 0)
    ex.side.append(z3.Implies(b > 0, z3.And(b * q <= a, a < b * q + b)))
    ex.side.append(z3.Implies(b < 0, z3.And(b * q >= a, a > b * q + b)))
    return q, a - b * q


class CheckMeaning:
    """The Z3 meaning of input-check records (``symshape.check_ir``), run in order.

    ``size_var(name)`` is the Z3 integer of an input size by its user name
    (``x.shape[1]``, ``n`` for an int input).  A ``ReadShape`` or an ``IntCheck`` reads
    sizes; a ``Bind`` defines its symbol (``divmod``: a quotient pinned by its definition,
    the remainder kept for the ``CongruenceCheck`` after it); every other size check adds
    its acceptance condition to ``accept``; type, rank, dtype, layout, scalar and class
    checks say nothing about sizes.  A record of another type, or a symbol read before it
    is bound, is an ``InternalError``: validation never guesses."""

    _STRUCTURAL = ("Read", "StructCheck", "ClassCheck", "ScalarCheck", "ConfiguredCheck")

    def __init__(self, size_var, syms: Optional[Dict] = None) -> None:
        self.z3 = z3mod()
        self.size_var = size_var
        self.vars: Dict[str, object] = {}       # check variable -> Z3 integer
        self.syms: Dict[object, object] = dict(syms or {})     # bound Sym -> Z3 integer
        self.paths: Dict[str, str] = {}         # array variable -> input path
        self.rem: Dict[object, object] = {}     # Sym -> remainder of its divmod bind
        self.accept: List[object] = []
        self.side: List[object] = []
        self.read: set = set()

    def run(self, records: Iterable) -> None:
        for rec in records:
            self.record(rec)

    def _size(self, name: str):
        self.read.add(name)
        return self.size_var(name)

    def record(self, rec) -> None:
        """Add what ``rec`` binds or requires."""
        z3 = self.z3
        t = type(rec)
        if t.__name__ in self._STRUCTURAL:
            return
        if t is C.ArrayCheck:
            self.paths[rec.var] = rec.path
        elif t is C.ReadShape:
            path = self.paths.get(rec.var)
            if path is None:
                raise InternalError("translation validation: the check reads the shape of "
                                    "%s before checking it is an array" % rec.var)
            for k, n in enumerate(rec.names):
                self.vars[n] = self._size("%s.shape[%d]" % (path, k))
        elif t is C.IntCheck:
            self.vars[rec.var] = self._size(rec.path)
        elif t is C.IntValue:
            self.accept.append(self.var(rec.var) == rec.value)
        elif t is C.StaticDim:
            self.accept.append(self.var(rec.var) == rec.size)
        elif t is C.Bind:
            num = self.var(rec.var) - self.expr(rec.rest)
            if rec.coeff == 1:
                self.syms[rec.sym] = num
            else:
                q, r = self.divmod(num, z3.IntVal(rec.coeff))
                self.syms[rec.sym], self.rem[rec.sym] = q, r
        elif t is C.CongruenceCheck:
            if rec.sym not in self.rem:
                raise InternalError("translation validation: a congruence check on %s "
                                    "without its divmod" % rec.sym.name)
            self.accept.append(self.rem[rec.sym] == 0)
        elif t is C.RangeCheck:
            v = self.sym(rec.sym)
            if not is_inf(rec.lo):
                self.accept.append(v >= rec.lo)
            if not is_inf(rec.hi):
                self.accept.append(v <= rec.hi)
        elif t is C.RelationCheck:
            self.accept.append(self.var(rec.var) == self.expr(rec.expr))
        elif t in (C.GuardCheck, C.SizeCheck):
            self.accept.append(self.cond(rec.cond))
        else:
            raise InternalError("translation validation: cannot read the check record %r"
                                % (rec,))

    # values ----------------------------------------------------------------------
    def var(self, name: str):
        v = self.vars.get(name)
        if v is None:
            raise InternalError("translation validation: %s is used before it is "
                                "assigned in the check" % name)
        return v

    def sym(self, s):
        v = self.syms.get(s)
        if v is None:
            raise InternalError("translation validation: %s is used before the check "
                                "binds it" % s.name)
        return v

    def divmod(self, a, b):
        return py_divmod(self, a, b)

    def expr(self, x):
        z3 = self.z3
        if type(x) is int:
            return z3.IntVal(x)
        total = z3.IntVal(x.const)
        for term, c in x.terms:
            prod = z3.IntVal(c)
            for atom in term:
                prod = prod * (self.sym(atom) if type(atom) is Sym else self.atom(atom))
            total = total + prod
        return total

    def atom(self, atom):
        z3 = self.z3
        args = [self.expr(a) for a in atom.args]
        if atom.kind in ("Min", "Max"):
            return minmax_term(z3, atom.kind, args)
        q, r = self.divmod(*args)
        return q if atom.kind == "FloorDiv" else r

    def cond(self, c):
        return cond_term(self.z3, c, self.expr)


# --------------------------------------------------------------------------- emitted code
@functools.lru_cache(maxsize=4096)
def _parse(line: str) -> tuple:
    """A generated line's statements (the syntax tree is only read, never changed)."""
    return tuple(ast.parse(line).body)


class CheckCode:
    """Symbolic execution of the generated ``ss.check`` lines (the run-time checks of sizes
    the program computes, a branch's own checks) over Z3 integers.

    Straight-line code only, as ``check_ir.render_size_checks`` writes it: an ``if <test>:
    _rt.bad_*(..)`` rejects when the test holds, an assignment defines its names (``u1 =
    (u0 - 0) // 2``).  ``accept`` collects the negated tests; a ``//`` or ``%`` by a value
    that may be 0 would raise, so its divisor being non-zero is part of acceptance too.
    ``names`` maps each size the code reads to its Z3 integer.  Any other statement is an
    ``InternalError``: validation never guesses what code does."""

    def __init__(self, names: Optional[Dict] = None) -> None:
        self.z3 = z3mod()
        self.env: Dict[str, object] = dict(names or {})
        self.accept: List[object] = []
        self.side: List[object] = []

    # statements ------------------------------------------------------------------
    def run(self, lines: Iterable[str]) -> None:
        for line in lines:
            for stmt in _parse(line):
                self._stmt(stmt, line)

    def _stmt(self, st, line: str) -> None:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 \
                and isinstance(st.targets[0], ast.Name):
            self.env[st.targets[0].id] = self._int(st.value)
        elif isinstance(st, ast.If) and not st.orelse and len(st.body) == 1 \
                and isinstance(st.body[0], ast.Expr) and self._rt_call(st.body[0].value):
            self.accept.append(self.z3.Not(self._bool(st.test)))
        else:
            raise InternalError("translation validation: cannot read the check line %r" % line)

    @staticmethod
    def _rt_call(node) -> Optional[str]:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "_rt":
            return node.func.attr
        return None

    # expressions -----------------------------------------------------------------
    def _divmod(self, a, b):
        return py_divmod(self, a, b)

    def _int(self, n):
        z3 = self.z3
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return z3.IntVal(n.value)
        if isinstance(n, ast.Name):
            if n.id not in self.env:
                raise InternalError("translation validation: %s is used before it is "
                                    "assigned in the check" % n.id)
            return self.env[n.id]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -self._int(n.operand)
        if isinstance(n, ast.BinOp):
            a, b = self._int(n.left), self._int(n.right)
            if isinstance(n.op, ast.Add):
                return a + b
            if isinstance(n.op, ast.Sub):
                return a - b
            if isinstance(n.op, ast.Mult):
                return a * b
            if isinstance(n.op, ast.FloorDiv):
                return self._divmod(a, b)[0]
            if isinstance(n.op, ast.Mod):
                return self._divmod(a, b)[1]
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                and n.func.id in ("min", "max") and n.args and not n.keywords:
            args = [self._int(x) for x in n.args]
            out = args[0]
            for x in args[1:]:
                out = z3.If(x < out, x, out) if n.func.id == "min" else z3.If(x > out, x, out)
            return out
        raise InternalError("translation validation: cannot read %r in the check"
                            % ast.unparse(n))

    def _bool(self, n):
        z3 = self.z3
        if isinstance(n, ast.BoolOp):
            parts = [self._bool(v) for v in n.values]
            return z3.And(*parts) if isinstance(n.op, ast.And) else z3.Or(*parts)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            return z3.Not(self._bool(n.operand))
        if isinstance(n, ast.Compare):
            out = []
            left = self._int(n.left)
            for op, r in zip(n.ops, n.comparators):
                right = self._int(r)
                out.append({ast.Lt: left < right, ast.LtE: left <= right, ast.Gt: left > right,
                            ast.GtE: left >= right, ast.Eq: left == right,
                            ast.NotEq: left != right}[type(op)])
                left = right
            return z3.And(*out) if len(out) > 1 else out[0]
        if isinstance(n, ast.Name) or isinstance(n, ast.BinOp):
            return self._int(n) != 0               # `if _r:` -- a remainder
        raise InternalError("translation validation: cannot read the test %r in the check"
                            % ast.unparse(n))


@serialized
def validate_runtime_checks(env, cs, lines: List[str], bound: Iterable) -> None:
    """(d): the emitted run-time check lines (``if not (..): _rt.bad_check(..)`` as the
    program runs them once their sizes are computed; ``bound`` the data-dependent sizes the
    program binds) imply every ``ss.check`` on data-dependent sizes.  The data-dependent
    sizes are free; input roots range over the constraint set; replaced input symbols equal
    their replacement."""
    goals = [c for c, _, _ in env.checks if not isinstance(c, bool)]
    if not goals:
        return
    enc = Encoder()
    names = {}
    for s in set(bound) | set(env.ranges):
        if isinstance(s, Sym):
            names[s.name] = enc.sym(s)
    ex = CheckCode(names)
    ex.run(lines)
    _enforced(env, cs, goals, ex, enc, lines, "run-time checks")


@serialized
def validate_branch_checks(env, cs, sub, lines: List[str], outer: Dict[str, object]) -> None:
    """(e): the run-time checks a branch (``ss.cond``, ``ss.map``, ``ss.while_loop``) emits
    in its own function imply every ``ss.check`` made inside it (``sub.goals``).

    ``lines`` is the branch function as generated; its own body is executed in order: an
    ``if ...: _rt.bad_*(..)`` line rejects, a line binding a size the branch computes
    (``u0 = index.shape[0]``) makes that size a free variable from there on, and the lines
    computing arrays say nothing about sizes.  ``outer`` maps each name the enclosing code
    has bound to its symbol; a check that reads a size before anything binds it is an
    ``InternalError`` (it would be a ``NameError`` at run time)."""
    goals = [c for c in getattr(sub, "goals", ()) if not isinstance(c, bool)]
    inner = {s.name: s for s in branch_binds(sub)}
    enc = Encoder()
    ex = CheckCode({n: enc.sym(s) for n, s in outer.items()})
    for line in lines[1:]:
        if not line.startswith("    ") or line.startswith("     ") or \
                line.startswith("    def "):
            continue                       # a nested branch: validated on its own
        text = line[4:]
        st = _parse(text)[0]
        if isinstance(st, ast.If) and len(st.body) == 1 and \
                isinstance(st.body[0], ast.Expr) and ex._rt_call(st.body[0].value):
            ex.run([text])
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                isinstance(st.targets[0], ast.Name) and st.targets[0].id in inner:
            ex.env[st.targets[0].id] = enc.sym(inner[st.targets[0].id])
    if goals:
        _enforced(env, cs, goals, ex, enc, lines, "checks emitted in the branch %s" % sub.name)


@serialized
def branch_binds(sub) -> list:
    """The data-dependent sizes a branch computes and binds (``x[mask].shape[0]``)."""
    out = [sym for n in sub.graph.nodes for sym, _ in n.meta.get("binds", ())]
    out += [n.meta["binds_value"] for n in sub.graph.nodes if "binds_value" in n.meta]
    return out


def _enforced(env, cs, goals, ex, enc, lines, what: str) -> None:
    """Every goal holds whenever the executed check code ``ex`` accepts, data-dependent
    sizes free, input roots in range, replaced input symbols equal to their replacement."""
    z3 = z3mod()
    hyp = list(ex.accept) + list(ex.side)
    for f in cs.facts:
        hyp.append(enc.cond(f))
    for s, v in env.replacements.items():
        if not s.unbacked:
            hyp.append(enc.sym(s) == enc.expr(v))
    formulas = [(c, enc.cond(c)) for c in goals]
    for s in list(enc.vars):
        if s.unbacked or s in env.replacements:
            continue
        if s in cs.ranges:
            hyp += enc.range(s, cs.ranges[s])
    hyp += enc.side + ex.side
    for c, f in formulas:
        solver = z3.Solver()
        solver.set("rlimit", RLIMIT * 5)
        solver.add(*hyp)
        solver.add(z3.Not(f))
        if solver.check() == z3.sat:
            raise InternalError(
                "translation validation: the %s do not enforce ss.check(%s): "
                "it can fail while every emitted check passes.\n  emitted: %s\n  "
                "counterexample: %s" % (what, c.format(), lines, solver.model()))


class CheckText(CheckCode):
    """Symbolic execution of the whole input check as Python text (``PyRenderer``'s
    lines, parsed back): reading an input (``_a0 = x``), its shape (``_x_0, _x_1 =
    x.shape``), an int input (``if type(_i0) is not int: _rt.bad_int('k', _i0)``), binds
    (``s0, _r = divmod(_x_0 - 1, 3)``) and every size test; type, rank, dtype, layout and
    scalar tests say nothing about sizes and are read as passing.  ``read``: the input
    sizes the text reads (by user name, as ``size_var`` takes them)."""

    #: failure calls of tests that are not about sizes (``bad_scalar`` also ends an int
    #: input's value test, ``_i0 != 3``, which is: only ``_rt.same_scalar`` tests are not)
    STRUCTURAL = ("bad_class", "bad_configured", "bad_len", "bad_keys",
                  "bad_rebound")

    #: names the generated function's namespace defines (constants are ``_k0``, ``_k1``...)
    NAMESPACE = ("_rt", "_ndarray", "_W", "int", "type", "isinstance", "divmod", "min", "max")

    def __init__(self, size_var, params: Iterable[str] = ()) -> None:
        super().__init__()
        self.size_var = size_var
        self.params = set(params)
        self.arrays: Dict[str, str] = {}        # variable holding an array -> input path
        self.refs: set = set()                  # variables holding an input not yet typed
        self.read: set = set()

    def _size(self, name: str):
        self.read.add(name)
        return self.size_var(name)

    def _stmt(self, st, line: str) -> None:
        if isinstance(st, ast.Expr) and self._rt_call(st.value) in ("check_spec", "check_tree"):
            return                                          # container layout
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            t, v = st.targets[0], st.value
            if isinstance(t, ast.Tuple) and isinstance(v, ast.Attribute) and v.attr == "shape" \
                    and isinstance(v.value, ast.Name) and v.value.id in self.arrays:
                path = self.arrays[v.value.id]
                for k, n in enumerate(t.elts):
                    self.env[n.id] = self._size("%s.shape[%d]" % (path, k))
                return
            if isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(v, ast.Call) \
                    and isinstance(v.func, ast.Name) and v.func.id == "divmod":
                q, r = self._divmod(self._int(v.args[0]), self._int(v.args[1]))
                self.env[t.elts[0].id], self.env[t.elts[1].id] = q, r
                return
            if isinstance(t, ast.Name) and (isinstance(v, ast.Subscript) or (
                    isinstance(v, ast.Name) and v.id not in self.env)):
                self.refs.add(t.id)                         # an input, typed below
                return
        if isinstance(st, ast.If) and len(st.body) == 1 and isinstance(st.body[0], ast.Expr):
            fails = self._rt_call(st.body[0].value)
            args = st.body[0].value.args if fails else []
            self._defined(st, line)
            if fails == "bad_array":
                self.arrays[ast.unparse(args[1])] = args[0].value
                return
            if fails == "bad_int":
                self.env[ast.unparse(args[1])] = self._size(args[0].value)
                return
            if fails in self.STRUCTURAL or (fails == "bad_scalar" and
                                            "_rt.same_scalar" in ast.unparse(st.test)):
                return
        super()._stmt(st, line)

    def _defined(self, st, line: str) -> None:
        """Every name a test or its failure call reads is defined when it runs (a bare
        ``int_oo`` in a failure call would be a ``NameError`` instead of the UserError)."""
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and not (
                    n.id in self.env or n.id in self.refs or n.id in self.arrays or
                    n.id in self.params or n.id in self.NAMESPACE or
                    (n.id.startswith("_k") and n.id[2:].isdigit())):
                raise InternalError("translation validation: the check line %r reads %s, "
                                    "which nothing defines (a NameError, not the "
                                    "UserError)" % (line, n.id))
