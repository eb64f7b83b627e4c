"""Generated check code parsed back and executed symbolically over Z3 integers.

``CheckCode`` reads the straight-line ``ss.check`` lines (``render_python.render_size_checks``)
and a branch's own checks; ``CheckText`` reads the whole input check as ``module()`` and the
compiled forms run it (``PyRenderer``'s lines), so that ``validate.validate_check_text``
proves the *text* equivalent to the contract's one meaning (``meaning.admitted``).
Validation never guesses: a statement it cannot read is an ``InternalError``.
"""
from __future__ import annotations

import ast
import functools
from typing import Dict, Iterable, List, Optional

from symshape.errors import InternalError
from symshape.reasoning.z3bridge import z3mod
from symshape.contract.meaning import py_divmod


@functools.lru_cache(maxsize=4096)
def parse(line: str) -> tuple:
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
            for stmt in parse(line):
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
