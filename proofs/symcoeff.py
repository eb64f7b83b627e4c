"""The expression layer's own code (``symshape/algebra/expr.py``) run on expressions whose
*coefficients, constants and divisors* are symbolic: proofs for every integer value of them,
not for a grid.

``SInt`` is a Python integer whose value is a Z3 term.  Its arithmetic builds Z3 terms
(``//`` and ``%`` with Python's floor semantics, ``proofs/pyint.py``); a comparison or a
truth test that the path so far does not decide *branches* through ``symexec.Explorer``,
which runs the code once per feasible outcome of every branch (replaying the decisions made
so far).  ``patched(explorer)`` makes ``expr.py`` see ``SInt`` as an ``int`` (its
``type(x) is int`` tests answer True) and computes its ``gcd`` symbolically: the fresh ``g``
with ``g >= 0``, ``g`` dividing both arguments and ``g`` a combination ``a*u + b*v`` of them
(which pins ``gcd(a, b)`` exactly).  Nothing of the code is restated: ``floordiv``, ``mod``,
``smin`` ... run as written, along every path.

A proof then builds an input over a *grammar* (terms of fixed atoms with symbolic
coefficients), runs the code along every path and proves, on each path, that the output
means what the operation means (``prove_paths``).
"""
from __future__ import annotations

import builtins
from contextlib import contextmanager
from typing import Callable, List, Sequence

import z3

from symshape.algebra import expr as E
from symshape.algebra import relations as R

from .code import prove_code
from .pyint import RLIMIT, ProofFailure, Py, zmax, zmin
from .symexec import Explorer, TrackedPy

__all__ = ["SInt", "patched", "sym_ints", "encode", "prove_paths", "value"]

_CURRENT: List[Explorer] = []


def _ex() -> Explorer:
    return _CURRENT[-1]


def value(x):
    """The Z3 term of an SInt or a Python int (public name of ``_v``)."""
    return _v(x)


def _v(x):
    """The Z3 term of an SInt or a Python int."""
    if isinstance(x, SInt):
        return x.v
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError("not an integer: %r" % (x,))
    return z3.IntVal(x)


class SInt:
    """A symbolic Python integer (see the module docstring)."""

    __slots__ = ("v",)

    def __init__(self, v) -> None:
        self.v = v

    # comparisons branch --------------------------------------------------------
    def __eq__(self, o):
        if not isinstance(o, (int, SInt)) or isinstance(o, bool):
            return False
        return _ex().branch(self.v == _v(o))

    def __ne__(self, o):
        return not self.__eq__(o)

    def __lt__(self, o):
        return _ex().branch(self.v < _v(o))

    def __le__(self, o):
        return _ex().branch(self.v <= _v(o))

    def __gt__(self, o):
        return _ex().branch(self.v > _v(o))

    def __ge__(self, o):
        return _ex().branch(self.v >= _v(o))

    def __bool__(self):
        return _ex().branch(self.v != 0)

    # one hash for every symbolic value: a dict or a tuple comparison falls through to
    # ``==``, which branches (equal keys are never told apart by their hash)
    def __hash__(self):
        return 0

    # arithmetic ----------------------------------------------------------------
    def __add__(self, o):
        return SInt(self.v + _v(o))

    __radd__ = __add__

    def __sub__(self, o):
        return SInt(self.v - _v(o))

    def __rsub__(self, o):
        return SInt(_v(o) - self.v)

    def __mul__(self, o):
        return SInt(self.v * _v(o))

    __rmul__ = __mul__

    def __neg__(self):
        return SInt(-self.v)

    def __pos__(self):
        return self

    def __abs__(self):
        return -self if self < 0 else self

    def _divisor(self, o):
        if _ex().branch(_v(o) == 0):
            raise ZeroDivisionError("integer division or modulo by zero")
        return _v(o)

    def __floordiv__(self, o):
        return SInt(_ex().P.floordiv(self.v, self._divisor(o)))

    def __rfloordiv__(self, o):
        return SInt(_v(o)).__floordiv__(self)

    def __mod__(self, o):
        return SInt(_ex().P.mod(self.v, self._divisor(o)))

    def __rmod__(self, o):
        return SInt(_v(o)).__mod__(self)

    def __divmod__(self, o):
        return self // o, self % o

    def __rdivmod__(self, o):
        return SInt(_v(o)).__divmod__(self)

    def __repr__(self) -> str:
        return "SInt(%s)" % self.v


def _type(x):
    """``type`` as ``expr.py`` sees it while patched: an SInt is an ``int``."""
    return int if isinstance(x, SInt) else builtins.type(x)


def _gcd(a, b):
    """``math.gcd(a, b)`` of SInts / ints, over-approximated: a fresh ``g >= 0`` dividing
    both (the true gcd is one such ``g``, so every path the code takes for it is explored;
    the rewrites it guards hold for any common divisor)."""
    if not isinstance(a, SInt) and not isinstance(b, SInt):
        import math
        return math.gcd(a, b)
    P = _ex().P
    g, x, y = (P._fresh(n) for n in ("gcd", "gx", "gy"))
    P.side.extend([g >= 0, _v(a) == g * x, _v(b) == g * y])
    return SInt(g)


def _opaque(kind: str, real: Callable, always: bool) -> Callable:
    """``real`` (``floordiv`` / ``mod``) for the outermost call; a recursive call returns
    the operation's own atom, which means its Python value: the induction hypothesis of a
    proof of one rewrite step (each recursive call is on a smaller input: a positive
    divisor, a divisor divided by a gcd above 1, one nesting level less)."""
    depth = [1 if always else 0]

    def call(a, b):
        if depth[0]:
            return E.atom_expr(E.OpAtom(kind, (a, b)))
        depth[0] += 1
        try:
            return real(a, b)
        finally:
            depth[0] -= 1
    return call


@contextmanager
def patched(explorer: Explorer, inductive: bool = True, opaque: bool = False):
    """``symshape.algebra.expr`` sees ``SInt`` as an int and computes ``gcd`` on it while
    ``explorer`` runs it; ``inductive``: recursive ``floordiv`` / ``mod`` calls are their
    specification (``_opaque``); ``opaque``: every call is (for a rule built on them, like
    ``ceildiv``, whose proof assumes theirs)."""
    saved = {n: vars(E)[n] for n in ("gcd", "floordiv", "mod")}
    _CURRENT.append(explorer)
    E.type = R.type = _type     # module globals shadow the builtin while the proof runs
    E.gcd = _gcd
    if inductive:
        E.floordiv = _opaque("FloorDiv", saved["floordiv"], opaque)
        E.mod = _opaque("Mod", saved["mod"], opaque)
    try:
        yield explorer
    finally:
        del E.type, R.type
        for n, f in saved.items():
            setattr(E, n, f)
        _CURRENT.pop()


def sym_ints(names: str) -> List[SInt]:
    """Fresh symbolic integers, one per name."""
    return [SInt(z3.Int(n)) for n in names.split()]


def encode(P: Py, x, zs, opaque=None):
    """The Z3 term of an expression with SInt (or int) coefficients; ``zs`` maps ``Sym``
    to Z3 integers (``proofs.code.Symbols``); ``opaque`` maps ``id(atom)`` of input atoms
    to Z3 integers standing for their value (any value: a claim proven so holds for the
    atom's own)."""
    def atom(a):
        if opaque and id(a) in opaque:
            return opaque[id(a)]
        args = [encode(P, y, zs, opaque) for y in a.args]
        if a.kind == "FloorDiv":
            return P.floordiv(*args)
        if a.kind == "Mod":
            return P.mod(*args)
        return (zmin if a.kind == "Min" else zmax)(*args)
    if isinstance(x, (int, SInt)):
        return _v(x)
    total = _v(x.const)
    for term, c in x.terms:
        prod = _v(c)
        for a in term:
            prod = prod * (zs[a] if builtins.type(a) is E.Sym else atom(a))
        total = total + prod
    return total


def encode_cond(P: Py, c, zs, opaque=None):
    """A relation the code returned (``Rel`` over SInt coefficients, or a bool) as a Z3
    formula."""
    if isinstance(c, bool):
        return z3.BoolVal(c)
    e = encode(P, c.expr, zs, opaque)
    return e == 0 if c.op == "==" else (e != 0 if c.op == "!=" else e <= 0)


def divisors_of(P: Py, x, zs) -> List:
    """The divisor of every FloorDiv / Mod atom in ``x`` (SInt coefficients allowed)."""
    out = []
    if isinstance(x, (int, SInt, bool)):
        return out
    if isinstance(x, R.Rel):
        x = x.expr
    for term, _ in x.terms:
        for a in term:
            if builtins.type(a) is E.OpAtom:
                for y in a.args:
                    out += divisors_of(P, y, zs)
                if a.kind in ("FloorDiv", "Mod"):
                    out.append(encode(P, a.args[1], zs))
    return out


def prove_paths(run: Callable[[], tuple], want: Callable[[Py, Callable], object],
                hyps: Sequence, zs, what: str, check: Callable = None,
                opaque: bool = False, nonzero: Callable = None, rlimit: int = RLIMIT) -> int:
    """Run ``run()`` (the code on symbolic inputs; it returns the output and a dict of the
    input's op atoms by name) along every feasible path under ``hyps`` and prove, on each,
    that the output equals ``want(P, atom)`` (a Z3 term of the operation's Python meaning;
    ``atom(name)`` is the value of an input atom) and performs no division the input did not
    (each divisor of the output non-zero).  The claim is tried first with the input's atoms
    as arbitrary integers (a stronger claim, and linear), then with their definitions.
    ``check(out)`` may add structural claims per path (Z3 formulas proven with it, e.g.
    a normal form's lead coefficient positive); ``nonzero(P, atom)``
    adds hypotheses on the inputs' values (an expression divisor non-zero).  A feasible path that
    raises is a failure.  Returns the number of paths."""
    ex = Explorer(hyps)

    def one_path():         # each path its own quotients: no other path's side conditions
        ex.P = TrackedPy()
        out, atoms = run()
        return out, atoms, ex.P
    with patched(ex, opaque=opaque):
        paths = ex.paths(one_path)
    for pc, got in paths:
        if isinstance(got, Exception):
            raise ProofFailure("%s: raises %s: %s on the feasible path %s"
                               % (what, builtins.type(got).__name__, got, z3.And(*pc)))
        out, atoms, ex.P = got
        where = "%s (path %s)" % (what, z3.And(*pc) if pc else "True")
        free = {id(a): z3.Int("atom!%s" % n) for n, a in atoms.items()}
        try:        # first with the input's atoms as arbitrary values (linear, fast)
            _prove_path(ex, out, want, atoms, zs, hyps, pc, free, where, nonzero, rlimit,
                        check)
        except (ProofFailure, z3.Z3Exception):   # (no model to print for a counterexample)
            if not free:
                raise
            _prove_path(ex, out, want, atoms, zs, hyps, pc, None, where, nonzero, rlimit,
                        check)
    return len(paths)


def _prove_path(ex: Explorer, out, want, atoms, zs, hyps, pc, opaque, where: str,
                nonzero, rlimit: int, check) -> None:
    P = ex.P
    got = (encode_cond if isinstance(out, (bool, R.Rel)) else encode)(P, out, zs, opaque)
    defined = [d != 0 for d in divisors_of(P, out, zs)]

    def atom(name):
        return encode(P, E.atom_expr(atoms[name]), zs, opaque)
    goal = want(P, atom)
    extra = list(nonzero(P, atom)) if nonzero is not None else []
    shape = list(check(out)) if check is not None else []
    prove_code(lambda v: z3.And(v == goal, *defined, *shape), [got], list(hyps), pc, extra, P=P,
               what=where, rlimit=rlimit)
