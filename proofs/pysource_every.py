"""``format_py`` (``print.python_source``) for every expression: the Python text it prints
evaluates to the expression, proven by structural induction with the code run on symbolic
coefficients and constants along every path.

A coefficient or constant is a ``Mark``: a Python ``int`` whose own value is a unique
*marker* number and whose meaning is a Z3 term.  The code formats it as it formats any int
(``str``, ``%d``: the marker's digits), and every test it makes on it (``c < 0``,
``abs(c) != 1``, ``x.const``) branches through ``symexec.Explorer`` on the Z3 term;
``abs`` and ``-`` give the Mark of the exact result.  A marker prints without a sign: the
one negative number ``format_py`` prints, an int expression's (``(-5)``), reads as its
marker in the same brackets, and a unary minus on a literal binds tighter than every
operator ``format_py`` prints, so the text parses alike.  The printed text is then parsed,
each marker literal read as the Z3 term it stands for, and evaluated with Python's
operators over Z3 integers (``//`` and ``%`` floor), so on every path the text's value is
a Z3 term the proof compares with the expression's.

The induction.  ``format_py`` reads an expression as its terms (coefficient and atoms, one
loop: the first term and the others) and its constant; an atom only through ``_py_atom``.
``_py_atom`` reads a symbol by its name and an op atom's arguments only through
``format_py`` and ``_py_operand``.  So (1) ``_py_atom`` is proven for a symbol and each
kind of op atom, each argument's text any text the hypothesis allows (its value the
argument's, and, as ``_py_operand`` hands it on, parsed as itself when an operand of
``//`` / ``%``: a name stands for every such text), its own text parsed as itself as a
factor of a product and under a unary minus; (2) ``format_py`` is proven on ``c1*s*t +
c2*u + k`` and on an int ``k`` (``c1 != 0``; ``c2`` and ``k`` zero or not: one or two terms, a constant or
none; every sign and every coefficient of absolute value 1 or not), each atom's text any
factor-safe text of its value (a name stands for each), and on every path both that the
text evaluates to the expression and that ``_py_operand`` of it parses as itself as an
operand of ``//`` / ``%`` (the hypothesis (1) uses).
"""
from __future__ import annotations

import ast
import builtins
import itertools
from typing import Dict, List

import z3

from symshape.algebra import expr as E

from . import every, proves
from .alike import read_alike
from .code import prove_code
from .pyint import Py, require, zmax, zmin
from .symexec import Explorer

S, T, U, A1, A2 = (E.Sym(960 + i) for i in range(5))
_MARK0 = 10 ** 15          # markers: numbers no expression of a proof prints otherwise
_CURRENT: List[Explorer] = []
_MEANING: Dict[int, object] = {}    # marker -> the Z3 term it stands for
_NEXT = [itertools.count(_MARK0)]


def _zv(x):
    return x.v if isinstance(x, Mark) else z3.IntVal(int(x))


class Mark(int):
    """A symbolic integer that prints as its marker (see the module docstring)."""

    def __new__(cls, v):
        n = next(_NEXT[0])
        obj = int.__new__(cls, n)
        obj.v = v
        _MEANING[n] = v
        return obj

    def _branch(self, cond) -> bool:
        return _CURRENT[-1].branch(cond)

    def __eq__(self, o):
        if not isinstance(o, int) or isinstance(o, bool):
            return False
        return self._branch(self.v == _zv(o))

    def __ne__(self, o):
        return not self.__eq__(o)

    def __lt__(self, o):
        return self._branch(self.v < _zv(o))

    def __le__(self, o):
        return self._branch(self.v <= _zv(o))

    def __gt__(self, o):
        return self._branch(self.v > _zv(o))

    def __ge__(self, o):
        return self._branch(self.v >= _zv(o))

    def __bool__(self):
        return self._branch(self.v != 0)

    __hash__ = int.__hash__

    def __abs__(self):
        return Mark(z3.If(self.v < 0, -self.v, self.v))

    def __neg__(self):
        return Mark(-self.v)

    def __pos__(self):
        return self

    def __add__(self, o):
        return Mark(self.v + _zv(o))

    __radd__ = __add__

    def __sub__(self, o):
        return Mark(self.v - _zv(o))

    def __rsub__(self, o):
        return Mark(_zv(o) - self.v)

    def __mul__(self, o):
        return Mark(self.v * _zv(o))

    __rmul__ = __mul__


def _marks(names: str) -> List[Mark]:
    return [Mark(z3.Int(n)) for n in names.split()]


class PyZ:
    """A Z3 integer with Python's operators (``//`` and ``%`` floor), to evaluate printed
    text."""

    def __init__(self, P: Py, v) -> None:
        self.P, self.v = P, v

    @staticmethod
    def _u(o):
        return o.v if isinstance(o, PyZ) else o

    def _w(self, v) -> "PyZ":
        return PyZ(self.P, v)

    def __add__(self, o):
        return self._w(self.v + self._u(o))

    def __radd__(self, o):
        return self._w(self._u(o) + self.v)

    def __sub__(self, o):
        return self._w(self.v - self._u(o))

    def __rsub__(self, o):
        return self._w(self._u(o) - self.v)

    def __mul__(self, o):
        return self._w(self.v * self._u(o))

    def __rmul__(self, o):
        return self._w(self._u(o) * self.v)

    def __neg__(self):
        return self._w(-self.v)

    def __floordiv__(self, o):
        return self._w(self.P.floordiv(self.v, self._u(o)))

    def __mod__(self, o):
        return self._w(self.P.mod(self.v, self._u(o)))


class _Unmark(ast.NodeTransformer):
    """Each marker literal as the name its Z3 term is bound to."""

    def visit_Constant(self, node):
        if type(node.value) is int and node.value in _MEANING:
            return ast.copy_location(ast.Name("m%d" % node.value, ast.Load()), node)
        return node


def evaluate(P: Py, text: str, names: Dict[str, object]):
    """The Z3 value of the Python text ``text`` (markers read as their terms, ``names``
    mapping its other names to Z3 terms, ``min`` / ``max`` Python's)."""
    tree = ast.fix_missing_locations(_Unmark().visit(ast.parse(text, mode="eval")))
    ns = {k: PyZ(P, v) for k, v in names.items()}
    ns.update({"m%d" % n: PyZ(P, v) for n, v in _MEANING.items()})
    ns["min"] = lambda *xs: PyZ(P, zmin(*[PyZ._u(x) for x in xs]))
    ns["max"] = lambda *xs: PyZ(P, zmax(*[PyZ._u(x) for x in xs]))
    got = eval(compile(tree, "<format_py>", "eval"), {"__builtins__": {}}, ns)
    return PyZ._u(got) if isinstance(got, PyZ) else z3.IntVal(got)


def _parses_as_itself(text: str, *contexts: str) -> bool:
    """``text`` put in each context (``X`` marks its place) is one node of the parse,
    the same as ``text`` parsed alone."""
    alone = ast.dump(ast.parse(text, mode="eval").body)
    for ctx in contexts:
        tree = ast.parse(ctx.replace("X", text), mode="eval")
        if not any(ast.dump(n) == alone for n in ast.walk(tree) if isinstance(n, ast.expr)
                   and n is not tree.body):
            return False
    return True


_OPERAND = ("p // X", "X // p", "p % X", "X % p")
_FACTOR = ("p*X*p", "-X*p", "p*X")


def _type(x):
    return int if isinstance(x, Mark) else builtins.type(x)


def _run(build, claim_of, hyps, what: str) -> int:
    """``build()`` along every path with Marks as ints; ``claim_of(P, got)`` (the code's
    output's Z3 term, the claim on it) per path, proven all at once."""
    _MEANING.clear()
    _NEXT[0] = itertools.count(_MARK0)
    ex = Explorer(hyps)
    _CURRENT.append(ex)
    E.type = _type
    try:
        paths = ex.paths(build)
    finally:
        del E.type
        _CURRENT.pop()
    impl, claims = [], []
    for pc, got in paths:
        if isinstance(got, Exception):
            raise got
        term, claim = claim_of(ex.P, got)
        impl.append(term)
        claims.append((z3.And(*pc), claim))
    prove_code(lambda *vs: z3.And(*[z3.Implies(c, f(v)) for (c, f), v in zip(claims, vs)]),
               impl, hyps, P=ex.P, what="%s (%d paths)" % (what, len(paths)))
    return len(paths)


def py_atom_every() -> None:
    """``_py_atom`` on a symbol and on FloorDiv, Mod, Min and Max of two arguments (each
    argument's text, as ``format_py`` gives it, a name standing for any text the
    hypothesis allows): the text evaluates to the atom and parses as itself as a factor."""
    zs = {S: z3.Int("s"), A1: z3.Int("a1"), A2: z3.Int("a2")}
    names = {"s%d" % s.index: v for s, v in zs.items()}
    texts = {A1: "s%d" % A1.index, A2: "s%d" % A2.index}
    for kind in ("Sym", "FloorDiv", "Mod", "Min", "Max"):        # every kind, exhausted
        def build(kind=kind):
            atom = S if kind == "Sym" else E.OpAtom(kind, (A1.expr, A2.expr))
            saved = E.format_py
            E.format_py = lambda a, name: texts[a.as_atom()]   # the hypothesis
            try:
                text = E._py_atom(atom, E.default_name)
            finally:
                E.format_py = saved
            require(_parses_as_itself(text, *_FACTOR), "_py_atom gives %r: not a factor", text)
            return text

        def claim_of(P, text, kind=kind):
            a1, a2 = zs[A1], zs[A2]
            want = {"Sym": zs[S], "FloorDiv": P.floordiv(a1, a2), "Mod": P.mod(a1, a2),
                    "Min": zmin(a1, a2), "Max": zmax(a1, a2)}[kind]
            return evaluate(P, text, names), lambda v, want=want: v == want
        _run(build, claim_of, [], "_py_atom(%s)" % kind)


def format_every() -> int:
    """``format_py`` of ``x = c1*s*t + c2*u + k`` and of an int ``k`` (see the module
    docstring), ``_py_atom``
    a name per atom (standing for any factor-safe text of its value), along every path:
    the text evaluates to ``x`` and ``_py_operand`` of it parses as itself as an operand
    of ``//`` / ``%``.  Returns the number of paths."""
    zs = {S: z3.Int("s"), T: z3.Int("t"), U: z3.Int("u")}
    names = {"s%d" % s.index: v for s, v in zs.items()}

    def build():
        c1, c2, k = _marks("c1 c2 k")
        st = E.mul(S.expr, T.expr)
        x = E.add(E.add(E.scale(st, c1), E.scale(U.expr, c2)), k)
        saved = E._py_atom
        E._py_atom = lambda a, name: "s%d" % a.index                # the hypothesis
        try:
            text = E.format_py(x)
        finally:
            E._py_atom = saved
        require(_parses_as_itself(E._py_operand(x, text), *_OPERAND),
                "_py_operand(%r) is no operand of // or %%", text)
        return text, c1.v * zs[S] * zs[T] + c2.v * zs[U] + k.v

    def an_int():           # an int expression: every value
        k, = _marks("k")
        text = E.format_py(k)
        require(_parses_as_itself(E._py_operand(k, text), *_OPERAND),
                "_py_operand(%r) is no operand of // or %%", text)
        return text, k.v

    def claim_of(P, got):
        text, want = got
        return evaluate(P, text, names), lambda v: v == want
    return (_run(build, claim_of, [z3.Int("c1") != 0], "format_py") +
            _run(an_int, claim_of, [], "format_py of an int"))


@proves("print.python_source", over=every(
    "every expression, by structural induction: _py_atom on a symbol and on every kind of "
    "op atom (FloorDiv, Mod, Min, Max; its arguments' texts any the hypothesis allows: "
    "their values, parsed as themselves as operands once _py_operand hands them on; two "
    "arguments stand for any number, joined alike), its text a factor that parses as "
    "itself; format_py on c1*s*t + c2*u + k and on an int k (coefficients and constant "
    "symbolic, printed as markers read back as their Z3 terms; one or two terms: the first and the rest, "
    "read alike in one loop), every atom's text any factor-safe text of its value, "
    "along every path: the text evaluates to the expression and _py_operand of it parses "
    "as itself as an operand of // and %"))
def print_python_source():
    read_alike(E.format_py)
    read_alike(E._py_atom)
    py_atom_every()
    format_every()
