"""The contract's one Z3 meaning, and the Z3 meaning of its check records.

``admitted(cs)`` is the contract as one Z3 formula over the input sizes (each by its user
name: ``x.shape[1]``, ``n`` for an int input): some root values in their ranges,
satisfying every residual guard, give every input size its expression.  Every rendered
view of the contract is validated against this one formula (``validate``): the check
records and the Python text ``module()`` runs accept exactly what it admits, each end of
each printed range is reached by an admitted input and nothing outside is admitted.

``CheckMeaning`` gives the check records (``records``) their Z3 meaning, run in order.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional

from symshape.errors import InternalError
from symshape.algebra.expr import IntLike, Sym
from symshape.algebra.infinity import is_inf
from symshape.reasoning.z3bridge import Encoder, cond_term, minmax_term, z3mod
from symshape.contract.records import (ArrayCheck, Bind, CongruenceCheck, GuardCheck, IntCheck, IntValue,
                      RangeCheck, ReadShape, RelationCheck, SizeCheck, StaticDim)


def input_sizes(cs):
    """Each input size of ``cs`` by its user name, with its expression:
    ``("x.shape[0]", s0)``, ``("n", s1)`` for a symbolic int input."""
    for d in cs.inputs:
        dims = d.dims if d.is_array else ((d.sym,) if d.sym is not None else ())
        for k, e in enumerate(dims):
            yield ("%s.shape[%d]" % (d.path, k) if d.is_array else d.path), e


class Admitted:
    """The contract ``cs`` as a Z3 formula over the input sizes (see ``admitted``).

    ``size(name)``: the Z3 integer of an input size (made on first use; ``sizes`` holds
    those made); ``term(e)``: a contract expression over the roots as a Z3 term;
    ``formula()``: what the contract admits, with the roots (and the quotients the
    encoding introduces) free; ``roots()``: those free variables, for a quantifier."""

    def __init__(self, cs) -> None:
        self.z3 = z3mod()
        self.cs = cs
        self.enc = Encoder()
        self.sizes: Dict[str, object] = {}
        self.conds: List[object] = [self.size(name) == self.enc.expr(e)
                                    for name, e in input_sizes(cs)]
        self.conds += [self.enc.cond(f) for f in cs.facts]

    def size(self, name: str):
        v = self.sizes.get(name)
        if v is None:
            v = self.sizes[name] = self.z3.Int("in_" + name)
        return v

    def term(self, e: IntLike):
        return self.enc.expr(e)

    def parts(self) -> List[object]:
        """The conjuncts: every size equal to its expression, every guard, every root in
        its range, the encoding's side conditions (as of now: encode terms first)."""
        out = list(self.conds)
        for s in list(self.enc.vars):
            out += self.enc.range(s, self.cs.ranges[s])
        return out + list(self.enc.side)

    def formula(self):
        parts = self.parts()
        return self.z3.And(*parts) if parts else self.z3.BoolVal(True)

    def roots(self) -> list:
        return [self.enc.vars[s] for s in self.enc.vars] + list(self.enc.fresh)


def admitted(cs) -> Admitted:
    """The contract's one Z3 meaning: what ``cs`` admits, over the input sizes."""
    return Admitted(cs)


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
    """The Z3 meaning of input-check records (``symshape.contract.records``), run in order.

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
        if t is ArrayCheck:
            self.paths[rec.var] = rec.path
        elif t is ReadShape:
            path = self.paths.get(rec.var)
            if path is None:
                raise InternalError("translation validation: the check reads the shape of "
                                    "%s before checking it is an array" % rec.var)
            for k, n in enumerate(rec.names):
                self.vars[n] = self._size("%s.shape[%d]" % (path, k))
        elif t is IntCheck:
            self.vars[rec.var] = self._size(rec.path)
        elif t is IntValue:
            self.accept.append(self.var(rec.var) == rec.value)
        elif t is StaticDim:
            self.accept.append(self.var(rec.var) == rec.size)
        elif t is Bind:
            num = self.var(rec.var) - self.expr(rec.rest)
            if rec.coeff == 1:
                self.syms[rec.sym] = num
            else:
                q, r = self.divmod(num, z3.IntVal(rec.coeff))
                self.syms[rec.sym], self.rem[rec.sym] = q, r
        elif t is CongruenceCheck:
            if rec.sym not in self.rem:
                raise InternalError("translation validation: a congruence check on %s "
                                    "without its divmod" % rec.sym.name)
            self.accept.append(self.rem[rec.sym] == 0)
        elif t is RangeCheck:
            v = self.sym(rec.sym)
            if not is_inf(rec.lo):
                self.accept.append(v >= rec.lo)
            if not is_inf(rec.hi):
                self.accept.append(v <= rec.hi)
        elif t is RelationCheck:
            self.accept.append(self.var(rec.var) == self.expr(rec.expr))
        elif t in (GuardCheck, SizeCheck):
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
        args = [self.expr(a) for a in atom.args]
        if atom.kind in ("Min", "Max"):
            return minmax_term(atom.kind, args)
        q, r = self.divmod(*args)
        return q if atom.kind == "FloorDiv" else r

    def cond(self, c):
        return cond_term(self.z3, c, self.expr)
