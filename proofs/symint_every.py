"""``symint.operators`` for every operand: ``SymInt``'s operators run along every path on
opaque sizes, symbolic ints and symbolic example values.

What the operators read, and how each is covered:

* a size operand only through its expression and its example value (``_parts``): the
  expression is opaque (a symbol standing for any expression: the operator hands it to the
  expression layer whole), the example value a symbolic integer or unknown (``None``, a
  data-dependent size), each explored;
* an int operand (a symbolic integer, ``symcoeff.SInt``, which ``symint`` and ``expr`` see
  as an ``int`` while the proof runs; a NumPy integer is read as ``int(x)``, this case), a
  bool (read as ``int(b)``: both values) and another size: a backed one, an unbacked one
  (a divisor's guard is then a run-time check), or the very same size (so the expression
  layer may return an int);
* the operations themselves: ``E.add`` / ``E.sub`` / ``E.mul`` / ``E.neg`` run as written on
  the opaque operands; ``E.floordiv`` / ``E.mod`` and ``E.smin`` / ``E.smax`` are taken at
  their specification (the operation's own atom: ``a // b``, ``a % b``, ``min``, ``max``,
  proven by the ``floordiv.*``, ``mod.*``, ``minmax.*`` and ``fold.minmax_*`` proofs), and so
  is the environment: ``evaluate`` may answer either way, true meaning the condition holds
  on every admitted point and (with an example value) at the example (``env.evaluate``'s
  proof), ``check`` records its condition and ``simplify`` keeps the value.

Every operator (``+ - * // %`` on either side, ``divmod``, unary ``-``, ``abs``, ``sym_min`` /
``sym_max`` with two or three operands or one list) on every kind of operand: the result
denotes Python's operation on the values (a divisor non-zero), its example value is the
operation on the example values (unknown when one is), a size divisor is sent to the
environment as exactly ``b != 0`` (a check when it has an unbacked symbol) with its example's
truth, an int divisor is not, and where the example divisor is 0 the operator raises as
Python does.
"""
from __future__ import annotations

import builtins
import itertools
import operator
from contextlib import contextmanager

import z3

from symshape.algebra import expr as E
from symshape.sizes import symint as SI
from symshape.sizes.symint import SymInt, sym_max, sym_min

from . import every, proves
from .alike import read_alike
from .code import Symbols, prove_code
from .pyint import OpaqueDivMod, ProofFailure, prove, require, zmax, zmin
from .symcoeff import SInt, encode, encode_cond, patched as coeff_patched, value
from .symexec import Explorer

#: the size under test, another backed size and an unbacked one (each stands for any
#: expression: the operators never look inside)
A, B, UB = E.Sym(970), E.Sym(971), E.Sym(972, unbacked=True)

#: operator name -> Python's operation on Z3 values (P: the quotients' context)
_PY = {"add": lambda P, a, b: a + b, "sub": lambda P, a, b: a - b,
       "mul": lambda P, a, b: a * b, "floordiv": lambda P, a, b: P.floordiv(a, b),
       "mod": lambda P, a, b: P.mod(a, b)}
_DIVISIONS = ("floordiv", "mod")


class _IntView:
    """``int`` as ``symint`` sees it while the proof runs: ``int(x)`` converts, and
    ``int.__add__`` ... (the example values' operations) are Python's operators, so they
    compute on symbolic example values too."""

    def __init__(self) -> None:
        for name in ("add", "sub", "mul", "floordiv", "mod"):
            setattr(self, "__%s__" % name, getattr(operator, name))

    def __call__(self, x):
        return builtins.int(x)


_INT = _IntView()


def _type(x):
    """``type`` as ``symint`` sees it: an SInt (and an int) is ``_INT``, its ``int``."""
    if isinstance(x, SInt) or builtins.type(x) is builtins.int:
        return _INT
    return builtins.type(x)


class _Answer:
    """``evaluate``'s answer: either truth value, chosen when the code reads it."""

    def __init__(self, env, c, hint) -> None:
        self.env, self.c, self.hint, self.taken = env, c, hint, None

    def __bool__(self) -> bool:
        if self.taken is None:
            self.taken = self.env.ex.branch(z3.Bool("answer!%d" % next(self.env.count)))
        return self.taken


class _Env:
    """The environment at its specification (see the module docstring): records what it
    is asked."""
    ufunc_hook = repeat_hook = None

    def __init__(self, ex: Explorer) -> None:
        self.ex, self.count, self.asked = ex, itertools.count(), []

    def evaluate(self, c, hint=None, frame=None):
        got = _Answer(self, c, hint)
        self.asked.append(("evaluate", got))
        return got

    def check(self, c, hint=None, message=None, frame=None):
        self.asked.append(("check", _Answer(self, c, hint)))

    def simplify(self, e):
        return e


@contextmanager
def _symbolic(ex: Explorer):
    """``symint`` and ``expr`` see SInt as an int; ``//``, ``%``, Min and Max are their
    atoms (their specification, see the module docstring)."""
    saved = (E.smin, E.smax, E.floordiv, E.mod)
    with coeff_patched(ex, inductive=False):
        SI.type, SI.int = _type, _INT
        E.smin = lambda *args: E.atom_expr(E.OpAtom("Min", tuple(args)))
        E.smax = lambda *args: E.atom_expr(E.OpAtom("Max", tuple(args)))
        E.floordiv, E.mod = _division("FloorDiv"), _division("Mod")
        try:
            yield
        finally:
            del SI.type, SI.int
            E.smin, E.smax, E.floordiv, E.mod = saved


def _division(kind: str):
    """``expr.floordiv`` / ``expr.mod`` at their specification: an int divisor 0 raises
    ``ZeroDivisionError`` (the code's first test), any other divisor gives the operation's
    atom (its value ``a // b`` / ``a % b``: the ``floordiv.*`` / ``mod.*`` proofs)."""
    def spec(a, b):
        if isinstance(b, (int, SInt)) and b == 0:
            raise ZeroDivisionError("integer division or modulo by zero")
        return E.atom_expr(E.OpAtom(kind, (a, b)))
    return spec


def _hint(ex: Explorer, name: str):
    """A symbolic example value, or None (unknown): both explored."""
    return SInt(z3.Int(name)) if ex.branch(z3.Bool(name + "!known")) else None


def _int(ex: Explorer, env, x: SymInt):
    """A symbolic int."""
    return SInt(z3.Int("k"))


def _true(ex: Explorer, env, x: SymInt):
    """``True`` (read as 1)."""
    return True


def _false(ex: Explorer, env, x: SymInt):
    """``False`` (read as 0)."""
    return False


def _backed(ex: Explorer, env, x: SymInt):
    """Another size, backed (example value symbolic or unknown)."""
    return SymInt(B.expr, _hint(ex, "hb"), env)


def _unbacked(ex: Explorer, env, x: SymInt):
    """A data-dependent size (an unbacked symbol)."""
    return SymInt(UB.expr, _hint(ex, "hb"), env)


def _same(ex: Explorer, env, x: SymInt):
    """The very same size."""
    return SymInt(x.expr, x.hint, env)


#: the other operand's kinds, each a builder (see the module docstring)
_KINDS = (_int, _true, _false, _backed, _unbacked, _same)


class _Functions(OpaqueDivMod):
    """``//`` and ``%`` of the sizes' values as uninterpreted functions (``OpaqueDivMod``):
    the result's atom and the operation the claim wants are the same application, a claim
    proven for every function holds for Python's (the example values' quotients keep their
    definitions: they are the explorer's own)."""


class _Claims:
    """Claims of explorations, proven together: on each path, under its condition and its
    own hypotheses, the code's output term equals the wanted one."""

    def __init__(self) -> None:
        self.P, self.zs = _Functions(), Symbols()
        self.got, self.want, self.side = [], [], []

    def val(self, x):
        """The value of an operand or a result (a size's expression, an int, a bool)."""
        if isinstance(x, SymInt):
            return encode(self.P, x.expr, self.zs)
        return z3.IntVal(int(x)) if isinstance(x, bool) else value(x)

    def add(self, pc, hyps, got, want) -> None:
        self.got.append(got)
        self.want.append((z3.And(*pc, *hyps), want))

    def explored(self, ex: Explorer) -> None:
        """The explorer ``ex``'s quotients (the example values') are defined."""
        self.side += ex.P.side

    def prove(self, what: str) -> None:
        """Prove the claims (each explorer's quotients defined)."""
        wants = self.want
        if not wants:
            return        # every path raised as Python does (a divisor 0): shown already
        prove_code(lambda *vs: z3.And(*[z3.Implies(h, v == w) for (h, w), v in zip(wants, vs)]),
                   self.got, self.side, P=self.P, what=what)


def _hint_of(x):
    """An operand's example value (an SInt, an int, or None)."""
    if isinstance(x, SymInt):
        return x.hint
    return builtins.int(x) if isinstance(x, bool) else x


def _raises_as_python(pc, divides: bool, hb, err, what: str) -> None:
    """A path that raised: only a division whose example divisor is 0 (Python raises)."""
    if not (divides and isinstance(err, ZeroDivisionError) and hb is not None):
        raise ProofFailure("%s raises %s: %s on the path %s"
                           % (what, builtins.type(err).__name__, err, z3.And(*pc)))
    prove(value(hb) == 0, *pc, what="%s raises only where the example divisor is 0" % what)


def _binop_every(cl: "_Claims", name: str, reverse: bool, kind) -> None:
    """``x.__op__(o)`` (``__rop__`` when ``reverse``) for ``o`` that ``kind`` builds, every
    path: its claims go to ``cl``."""
    ex = Explorer()
    dunder = "__%s%s__" % ("r" if reverse else "", name)

    def run():
        env = _Env(ex)
        x = SymInt(A.expr, _hint(ex, "ha"), env)
        o = kind(ex, env, x)
        try:
            return x, o, getattr(x, dunder)(o), env.asked
        except ZeroDivisionError as e:
            return x, o, e, env.asked
    with _symbolic(ex):
        paths = ex.paths(run)
    cl.explored(ex)
    what = "SymInt.%s with %s" % (dunder, kind.__name__)
    divides = name in _DIVISIONS
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("%s raises %s on the path %s" % (what, got, z3.And(*pc)))
        x, o, r, asked = got
        a, b = (o, x) if reverse else (x, o)
        if isinstance(r, ZeroDivisionError):
            _raises_as_python(pc, divides, _hint_of(b), r, what)
            continue
        av, bv = cl.val(a), cl.val(b)
        nonzero = [bv != 0] if divides else []
        cl.add(pc, nonzero, cl.val(r), _PY[name](cl.P, av, bv))
        _hint_claim(cl, pc, r, lambda P, u, v: _PY[name](ex.P, u, v), _hint_of(a),
                    _hint_of(b), what)
        _divisor_claim(cl, pc, divides, b, bv, asked, what)


def _hint_claim(cl: _Claims, pc, r, py, ha, hb, what: str, hyps=()) -> None:
    """The result's example value is the operation on the operands' (None if one is), on
    the path ``pc`` under ``hyps``."""
    if not isinstance(r, SymInt):
        return            # an int result is its own value everywhere, the example included
    if ha is None or hb is None:
        require(r.hint is None, "%s: an example value %s from an unknown one", what, r.hint)
        return
    require(r.hint is not None, "%s: the example value is lost", what)
    cl.add(pc, list(hyps), value(r.hint), py(cl.P, value(ha), value(hb)))


def _divisor_claim(cl: _Claims, pc, divides: bool, b, bv, asked, what: str,
                   times: int = 1) -> None:
    """A size divisor goes to the environment as ``b != 0`` (a check when unbacked), with its
    example's truth, once per division (``times``); nothing else is asked."""
    if not (divides and isinstance(b, SymInt)):
        require(not asked, "%s asks the environment %s", what, asked)
        return
    require(len(asked) == times, "%s asks the environment %d times", what, len(asked))
    for how, ans in asked:
        _guard_claim(cl, pc, b, bv, how, ans, what)


def _guard_claim(cl: _Claims, pc, b, bv, how, ans, what: str) -> None:
    """One guard of the size divisor ``b``: ``b != 0``, by the right means, its example's
    truth."""
    unbacked = any(s.unbacked for s in b.expr.free_symbols)
    require(how == ("check" if unbacked else "evaluate"), "%s: the divisor's guard by %s",
            what, how)
    cl.add(pc, [], encode_cond(cl.P, ans.c, cl.zs), bv != 0)
    if b.hint is None:
        require(ans.hint is None, "%s: the guard's example from an unknown one", what)
    else:
        cl.add(pc, [], z3.BoolVal(ans.hint is True), value(b.hint) != 0)


def _divmod_every(cl: "_Claims", kind) -> None:
    """``divmod(x, o)`` for ``o`` that ``kind`` builds: ``(x // o, x % o)``, every path; its
    claims go to ``cl``."""
    ex = Explorer()

    def run():
        env = _Env(ex)
        x = SymInt(A.expr, _hint(ex, "ha"), env)
        o = kind(ex, env, x)
        try:
            return x, o, divmod(x, o), env.asked
        except ZeroDivisionError as e:
            return x, o, e, env.asked
    with _symbolic(ex):
        paths = ex.paths(run)
    cl.explored(ex)
    what = "divmod(SymInt, %s)" % kind.__name__
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("%s raises %s on the path %s" % (what, got, z3.And(*pc)))
        x, o, out, asked = got
        if isinstance(out, ZeroDivisionError):
            _raises_as_python(pc, True, _hint_of(o), out, what)
            continue
        xv, ov = cl.val(x), cl.val(o)
        for r, name in zip(out, _DIVISIONS):
            cl.add(pc, [ov != 0], cl.val(r), _PY[name](cl.P, xv, ov))
            _hint_claim(cl, pc, r, lambda P, u, v, name=name: _PY[name](ex.P, u, v), x.hint,
                        _hint_of(o), what)
        _divisor_claim(cl, pc, True, o, ov, asked, what, times=2)


def _unary_every() -> None:
    """``-x`` and ``abs(x)`` on every path (example value known or not, every answer)."""
    ex = Explorer()

    def run():
        env = _Env(ex)
        x = SymInt(A.expr, _hint(ex, "ha"), env)
        return x, -x, abs(x), env.asked
    with _symbolic(ex):
        paths = ex.paths(run)
    cl = _Claims()
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("-x / abs(x) raises %s on the path %s" % (got, z3.And(*pc)))
        x, neg, ab, asked = got
        xv = cl.val(x)
        cl.add(pc, [], cl.val(neg), -xv)
        _hint_claim(cl, pc, neg, lambda P, a, b: -a, x.hint, 0, "-x")
        require(len(asked) == 1 and asked[0][0] == "evaluate", "abs asks %s", asked)
        ans = asked[0][1]
        holds = encode_cond(cl.P, ans.c, cl.zs)
        # the answer's specification: true iff the condition holds on the contract, and
        # (given an example) at the example
        spec = [holds if ans.taken else z3.Not(holds)]
        if x.hint is not None:
            spec.append(z3.BoolVal(ans.hint is ans.taken))
        cl.add(pc, spec, cl.val(ab), z3.If(xv >= 0, xv, -xv))
        _hint_claim(cl, pc, ab, lambda P, a, b: z3.If(a >= 0, a, -a), x.hint, 0, "abs(x)",
                    spec)
    cl.explored(ex)
    cl.prove("SymInt -x, abs(x) on %d paths" % len(paths))


def _minmax_every(kind: str) -> None:
    """``sym_min`` / ``sym_max`` of the size with another operand of ``kind`` (two
    operands, three with an int, and one list of two), every path."""
    ex = Explorer()
    fn, z = (sym_min, zmin) if kind == "min" else (sym_max, zmax)

    def run(shape):
        env = _Env(ex)
        x = SymInt(A.expr, _hint(ex, "ha"), env)
        o = shape[1](ex, env, x)
        args = (x, o, SInt(z3.Int("k3"))) if shape[0] == "three" else (x, o)
        return args, (fn([x, o]) if shape[0] == "list" else fn(*args))
    cl = _Claims()
    count = 0
    for other in _KINDS:
        for arity in ("list", "two", "three"):
            with _symbolic(ex):
                paths = ex.paths(lambda: run((arity, other)))
            for pc, got in paths:
                if isinstance(got, Exception):
                    raise ProofFailure("sym_%s raises %s" % (kind, got))
                args, r = got
                cl.add(pc, [], cl.val(r), z(*[cl.val(a) for a in args]))
                hints = [_hint_of(a) for a in args]
                if isinstance(r, SymInt) and None not in hints:
                    cl.add(pc, [], value(r.hint), z(*[value(h) for h in hints]))
                elif isinstance(r, SymInt):
                    require(r.hint is None, "sym_%s: an example from unknown ones", kind)
            count += len(paths)
    cl.explored(ex)
    cl.prove("sym_%s on %d paths" % (kind, count))


@proves("symint.operators", over=every(
    "every operator (+ - * // % on either side, divmod, unary -, abs, sym_min / sym_max of any "
    "number of operands or a list: two and three run, every other number by the code's one "
    "pass reading each operand alike, read from its code) on every operand the code reads: a size (expression opaque, "
    "example value symbolic or unknown; backed, unbacked, or the same size), a symbolic int "
    "or a bool, along every path; // % Min Max and the environment at their proven "
    "specification"))
def symint_operators():
    for name in _PY:            # one query per operator: its claims on every operand
        cl = _Claims()
        for reverse in (False, True):
            for kind in _KINDS:
                _binop_every(cl, name, reverse, kind)
        cl.prove("SymInt %s on every operand" % name)
    cl = _Claims()
    for kind in _KINDS:
        _divmod_every(cl, kind)
    cl.prove("divmod(SymInt, o) on every operand")
    _unary_every()
    read_alike(SI._sym_minmax)
    _minmax_every("min")
    _minmax_every("max")
