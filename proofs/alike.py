"""Which engine functions read a list item by item alike, read from their code: the table
behind every proof that runs a function on two or three items and claims every number.

A proof run on a list of two or three items (premises, Min / Max arguments, the terms of
a sum, the atoms of a term) covers lists of *every* length only when the code reads the
list whole and each item alike.  ``ALIKE`` lists, for each such function, every
statement that mentions the list or what the function gathers from it (as
``ast.unparse`` writes them; a loop's or an ``if``'s header only; a ``raise`` is a message
and skipped) -- each read below is one of: a comprehension or a loop over the whole list,
the list handed whole to a call, extended, filtered by a test on the item itself, or
indexed where the item count is fixed by the kind (``//`` and ``%`` have two arguments);
an early exit from a loop only under a test on the item at hand.  ``read_alike(fn)``
requires the code to read exactly these statements, no other, and every ``break`` /
``continue`` / ``return`` inside a loop to be the whole body of a listed ``if``: a slice,
an index, a counter, a second pass or any rewrite of these lines fails the proof, which
then has to be read again.
"""
from __future__ import annotations

import ast
import inspect
from typing import Callable, Dict, Tuple

from .pyint import require
from .reads import header, mentions, require_reads, source_tree

__all__ = ["ALIKE", "read_alike"]

Reads = Dict[str, Tuple[str, ...]]

#: ``module:qualname`` -> {name: every statement of the function that mentions it}
ALIKE: Dict[str, Reads] = {
    # each premise encoded alike, the list only extended and handed whole to the solver
    "symshape.reasoning.z3bridge:implies": {
        "premises": ("hyp = [enc.cond(p) for p in premises]",),
        "hyp": ("hyp = [enc.cond(p) for p in premises]", "hyp += enc.range(s, ranges[s])",
                "hyp += enc.side", "solver.add(*hyp)"),
    },
    # each argument translated alike; a Min / Max handed all of them
    "symshape.contract.sympy_form:_atom": {
        "a": ("args = [to_sympy(x, ranges, plain) for x in a.args]", "if a.kind == 'FloorDiv'",
              "if a.kind == 'Mod'", "kind = sympy.Min if a.kind == 'Min' else sympy.Max"),
        "args": ("args = [to_sympy(x, ranges, plain) for x in a.args]",
                 "quotient = sympy.Mul(args[0], sympy.Pow(args[1], -1, evaluate=not plain), "
                 "evaluate=not plain)",
                 "return sympy.Mod(args[0], args[1], evaluate=False)",
                 "return kind(*args, evaluate=False)"),
    },
    # one pass over every operand (or the one list given), the gathered lists handed whole
    "symshape.sizes.symint:_sym_minmax": {
        "args": ("if len(args) == 1", "args = tuple(args[0])", "for a in args"),
        "a": ("for a in args", "p = _parts(a)", "if type(a) is SymInt", "env = a.env"),
        "p": ("p = _parts(a)", "if p is None", "exprs.append(p[0])", "hints.append(p[1])"),
        "exprs": ("exprs, hints = ([], [])", "exprs.append(p[0])", "return py_op(exprs)",
                  "e = sym_op(*exprs)"),
        "hints": ("exprs, hints = ([], [])", "hints.append(p[1])",
                  "h = py_op(hints) if None not in hints else None"),
    },
    # each argument tested against the kept ones only, and kept ones against it
    "symshape.algebra.expr:undominated": {
        "args": ("for x in args",),
        "keep": ("keep: list = []", "if any((dominates(y, x) for y in keep))",
                 "keep = [y for y in keep if not dominates(x, y)]", "keep.append(x)",
                 "return keep"),
    },
    # each term tested alike; the one Min / Max atom's arguments pushed alike
    "symshape.algebra.simplify:push_into_minmax": {
        "hits": ("hits = [(t, c) for t, c in x.terms if c in (1, -1) and len(t) == 1 and "
                 "(type(t[0]) is OpAtom) and (t[0].kind in ('Min', 'Max'))]",
                 "if len(hits) != 1", "(atom,), c = hits[0]"),
        "atom": ("(atom,), c = hits[0]", "rest = add(x, scale(atom_expr(atom), -c))",
                 "kind = atom.kind if c == 1 else 'Max' if atom.kind == 'Min' else 'Min'",
                 "cand = _minmax(kind, [add(rest, scale(a, c)) for a in atom.args])"),
    },
    # the first term, then every other alike; each atom of a term printed alike
    "symshape.algebra.expr:format_py": {
        "term": ("for (i, (term, c)) in enumerate(x.terms)",
                 "factors = [_py_atom(a, name) for a in term]"),
        "i": ("for (i, (term, c)) in enumerate(x.terms)", "if i == 0"),
        "factors": ("factors = [_py_atom(a, name) for a in term]",
                    "factors.insert(0, str(abs(c)))", "body = '*'.join(factors)"),
    },
    # a Min / Max prints every argument alike; // and % their two
    "symshape.algebra.expr:_py_atom": {
        "args": ("args = [format_py(a, name) for a in atom.args]",
                 "div, num = (_py_operand(a, t) for a, t in ((atom.args[1], args[1]), "
                 "(atom.args[0], args[0])))",
                 "return '%s(%s)' % (atom.kind.lower(), ', '.join(args))"),
    },
    # every term bounded alike and added to the total
    "symshape.algebra.ranges:bound": {
        "term": ("for (term, coeff) in x.terms",
                 "total = vr_add(total, vr_scale(_bound_term(term, sym_range), coeff))"),
        "total": ("total = point(x.const)",
                  "total = vr_add(total, vr_scale(_bound_term(term, sym_range), coeff))",
                  "total = total.intersect(factored)", "total = _meet(total, alt)",
                  "return total"),
    },
    # the runs of equal atoms, each its atom's range to the run's length, multiplied
    "symshape.algebra.ranges:_bound_term": {
        "term": ("while i < len(term)", "while j < len(term) and term[j] == term[i]",
                 "r = vr_pow(bound_atom(term[i], sym_range), j - i)"),
        "i": ("i = 0", "while i < len(term)", "j = i",
              "while j < len(term) and term[j] == term[i]",
              "r = vr_pow(bound_atom(term[i], sym_range), j - i)", "i = j"),
        "j": ("j = i", "while j < len(term) and term[j] == term[i]", "j += 1",
              "r = vr_pow(bound_atom(term[i], sym_range), j - i)", "i = j"),
        "out": ("out = None", "out = r if out is None else vr_mul(out, r)", "return out"),
    },
    # a Min / Max bounds every argument alike (range.min / range.max: every arity)
    "symshape.algebra.ranges:bound_atom": {
        "args": ("args = [bound(a, sym_range) for a in atom.args]",
                 "return vr_floordiv(args[0], args[1])", "return vr_mod(args[0], args[1])",
                 "return vr_min(args) if kind == 'Min' else vr_max(args)"),
    },
    # every term divided alike by the monomial, every atom of the monomial removed alike
    "symshape.algebra.expr:_exact_quotient": {
        "t": ("for (t, c) in a.terms", "rest = list(t)"),
        "c": ("for (t, c) in a.terms", "if c % bc", "out[tuple(rest)] = c // bc"),
        "rest": ("rest = list(t)", "if atom not in rest", "rest.remove(atom)",
                 "out[tuple(rest)] = c // bc"),
        "atom": ("for atom in bt", "if atom not in rest", "rest.remove(atom)"),
        "out": ("out: Dict[Term, int] = {}", "out[tuple(rest)] = c // bc",
                "const = out.pop((), 0)", "return _make(out, const)"),
    },
    # every argument of an and / or decided alike (the recursive call), the answers read whole
    "symshape.reasoning.decision:decide_ranges": {
        "vals": ("vals = [decide_ranges(env, a) for a in c.args]",
                 "return False if False in vals else True if all((v is True for v in vals)) "
                 "else None",
                 "return True if True in vals else False if all((v is False for v in vals)) "
                 "else None"),
    },
    # the monomial's atoms in order, each tested alike against every term
    "symshape.algebra.expr:_common_atom": {
        "atom": ("for atom in bt", "if all((atom in t for t, _ in a.terms))", "return atom"),
    },
}


def _key(fn: Callable) -> str:
    fn = inspect.unwrap(fn)          # the coverage run wraps the rule functions
    return "%s:%s" % (fn.__module__, fn.__qualname__)


def read_alike(fn: Callable, reads: Reads = None, exits_last: bool = False) -> None:
    """Require ``fn``'s code to read its lists exactly through ``reads`` ({name: every
    statement mentioning it}; by default ``ALIKE``'s row for ``fn``; a proof module may
    keep its own table), and to leave a loop over one of them early only as the whole
    body of a listed ``if`` (a test on the item); ``exits_last``: or as the last statement
    of a listed ``if`` whose other statements are listed reads (``ints.append(x);
    continue``: the item handled, then the next one)."""
    reads = ALIKE[_key(fn)] if reads is None else reads
    tree = source_tree(fn)
    name = inspect.unwrap(fn).__name__
    for var, allowed in reads.items():
        seen = require_reads(tree, var, allowed, name)
        require(seen == set(allowed), "%s no longer reads %s as %s", name, var,
                sorted(set(allowed) - seen))
    guards = {t for allowed in reads.values() for t in allowed}
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))
             and any(mentions(h, v) for v in reads for h in _heads(n))]
    for loop in loops:
        for stmt in [s for b in loop.body for s in ast.walk(b)]:
            if isinstance(stmt, ast.If) and header(stmt) not in guards:
                exits = [x for x in stmt.body if isinstance(x, (ast.Break, ast.Continue,
                                                                  ast.Return))]
                require(not exits, "%s leaves a loop under `%s`, a test the proof for every "
                        "length does not cover", name, header(stmt))
            if isinstance(stmt, (ast.Break, ast.Continue, ast.Return)) \
                    and not _guarded(stmt, loop, guards, exits_last):
                require(False, "%s leaves a loop (%s) other than under a listed test", name,
                        ast.unparse(stmt))


def _heads(loop: ast.AST) -> list:
    """What a loop's header reads: a ``for``'s target and iterable, a ``while``'s test."""
    return [loop.target, loop.iter] if isinstance(loop, ast.For) else [loop.test]


def _guarded(stmt: ast.stmt, loop: ast.AST, guards: set, exits_last: bool = False) -> bool:
    """Whether ``stmt`` is the whole body of an ``if`` of ``loop`` whose header is listed
    (``exits_last``: or its last statement, each statement before it listed)."""
    for node in ast.walk(loop):
        if isinstance(node, ast.If) and node.body == [stmt]:
            return header(node) in guards
        if exits_last and isinstance(node, ast.If) and node.body[-1] is stmt:
            return header(node) in guards and all(header(b) in guards
                                                  for b in node.body[:-1])
    return False
