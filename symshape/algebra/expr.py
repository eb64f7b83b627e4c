"""Integer size expressions in a canonical polynomial form.

An ``Expr`` is ``const + sum(coeff * term)`` where a *term* is a sorted tuple of *atoms*
(repetition = power) and an atom is a ``Sym`` or an operation that polynomials cannot
express: ``FloorDiv``, ``Mod``, ``Min``, ``Max``.  Every constructor in this module returns
a plain ``int`` when its result is constant, so concrete sizes never become ``Expr``.

Invariants (relied on by hashing, caching and the decision procedure):
  * terms are sorted by term key, have non-zero coefficients, and are unique;
  * an Expr has at least one term (otherwise it is an int);
  * atoms are built only through the simplifying constructors below, so two
    structurally different atoms are at least not *syntactically* equal after
    the rules in ``RULES`` (each of which has a Z3 proof in ``proofs/``).

Semantics are Python's: ``//`` floors, ``%`` takes the divisor's sign.  This module knows
nothing about value ranges; range-dependent simplification lives in ``simplify.py``.
"""
from __future__ import annotations

from math import gcd
from typing import Callable, Dict, Iterable, Mapping, Optional, Tuple, Union

from symshape.rules import rule

IntLike = Union[int, "Expr"]


# --------------------------------------------------------------------------- atoms
class Atom:
    """A factor of a polynomial term.  ``key`` totally orders atoms."""

    __slots__ = ("key", "_hash")

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Atom) and self._hash == other._hash
                                 and self.key == other.key)

    def __lt__(self, other: "Atom") -> bool:
        return self.key < other.key


class Sym(Atom):
    """A size symbol: ``s<i>`` (backed: has an example value) or ``u<i>`` (unbacked)."""

    __slots__ = ("name", "index", "unbacked", "_expr")

    def __init__(self, index: int, unbacked: bool = False) -> None:
        self.index = index
        self.unbacked = unbacked
        self.name = ("u" if unbacked else "s") + str(index)
        self.key = (0, 1 if unbacked else 0, index)
        self._hash = hash(self.key)
        self._expr: Optional[Expr] = None

    @property
    def expr(self) -> "Expr":
        if self._expr is None:
            self._expr = Expr({(self,): 1}, 0)
        return self._expr

    def __repr__(self) -> str:
        return self.name


def _arg_key(x: IntLike) -> tuple:
    # ints sort before expressions: Min(16, s3)
    return (0, x) if type(x) is int else (1, x.key)


class OpAtom(Atom):
    """An operation atom: ``kind`` in FloorDiv, Mod, Min, Max; ``args`` ints or Exprs."""

    __slots__ = ("kind", "args")
    _ORDER = {"FloorDiv": 1, "Mod": 2, "Min": 3, "Max": 4}

    def __init__(self, kind: str, args: Tuple[IntLike, ...]) -> None:
        self.kind = kind
        self.args = args
        self.key = (self._ORDER[kind], tuple(_arg_key(a) for a in args))
        self._hash = hash(self.key)

    def __repr__(self) -> str:
        return format_atom(self, default_name)


# --------------------------------------------------------------------------- Expr
Term = Tuple[Atom, ...]


def _term_key(term: Term) -> tuple:
    return tuple(a.key for a in term)


class Expr:
    """A non-constant integer polynomial over atoms.  Immutable and hashable."""

    __slots__ = ("terms", "const", "key", "_hash", "_free")

    def __init__(self, coeffs: Mapping[Term, int], const: int) -> None:
        items = sorted(((t, c) for t, c in coeffs.items() if c), key=lambda tc: _term_key(tc[0]))
        self.terms: Tuple[Tuple[Term, int], ...] = tuple(items)
        self.const = const
        self.key = (tuple((_term_key(t), c) for t, c in items), const)
        self._hash = hash(self.key)
        self._free: Optional[frozenset] = None

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is Expr and self._hash == other._hash
                                 and self.key == other.key)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __repr__(self) -> str:
        return format_expr(self)

    __str__ = __repr__

    # structure -----------------------------------------------------------------
    @property
    def free_symbols(self) -> frozenset:
        if self._free is None:
            out = set()
            for term, _ in self.terms:
                for atom in term:
                    if type(atom) is Sym:
                        out.add(atom)
                    else:
                        for a in atom.args:
                            if type(a) is Expr:
                                out |= a.free_symbols
            self._free = frozenset(out)
        return self._free

    def as_symbol(self) -> Optional[Sym]:
        """The symbol if this Expr is exactly one symbol, else None."""
        if self.const == 0 and len(self.terms) == 1:
            term, c = self.terms[0]
            if c == 1 and len(term) == 1 and type(term[0]) is Sym:
                return term[0]
        return None

    def as_atom(self) -> Optional[Atom]:
        if self.const == 0 and len(self.terms) == 1:
            term, c = self.terms[0]
            if c == 1 and len(term) == 1:
                return term[0]
        return None

    def is_linear(self) -> bool:
        """True when every term is a single symbol (no products, no op atoms)."""
        return all(len(t) == 1 and type(t[0]) is Sym for t, _ in self.terms)

    def linear_coeffs(self) -> Optional[Dict[Sym, int]]:
        if not self.is_linear():
            return None
        return {t[0]: c for t, c in self.terms}

    def coeff_gcd(self) -> int:
        g = 0
        for _, c in self.terms:
            g = gcd(g, c)
        return g

    # Python operators build canonical forms (used inside the engine only; user code
    # sees SymInt, whose comparisons go through the shape environment instead).
    def __add__(self, o: IntLike) -> IntLike:
        return add(self, o)

    __radd__ = __add__

    def __sub__(self, o: IntLike) -> IntLike:
        return add(self, neg(o))

    def __rsub__(self, o: IntLike) -> IntLike:
        return add(o, neg(self))

    def __mul__(self, o: IntLike) -> IntLike:
        return mul(self, o)

    __rmul__ = __mul__

    def __neg__(self) -> IntLike:
        return neg(self)

    def __floordiv__(self, o: IntLike) -> IntLike:
        return floordiv(self, o)

    def __rfloordiv__(self, o: IntLike) -> IntLike:
        return floordiv(o, self)

    def __mod__(self, o: IntLike) -> IntLike:
        return mod(self, o)

    def __rmod__(self, o: IntLike) -> IntLike:
        return mod(o, self)


def _make(coeffs: Dict[Term, int], const: int) -> IntLike:
    if not any(coeffs.values()):
        return const
    return Expr(coeffs, const)


def _parts(x: IntLike) -> Tuple[Dict[Term, int], int]:
    if type(x) is int:
        return {}, x
    return dict(x.terms), x.const


def atom_expr(atom: Atom) -> "Expr":
    return atom.expr if type(atom) is Sym else Expr({(atom,): 1}, 0)


# --------------------------------------------------------------------------- ring ops
def add(a: IntLike, b: IntLike) -> IntLike:
    if type(a) is int:
        if type(b) is int:
            return a + b
        a, b = b, a
    if type(b) is int:
        if b == 0:
            return a
        return Expr(dict(a.terms), a.const + b)
    coeffs = dict(a.terms)
    for t, c in b.terms:
        coeffs[t] = coeffs.get(t, 0) + c
    return _make(coeffs, a.const + b.const)


def neg(a: IntLike) -> IntLike:
    return scale(a, -1)


def sub(a: IntLike, b: IntLike) -> IntLike:
    return add(a, neg(b))


def scale(a: IntLike, k: int) -> IntLike:
    if type(a) is int:
        return a * k
    if k == 0:
        return 0
    if k == 1:
        return a
    return Expr({t: c * k for t, c in a.terms}, a.const * k)


def _merge(t1: Term, t2: Term) -> Term:
    return tuple(sorted(t1 + t2, key=lambda at: at.key))


def mul(a: IntLike, b: IntLike) -> IntLike:
    if type(a) is int:
        return scale(b, a) if type(b) is not int else a * b
    if type(b) is int:
        return scale(a, b)
    ca, ka = _parts(a)
    cb, kb = _parts(b)
    out: Dict[Term, int] = {}
    for t1, c1 in ca.items():
        for t2, c2 in cb.items():
            t = _merge(t1, t2)
            out[t] = out.get(t, 0) + c1 * c2
        if kb:
            out[t1] = out.get(t1, 0) + c1 * kb
    if ka:
        for t2, c2 in cb.items():
            out[t2] = out.get(t2, 0) + ka * c2
    return _make(out, ka * kb)


@rule("floordiv.exact_quotient")
def _exact_quotient(a: IntLike, b: "Expr") -> Optional[IntLike]:
    """``a / b`` when ``b`` is one monomial ``c*m`` dividing every term of ``a`` exactly."""
    if len(b.terms) != 1 or b.const != 0:
        return None
    (bt, bc), = b.terms
    if type(a) is int:
        return None
    if a.const != 0:
        return None
    out: Dict[Term, int] = {}
    for t, c in a.terms:
        if c % bc:
            return None
        rest = list(t)
        for atom in bt:
            if atom not in rest:
                return None
            rest.remove(atom)
        out[tuple(rest)] = c // bc
    const = out.pop((), 0)
    return _make(out, const)


def common_atoms(x: "Expr") -> set:
    """The atoms that divide every term of ``x`` (its constant aside)."""
    common = set(x.terms[0][0])
    for term, _ in x.terms[1:]:
        common &= set(term)
    return common


def divide_terms(x: "Expr", atom: Atom) -> IntLike:
    """The terms of ``x`` divided by ``atom``, which divides every one of them (see
    ``common_atoms``); ``x``'s constant is left out."""
    rest: Dict[Term, int] = {}
    for term, c in x.terms:
        t = list(term)
        t.remove(atom)
        rest[tuple(t)] = c
    const = rest.pop((), 0)
    return _make(rest, const)


# --------------------------------------------------------------------------- div / mod
@rule("floordiv.by_one", "floordiv.neg_divisor", "floordiv.coeff_split",
      "floordiv.const_remainder", "floordiv.nested", "floordiv.self", "floordiv.zero",
      "floordiv.common_gcd", "floordiv.common_factor")
def floordiv(a: IntLike, b: IntLike) -> IntLike:
    """Python's ``a // b``.  An expression divisor must be non-zero wherever ``a // b`` is
    evaluated: the rewrites below drop it (``n // n -> 1``), so the caller guards it first
    (``SymInt`` records ``n != 0`` in the contract, or a run-time check for a data-dependent
    size), as Python's ZeroDivisionError would require."""
    if type(b) is int:
        if b == 0:
            raise ZeroDivisionError("integer division or modulo by zero")
        if type(a) is int:
            return a // b
        if b < 0:                       # floor(a/b) == floor(-a/-b)
            return floordiv(neg(a), -b)
        if b == 1:
            return a
        g = b
        for _, c in a.terms:
            g = gcd(g, c)
        g = gcd(g, a.const)
        if g > 1:                       # (g*x)//(g*m) == x//m
            return floordiv(Expr({t: c // g for t, c in a.terms}, a.const // g), b // g)
        # a = b*q + r with r's coefficients in [0, b): (b*q + r)//b == q + r//b
        q: Dict[Term, int] = {}
        r: Dict[Term, int] = {}
        for t, c in a.terms:
            qc, rc = divmod(c, b)
            if qc:
                q[t] = qc
            if rc:
                r[t] = rc
        qk, rk = divmod(a.const, b)
        if not r:
            return _make(q, qk)         # r is the constant rk in [0, b): rk // b == 0
        rest = Expr(r, rk)
        inner = rest.as_atom()
        if type(inner) is OpAtom and inner.kind == "FloorDiv" and type(inner.args[1]) is int \
                and inner.args[1] > 0:  # (x//c)//b == x//(b*c) for b, c > 0
            return add(_make(q, qk), floordiv(inner.args[0], inner.args[1] * b))
        return add(_make(q, qk), atom_expr(OpAtom("FloorDiv", (rest, b))))
    if type(a) is not int and a == b:
        return 1
    if type(a) is int and a == 0:
        return 0
    quotient = _exact_quotient(a, b)
    if quotient is not None:
        return quotient
    common = _common_atom(a, b)
    if common is not None:              # (m*x)//(m*y) == x//y for m != 0
        return floordiv(_exact_quotient(a, atom_expr(common)),
                        _exact_quotient(b, atom_expr(common)))
    return atom_expr(OpAtom("FloorDiv", (a, b)))


@rule("mod.by_one", "mod.neg_divisor", "mod.coeff_reduce", "mod.common_gcd", "mod.common_factor",
      "mod.nested", "mod.self", "mod.zero", "mod.exact_quotient")
def mod(a: IntLike, b: IntLike) -> IntLike:
    """Python's ``a % b`` (an expression divisor: guarded non-zero by the caller, as for
    ``floordiv``)."""
    if type(b) is int:
        if b == 0:
            raise ZeroDivisionError("integer division or modulo by zero")
        if type(a) is int:
            return a % b
        if b < 0:                       # a % b == -((-a) % (-b))
            return neg(mod(neg(a), -b))
        if b == 1:
            return 0
        r = {t: c % b for t, c in a.terms if c % b}
        if not r:
            return a.const % b
        g = b
        for c in r.values():
            g = gcd(g, c)
        g = gcd(g, a.const % b)
        if g > 1:                       # Mod(g*x, g*m) == g*Mod(x, m)
            return scale(mod(Expr({t: c // g for t, c in r.items()}, (a.const % b) // g),
                             b // g), g)
        rest = Expr(r, a.const % b)
        inner = rest.as_atom()
        if type(inner) is OpAtom and inner.kind == "Mod" and type(inner.args[1]) is int \
                and inner.args[1] % b == 0:  # (x % c) % b == x % b when b divides c
            return mod(inner.args[0], b)
        return atom_expr(OpAtom("Mod", (rest, b)))
    if type(a) is not int and a == b:
        return 0
    if type(a) is int and a == 0:
        return 0
    if _exact_quotient(a, b) is not None:
        return 0
    common = _common_atom(a, b)
    if common is not None:              # Mod(m*x, m*y) == m*Mod(x, y) for m != 0
        m = atom_expr(common)
        return mul(m, mod(_exact_quotient(a, m), _exact_quotient(b, m)))
    return atom_expr(OpAtom("Mod", (a, b)))


def _common_atom(a: IntLike, b: Expr) -> Optional[Atom]:
    """An atom dividing every term of both ``a`` and the one-term divisor ``b``."""
    if type(a) is int or a.const or len(b.terms) != 1 or b.const:
        return None
    (bt, _), = b.terms
    for atom in bt:
        if all(atom in t for t, _ in a.terms):
            return atom
    return None


@rule("ceildiv.def")
def ceildiv(a: IntLike, b: IntLike) -> IntLike:
    """``ceil(a / b)`` for a non-zero ``b``: the smallest q with ``q*b >= a`` for b > 0.
    The one ceiling division of the engine, on Python ints as on expressions (an
    expression is spelled ``(a + b - 1) // b`` for an int b > 0, which keeps a positive
    coefficient; ``-((-a) // b)`` otherwise)."""
    if not isinstance(a, Expr) and not isinstance(b, Expr):     # plain integers
        return -((-a) // b)
    if type(b) is int and b > 0:
        return floordiv(add(a, b - 1), b)
    return neg(floordiv(neg(a), b))


# --------------------------------------------------------------------------- min / max
@rule("minmax.flatten", "minmax.const_merge", "minmax.offset_dominance")
def _minmax(kind: str, args: Iterable[IntLike]) -> IntLike:
    pick = min if kind == "Min" else max
    ints = []
    exprs: list = []
    for x in args:
        if type(x) is int:
            ints.append(x)
            continue
        atom = x.as_atom()
        if type(atom) is OpAtom and atom.kind == kind:   # Min(Min(a, b), c) == Min(a, b, c)
            for y in atom.args:
                (ints if type(y) is int else exprs).append(y)
        else:
            exprs.append(x)
    if ints:
        exprs.append(pick(ints))
    # drop exact duplicates and arguments dominated by a constant offset
    kept = undominated(exprs, _offset_le if kind == "Min" else _offset_ge)
    if len(kept) == 1:
        return kept[0]
    kept.sort(key=_arg_key)
    return atom_expr(OpAtom(kind, tuple(kept)))


def _offset_le(y: IntLike, x: IntLike) -> bool:
    """``y - x`` is a constant ``<= 0``: ``y`` is the pick of a ``Min`` (ties included)."""
    d = sub(y, x)
    return type(d) is int and d <= 0


def _offset_ge(y: IntLike, x: IntLike) -> bool:
    """``y - x`` is a constant ``>= 0``: ``y`` is the pick of a ``Max`` (ties included)."""
    d = sub(y, x)
    return type(d) is int and d >= 0


@rule("fold.minmax_dominance")
def undominated(args: Iterable[IntLike], dominates: Callable[[IntLike, IntLike], bool]
                ) -> list:
    """The arguments of a ``Min`` / ``Max`` that can be its value: the engine's one Min /
    Max dominance routine.  ``dominates(y, x)`` says ``y`` is always at least as good a
    pick as ``x`` (Min: ``y <= x``; Max: ``y >= x``) by what the caller knows: a constant
    offset (``_minmax``), the ranges and facts (``simplify.fold_minmax``), Z3 on the
    ranges (``contract.guard_text.readable_minmax``), the index ranges of a CUDA kernel.  An argument
    a kept one dominates is dropped; comparing only against kept arguments, of two equal
    arguments the first stays (ties cannot drop each other)."""
    keep: list = []
    for x in args:
        if any(dominates(y, x) for y in keep):
            continue
        keep = [y for y in keep if not dominates(x, y)]
        keep.append(x)
    return keep


def smin(*args: IntLike) -> IntLike:
    return _minmax("Min", args)


def smax(*args: IntLike) -> IntLike:
    return _minmax("Max", args)


# --------------------------------------------------------------------------- rebuild
def rebuild_atom(atom: Atom, f: Callable[[IntLike], IntLike]) -> IntLike:
    """Rebuild an op atom with ``f`` applied to its arguments (re-running the rules)."""
    args = [f(a) if type(a) is Expr else a for a in atom.args]
    kind = atom.kind
    if kind == "FloorDiv":
        return floordiv(args[0], args[1])
    if kind == "Mod":
        return mod(args[0], args[1])
    return _minmax(kind, args)


@rule("subst.subs_replace")
def subs(x: IntLike, mapping: Mapping[Sym, IntLike]) -> IntLike:
    """Substitute symbols (simultaneously), re-simplifying every node."""
    if type(x) is int or not mapping:
        return x
    if mapping.keys().isdisjoint(x.free_symbols):
        return x
    total: IntLike = x.const
    for term, c in x.terms:
        prod: IntLike = c
        for atom in term:
            if type(atom) is Sym:
                v = mapping.get(atom)
                prod = mul(prod, atom.expr if v is None else v)
            else:
                prod = mul(prod, rebuild_atom(atom, lambda e: subs(e, mapping)))
        total = add(total, prod)
    return total


def fold(x: IntLike, num: Callable, sym: Callable, atom: Callable):
    """``x`` written in another algebra (sympy, Z3): the sum of its terms, each the product
    of its coefficient and atoms, with ``num(int)``, ``sym(Sym)`` and ``atom(OpAtom)`` as its
    leaves and the algebra's own ``+`` and ``*``."""
    if type(x) is int:
        return num(x)
    total = num(x.const)
    for term, c in x.terms:
        prod = num(c)
        for a in term:
            prod = prod * (sym(a) if type(a) is Sym else atom(a))
        total = total + prod
    return total


def evaluate(x: IntLike, values: Mapping[Sym, int]) -> int:
    """The value of ``x`` at the given symbol values (KeyError if one is missing)."""
    if type(x) is int:
        return x
    total = x.const
    for term, c in x.terms:
        prod = c
        for atom in term:
            prod *= values[atom] if type(atom) is Sym else _eval_atom(atom, values)
        total += prod
    return total


def _eval_atom(atom: OpAtom, values: Mapping[Sym, int]) -> int:
    args = [evaluate(a, values) for a in atom.args]
    kind = atom.kind
    if kind == "FloorDiv":
        return args[0] // args[1]
    if kind == "Mod":
        return args[0] % args[1]
    return min(args) if kind == "Min" else max(args)


def atoms_of(x: IntLike) -> set:
    """Every atom occurring anywhere in ``x`` (nested ones included)."""
    out: set = set()
    if type(x) is int:
        return out
    for term, _ in x.terms:
        for atom in term:
            out.add(atom)
            if type(atom) is OpAtom:
                for a in atom.args:
                    out |= atoms_of(a)
    return out


# --------------------------------------------------------------------------- printing
def default_name(s: Sym) -> str:
    return s.name


def format_atom(atom: Atom, name: Callable[[Sym], str], py: bool = False) -> str:
    """``py``: Python's notation (``n % 4``, ``min(n, 16)``), for text a user reads;
    otherwise sympy's (``Mod(n, 4)``, ``Min(16, n)``), as the public sympy values print."""
    if type(atom) is Sym:
        return name(atom)
    args = [str(a) if type(a) is int else format_expr(a, name, py) for a in atom.args]
    if atom.kind == "FloorDiv":
        return "(%s//%s)" % (_paren(atom.args[0], args[0]), _paren(atom.args[1], args[1]))
    if atom.kind == "Mod":
        if py:
            return "(%s %% %s)" % (_paren(atom.args[0], args[0]), _paren(atom.args[1], args[1]))
        return "Mod(%s, %s)" % (args[0], args[1])
    return "%s(%s)" % (atom.kind.lower() if py else atom.kind, ", ".join(args))


def _paren(x: IntLike, text: str) -> str:
    """Brackets unless ``x`` is a non-negative int or a single atom (s0, Min(..))."""
    if type(x) is int:
        return text if x >= 0 else "(%s)" % text
    if x.as_atom() is not None:
        return text
    return "(%s)" % text


def _format_term(term: Term, coeff: int, name: Callable[[Sym], str], py: bool = False) -> str:
    parts = []
    i = 0
    while i < len(term):
        j = i
        while j < len(term) and term[j] == term[i]:
            j += 1
        base = format_atom(term[i], name, py)
        parts.append(base if j - i == 1 else "%s**%d" % (base, j - i))
        i = j
    body = "*".join(parts)
    if coeff == 1:
        return body
    if coeff == -1:
        return "-" + body
    return "%d*%s" % (coeff, body)


def format_expr(x: IntLike, name: Callable[[Sym], str] = default_name, py: bool = False
                ) -> str:
    """sympy-like text: ``s2*s3``, ``2*s0 + 1``, ``5 - s0``, ``Min(16, s3)``; with ``py``,
    Python's notation for what a user reads (``s0 % 4``, ``min(16, s3)``)."""
    if type(x) is int:
        return str(x)
    folded = _fold_const_into_floordiv(x)
    if folded is not None:
        return format_expr(folded, name, py)
    pieces = [_format_term(t, c, name, py) for t, c in x.terms]
    if x.const:
        pieces.append(str(x.const))
    if all(c < 0 for _, c in x.terms) and x.const > 0:   # "5 - s0", as sympy prints it
        pieces = [pieces[-1]] + pieces[:-1]
    out = pieces[0]
    for p in pieces[1:]:
        out += " - " + p[1:] if p.startswith("-") else " + " + p
    return out


@rule("floordiv.display_fold")
def _fold_const_into_floordiv(x: Expr) -> Optional[Expr]:
    """Display only: ``((s0 + 1)//2) - 1`` reads better as ``((s0 - 1)//2)``.  The canonical
    form keeps the constant outside (``c + (r//b)`` with ``r``'s constant in ``[0, b)``);
    printing folds it back as ``(r + c*b)//b``, which is equal for any integer c."""
    if not x.const:
        return None
    hits = [(i, t) for i, (t, c) in enumerate(x.terms) if c == 1 and len(t) == 1
            and type(t[0]) is OpAtom and t[0].kind == "FloorDiv" and type(t[0].args[1]) is int
            and t[0].args[1] > 0]
    if len(hits) != 1:
        return None
    i, (atom,) = hits[0]
    r, b = atom.args
    inner = add(r, x.const * b)      # r is a non-constant Expr: so is inner
    coeffs = dict(x.terms)
    del coeffs[(atom,)]
    coeffs[(OpAtom("FloorDiv", (inner, b)),)] = 1
    return Expr(coeffs, 0)


@rule("print.python_source")
def format_py(x: IntLike, name: Callable[[Sym], str] = default_name) -> str:
    """Python source computing ``x`` (``min``/``max``/``//``/``%``), fully parenthesised."""
    if type(x) is int:
        return repr(x) if x >= 0 else "(%d)" % x
    out = ""
    for i, (term, c) in enumerate(x.terms):
        factors = [_py_atom(a, name) for a in term]
        if abs(c) != 1:
            factors.insert(0, str(abs(c)))
        body = "*".join(factors)
        if i == 0:
            out = ("-" + body) if c < 0 else body
        else:
            out += (" - " if c < 0 else " + ") + body
    if x.const:
        out += (" - %d" % -x.const) if x.const < 0 else (" + %d" % x.const)
    return "(%s)" % out if (len(x.terms) > 1 or x.const or x.terms[0][1] < 0) else out


def _py_operand(x: IntLike, text: str) -> str:
    """``format_py`` brackets sums itself; a bare product (2*s0, s0*s1) needs brackets as
    an operand of // or %."""
    if type(x) is Expr and len(x.terms) == 1 and not x.const and x.as_atom() is None \
            and x.terms[0][1] > 0:
        return "(%s)" % text
    return text


def _py_atom(atom: Atom, name: Callable[[Sym], str]) -> str:
    if type(atom) is Sym:
        return name(atom)
    args = [format_py(a, name) for a in atom.args]
    if atom.kind in ("FloorDiv", "Mod"):
        # a product divisor needs its own brackets: s1 // (2*s0), not (s1 // 2)*s0
        div, num = (_py_operand(a, t) for a, t in ((atom.args[1], args[1]),
                                                    (atom.args[0], args[0])))
        return "(%s %s %s)" % (num, "//" if atom.kind == "FloorDiv" else "%", div)
    return "%s(%s)" % (atom.kind.lower(), ", ".join(args))
