"""Proofs of the sympy bridge (``symshape/contract/sympy_form.py``) for every input: the
code run along every path on symbolic coefficients, constants and range ends.

``sympy.bridge``, by structural induction over the node kinds of a size:

* a symbol's assumptions: ``assumptions`` reads a range only through its two ends, so it
  runs on symbolic ends (``symexec.Ext``: an integer or an infinity, ``lo <= hi``) along
  every path; each flag it declares holds on the whole range and the strongest sign the
  range has is declared (and ``None``, no range, gives ``integer`` only);
* an integer, a sum of terms and a term (a coefficient times atoms): ``to_sympy`` (through
  ``expr.fold``) and ``_plain`` run on sizes whose coefficients and constant are symbolic
  integers (``symcoeff.SInt``), along every path.  sympy sees a symbolic coefficient as an
  integer symbol standing for it (``sympy.Integer(c)`` denotes ``c`` for every int ``c``;
  only the engine's calls of ``sympy.Integer`` are redirected, sympy's own use of its
  numbers is untouched).  Both read a size term by term: the only things they branch on are
  a factor's kind (symbol or operation atom), a coefficient equal to 1 (``_plain``), a
  constant equal to 0 and whether a sum or a product has one member, so ``c*s + k``,
  ``c*s*A + k`` and ``c1*s + c2*A + c3*s*A + k`` (``A`` an operation atom) reach every
  path of every count of terms and factors;
* an operation atom (``FloorDiv``, ``Mod``, ``Min``, ``Max``) with its arguments opaque
  symbols (each argument's own translation is the induction hypothesis: it is translated by
  the same ``to_sympy`` and read back the same way), both forms.  The translations are built
  without ranges (each symbol ``integer`` only): sympy's sums and products do not read the
  sign assumptions, which the first part proves hold on the symbol's range.  ``Min`` / ``Max`` map
  every argument alike (one comprehension, one n-ary sympy call: read from ``_atom``'s code,
  ``proofs/alike.py``) and are run with two and three arguments, so every arity is
  covered.

Each translation is read back into Z3 (``from_sympy``: sympy's sums and products as ring
arithmetic, ``floor(a/b)`` as Python's ``//``, ``Mod`` as ``%``, ``Min`` / ``Max``) and
proven equal to the size's value wherever its divisors are non-zero.

``sympy.public``: ``public`` reads a size only through ``type()``, its free symbols,
``to_sympy`` and the corner-point check ``agrees``; on every size (an int, symbolic; or an
expression, opaque) and every answer of the two checks, what it returns is one of the two
forms ``sympy.bridge`` proves denote the size (or it raises ``InternalError``, publishing
nothing).
"""
from __future__ import annotations

import builtins
import itertools
from contextlib import contextmanager
from typing import Dict, NamedTuple

import z3

from symshape.algebra import expr as E
from symshape.contract import sympy_form as SF
from symshape.errors import InternalError

from . import every, proves
from .alike import read_alike
from .code import Symbols, prove_code
from .pyint import Py, ProofFailure, require, zmax, zmin
from .symcoeff import SInt, divisors_of, encode, patched as coeff_patched, sym_ints
from .symexec import Explorer, interval, patched as ext_patched, raise_on_paths

#: a symbol of the sum node and the opaque arguments of an atom
S, U, V, W = E.Sym(960), E.Sym(961), E.Sym(962), E.Sym(963)


# ---------------------------------------------------------------------------- reading back
def from_sympy(P: Py, e, names: Dict[str, object]):
    """A sympy expression as ``to_sympy`` builds it, read back into Z3 (Python semantics):
    ``names`` maps a symbol's name to its Z3 value."""
    import sympy
    if isinstance(e, sympy.Integer):
        return z3.IntVal(int(e))
    if isinstance(e, sympy.Symbol):
        return names[e.name]
    if isinstance(e, sympy.Add):
        return z3.Sum([from_sympy(P, a, names) for a in e.args])
    if isinstance(e, sympy.Mul):
        if e.as_numer_denom()[1] != 1:
            raise ProofFailure("a fraction outside floor(): %s" % e)
        return z3.Product([from_sympy(P, a, names) for a in e.args])
    if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) > 0:
        return z3.Product([from_sympy(P, e.base, names)] * int(e.exp))
    if isinstance(e, sympy.floor):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        return P.floordiv(from_sympy(P, sympy.expand(num), names),
                          from_sympy(P, sympy.expand(den), names))
    if isinstance(e, sympy.Mod):
        return P.mod(from_sympy(P, e.args[0], names), from_sympy(P, e.args[1], names))
    if isinstance(e, (sympy.Min, sympy.Max)):
        args = [from_sympy(P, a, names) for a in e.args]
        return (zmin if isinstance(e, sympy.Min) else zmax)(*args)
    raise ProofFailure("unexpected sympy node %s (%s)" % (e, type(e).__name__))


# ---------------------------------------------------------------------------- assumptions
class _Range(NamedTuple):
    """A range as ``assumptions`` reads it: its two ends."""
    lower: object
    upper: object


#: the sign predicates of the flags, on a value v
_SIGNS = {"positive": lambda v: v > 0, "nonnegative": lambda v: v >= 0,
          "negative": lambda v: v < 0, "nonpositive": lambda v: v <= 0}


def _everywhere(pred, x, member):
    """``pred`` holds at every member ``x`` of the range."""
    return z3.ForAll([x], z3.Implies(z3.And(*member), pred(x)))


def _assumptions_every() -> None:
    """``assumptions`` on every range (ends symbolic, each an integer or infinite)."""
    lo, hi, wf, x, member = interval("r")
    ex = Explorer(wf)
    with ext_patched(ex) as e, _sf_sees_ext():
        paths = e.paths(lambda: SF.assumptions(_Range(lo, hi)))
    raise_on_paths(paths, "assumptions")
    always = {n: _everywhere(p, x, member) for n, p in _SIGNS.items()}
    # the strongest sign is declared: nonnegative only when not positive, and so on
    want = [always["positive"], z3.And(always["nonnegative"], z3.Not(always["positive"])),
            always["negative"], z3.And(always["nonpositive"], z3.Not(always["negative"]))]
    for pc, flags in paths:
        require(set(flags) <= set(_SIGNS) | {"integer"} and flags.get("integer") is True,
                "assumptions declares %s", flags)
        got = [z3.BoolVal(flags.get(n) is True) for n in _SIGNS]
        prove_code(lambda *v: z3.And(*[a == b for a, b in zip(v, want)]), got, wf, pc,
                   what="assumptions on the path %s: %s" % (z3.And(*pc), flags))
    require(SF.assumptions(None) == {"integer": True}, "assumptions(None) is %s",
            SF.assumptions(None))


@contextmanager
def _sf_sees_ext():
    """``sympy_form`` tests infinity with the explorer's ``is_inf`` (the one ``symexec``
    puts into ``ranges`` while it runs)."""
    from symshape.algebra import ranges as RG
    saved = SF.is_inf
    SF.is_inf = RG.is_inf
    try:
        yield
    finally:
        SF.is_inf = saved


# ---------------------------------------------------------------------------- to_sympy
class _Coeffs:
    """``sympy.Integer`` as the engine calls it while a proof runs: an ``SInt`` becomes an
    integer symbol standing for it (its Z3 value in ``names``), an int stays an Integer."""

    def __init__(self, real) -> None:
        self.real = real
        self.names: Dict[str, object] = {}
        self.count = itertools.count()

    def __call__(self, c):
        if not isinstance(c, SInt):
            return self.real(c)
        import sympy
        name = "coef!%d" % next(self.count)
        self.names[name] = c.v
        return sympy.Symbol(name, integer=True)


def _type(x):
    """``type`` as ``sympy_form`` sees it while a proof runs: an SInt is an int."""
    return int if isinstance(x, SInt) else builtins.type(x)


@contextmanager
def _symbolic_sympy(ex: Explorer):
    """The engine's sympy bridge on SInt coefficients: ``expr`` and ``sympy_form`` see an
    SInt as an int, ``sympy.Integer`` makes it a symbol (``_Coeffs``)."""
    import sympy
    coeffs = _Coeffs(sympy.Integer)
    with coeff_patched(ex, inductive=False):
        SF.type = _type
        sympy.Integer = coeffs
        try:
            yield coeffs
        finally:
            sympy.Integer = coeffs.real
            del SF.type


def _atom_of(kind: str, *args: E.Sym) -> E.OpAtom:
    return E.OpAtom(kind, tuple(a.expr for a in args))


def _term(c1, c2, c3, k):
    """``c*s + k``."""
    return E.Expr({(S,): c1}, k)


def _product(c1, c2, c3, k):
    """``c*s*A + k``."""
    return E.Expr({(S, _atom_of("FloorDiv", U, V)): c1}, k)


def _sum(c1, c2, c3, k):
    """``c1*s + c2*A + c3*s*A + k``."""
    a = _atom_of("Mod", U, V)
    return E.Expr({(S,): c1, (a,): c2, (S, a): c3}, k)


def _const(c1, c2, c3, k):
    """An integer size ``k``."""
    return k


def _atom_node(kind: str, *args: E.Sym):
    def build(c1, c2, c3, k):
        return E.atom_expr(_atom_of(kind, *args))
    build.__doc__ = "the atom %s%s" % (kind, args)
    return build


#: the node kinds, each a builder from the symbolic coefficients (c1, c2, c3, k)
_NODES = (_const, _term, _product, _sum, _atom_node("FloorDiv", U, V),
          _atom_node("Mod", U, V), _atom_node("Min", U, V), _atom_node("Max", U, V),
          _atom_node("Min", U, V, W), _atom_node("Max", U, V, W))


def _to_sympy_every(build, plain: bool) -> int:
    """``to_sympy(x, plain=plain)`` for the node ``build`` makes, on every path of its
    symbolic coefficients: read back, it equals the node's value where defined."""
    c1, c2, c3, k = sym_ints("c1 c2 c3 k")
    hyps = [c1.v != 0, c2.v != 0, c3.v != 0]          # an Expr keeps non-zero terms only
    ex = Explorer(hyps)

    def run():
        x = build(c1, c2, c3, k)
        return x, SF.to_sympy(x, None, plain), dict(coeffs.names)
    with _symbolic_sympy(ex) as coeffs:
        paths = ex.paths(run)
    raise_on_paths(paths, "to_sympy")
    for pc, (x, form, coef_names) in paths:
        P, zs = Py(), Symbols()
        names = {s.name: zs[s] for s in (S, U, V, W)}
        names.update(coef_names)
        want = encode(P, x, zs)
        got = from_sympy(P, form, names)
        defined = [d != 0 for d in divisors_of(P, x, zs)]
        prove_code(lambda v: v == want, [got], hyps, pc, defined, P=P,
                   what="to_sympy(%s, plain=%s) = %s" % (build.__doc__, plain, form))
    return len(paths)


@proves("sympy.bridge", over=every(
    "every size, by structural induction over its node kinds: every integer, every sum of "
    "terms and every term (coefficients and constant symbolic integers; the code branches "
    "only on a factor's kind, a coefficient 1, a constant 0 and one-member sums and "
    "products, all reached by c*s + k, c*s*A + k and c1*s + c2*A + c3*s*A + k), every "
    "FloorDiv / Mod / Min / Max atom with its arguments opaque (Min / Max of any arity: "
    "2 and 3 run, every other by each argument translated alike, read from the code), "
    "both forms (plain or not), along every path "
    "(the symbols built with integer only: the sign assumptions a range adds are proven to "
    "hold on it); and every symbol range (ends symbolic, integer or infinite) for the "
    "assumptions"))
def sympy_bridge():
    read_alike(SF._atom)
    _assumptions_every()
    for build in _NODES:
        _to_sympy_every(build, False)
        _to_sympy_every(build, True)


# ---------------------------------------------------------------------------- public
class _Choose:
    """An opaque yes / no the explorer branches on (a fresh Z3 boolean per call)."""

    def __init__(self, ex: Explorer) -> None:
        self.ex, self.count = ex, itertools.count()

    def __call__(self, *args) -> bool:
        return self.ex.branch(z3.Bool("answer!%d" % next(self.count)))


@contextmanager
def _bridge_by_spec(ex: Explorer):
    """``public``'s callees at their specification: ``to_sympy`` returns a symbol standing
    for a form that denotes its size (``sympy.bridge``), named by which form it is;
    ``agrees`` any answer; the corner points are not looked at (only ``agrees`` reads
    them)."""
    import sympy
    saved = (SF.to_sympy, SF.agrees, SF.corner_points)
    SF.to_sympy = lambda x, ranges=None, plain=False: sympy.Symbol(
        "plain!form" if plain else "eval!form", integer=True)
    SF.agrees = _Choose(ex)
    SF.corner_points = lambda syms, ranges: []
    try:
        yield
    finally:
        SF.to_sympy, SF.agrees, SF.corner_points = saved


@proves("sympy.public", over=every(
    "every size: an int (symbolic) or any expression (opaque: public reads it only through "
    "type(), its free symbols and to_sympy, whose forms denote it by sympy.bridge), and "
    "every answer of the corner-point check on either form, along every path"))
def sympy_public():
    """What users read (``public``) denotes the size at every point: on every path it is
    the size itself (an int), or one of the two forms ``to_sympy`` builds (each proven to
    denote the size for every size by ``sympy.bridge``), or an ``InternalError``."""
    k, = sym_ints("k")
    ex = Explorer()
    with _symbolic_sympy(ex), _bridge_by_spec(ex):
        ints = ex.paths(lambda: SF.public(k))
        exprs = ex.paths(lambda: _published(U.expr))
    raise_on_paths(ints, "public of an int")
    for pc, got in ints:
        prove_code(lambda v: v == k.v, [got.v if isinstance(got, SInt) else z3.IntVal(-1)],
                   pc, what="public(k) is k")
    value = z3.Int(U.name)
    names = {"eval!form": value, "plain!form": value}
    forms = set()
    for pc, got in exprs:
        if isinstance(got, InternalError):
            continue                      # both forms failed the check: nothing published
        if isinstance(got, Exception):
            raise ProofFailure("public raises %s: %s on the path %s" % (
                builtins.type(got).__name__, got, z3.And(*pc)))
        forms.add(str(got))
        require(str(got) in names, "public(x) publishes %r on the path %s", got, z3.And(*pc))
        prove_code(lambda v: v == value, [from_sympy(Py(), got, names)], pc,
                   what="public(x) = %s on the path %s" % (got, z3.And(*pc)))
    require(forms == {"eval!form", "plain!form"}, "public publishes only %s", forms)


def _published(x):
    """``public(x)``, or the ``InternalError`` it raises (published nothing)."""
    try:
        return SF.public(x)
    except InternalError as e:
        return e
