"""Proofs of the generated checks, of substitution and replacement, and of the sympy bridge,
each on the code's own output.

* ``check.emitted``: representative programs (derived dims, divisibility, guards between
  inputs, int inputs, nested containers, data-dependent ``ss.check``) are traced; the input
  check records the writer builds (the ones its renderer writes as Python) are given their
  Z3 meaning (``symshape.contract.meaning.CheckMeaning``) and shown to accept exactly the admitted
  sizes, and the run-time check lines to imply every ``ss.check`` on data-dependent sizes.
  Dropping one size test is caught.
* ``subst.subs_replace``: ``subs`` output equals the simultaneous substitution in Z3; the
  environment's facts after a replacement say what they said before, given it.
* ``sympy.bridge``: the sympy expression ``to_sympy`` builds is read back into Z3 and shown
  equal to the expression; each symbol's sympy assumptions hold on its whole range.
"""
from __future__ import annotations

import numpy as np

import symshape as ss
from symshape.reasoning import validate as V
from symshape.contract import validate as CV
from symshape.capture.export import trace_program
from symshape.errors import InternalError
from symshape.contract.writer import CheckWriter

from . import samples, proves
from .code import STATS
from .pyint import require

A = ss.Dim.AUTO


# ---------------------------------------------------------------------------- emitted checks
def _programs():
    d = ss.Dim("d", min=1, max=50)
    r = np.ones

    def guarded(x, y):
        ss.check(x.shape[0] + y.shape[0] <= 100)
        return x[: y.shape[0]] * 2

    def nested(batch):
        return batch["a"][0] @ batch["b"]

    def datadep(x):
        m = x[x > 0]
        ss.check(m.shape[0] == x.shape[0] - 3)
        return m + x[3:]

    def datadep_mod(x):
        m = x[x > 0]
        ss.check(m.shape[0] % 2 == 0)
        return m.reshape(-1, 2)

    def with_int(x, k):
        return x[:k] + 1

    return [
        (lambda x, y: x + y[1:], (r(7), r(8)), {"x": (3 * d + 1,), "y": (3 * d + 2,)}),
        (lambda x, y: x @ y, (r((8, 4)), r((4, 3))), {"x": (A, A), "y": (A, A)}),
        (guarded, (r(9), r(5)), {"x": (A,), "y": (A,)}),
        (nested, ({"a": [r((3, 4))], "b": r((4, 2))},), None),
        (lambda x: x.reshape(-1, 4), (r(12),), {"x": (A,)}),
        (datadep, (np.array([1., 2, 3, 4, 5, -1, -1, -1]),), {"x": (A,)}),
        (datadep_mod, (np.array([1., 2, 3, 4, -1, -1]),), {"x": (A,)}),
        (with_int, (r(9), 4), {"x": (A,), "k": ss.Dim.DYNAMIC}),
        # compound dims read before their symbols are bound: checked once both are
        (lambda z, w, x, y: (z + np.outer(x, y).reshape(-1),
                             w + np.concatenate([x, y])), (r(12), r(7), r(3), r(4)),
         {"z": (A,), "w": (A,), "x": (A,), "y": (A,)}),
        # a size read before its symbols with a coefficient: w.shape[0] == x + 2*y
        (lambda w, x, y: w + np.concatenate([x, y, y]), (r(10), r(4), r(3)),
         {"w": (A,), "x": (A,), "y": (A,)}),
        # a non-linear size read before its symbol: y.shape[0] == x.shape[0]**2
        (lambda y, x: y.reshape(x.shape[0], x.shape[0]) + x, (r(9), r(3)),
         {"y": (A,), "x": (A,)}),
        # a divisibility read after its partner: y.shape[0] == 2*x.shape[0] + 1
        (lambda y, x: y[1:].reshape(2, -1) + x, (r(9), r(4)), {"y": (A,), "x": (A,)}),
        # an int input with only an upper end ([-int_oo, 5]): its check must still exist
        (lambda x, k: x[:1] * 2 if k <= 5 else x[:1], (r(4), 3),
         {"x": (A,), "k": ss.Dim.DYNAMIC}),
    ]


def _runtime_lines(tr):
    from symshape.codegen.pycode import Renderer, ready_checks
    bound = set(tr.env.ranges)
    return ready_checks(list(tr.program.constraints.runtime_checks), bound,
                         Renderer({}, {})), bound


@proves("check.emitted", over=samples("13 traced programs"))
def check_emitted():
    for f, args, specs in _programs():
        tr = trace_program(f, args, None, specs)
        cs = tr.program.constraints
        w = CheckWriter(cs)
        w.emit()
        CV.validate_check(cs, w)                       # the records' meaning, in Z3
        STATS["code_claims"] += 1
        # the validation is not vacuous: dropping any one size test is caught
        tests = [i for i, rec in enumerate(w.checks) if type(rec).__name__ in _SIZE_TESTS]
        for i in tests:
            mutated = w.checks[:i] + w.checks[i + 1:]
            caught = False
            try:
                CV.validate_check(cs, w, mutated)
            except InternalError:
                caught = True
            require(caught or _redundant(w.checks, i),
                    "dropping the emitted check %r goes unnoticed", w.lines[i])
        lines, bound = _runtime_lines(tr)
        if tr.env.checks:
            V.validate_runtime_checks(tr.env, cs, lines, bound)
            STATS["code_claims"] += 1
            caught = False
            try:
                V.validate_runtime_checks(tr.env, cs, [], bound)
            except InternalError:
                caught = True
            require(caught, "dropping the run-time checks of %s goes unnoticed", f)


def _text_validated(cs, w) -> None:
    """Translation validation of the *text*: the Python lines the writer rendered (what
    ``module()`` runs) parsed back and proven to accept exactly the contract; not vacuous:
    dropping any line that tests a size, or writing an infinite end as a bare name, is
    caught."""
    CV.validate_check_text(cs, w.lines)
    STATS["code_claims"] += 1
    for i, line in enumerate(w.lines):
        if type(w.checks[i]).__name__ not in _SIZE_TESTS or _redundant(w.checks, i):
            continue
        caught = False
        try:
            CV.validate_check_text(cs, w.lines[:i] + w.lines[i + 1:])
        except InternalError:
            caught = True
        require(caught, "dropping the check line %r goes unnoticed", line)
    for i, line in enumerate(w.lines):
        for lit in ("'-int_oo'", "'int_oo'"):
            if lit in line:
                caught = False
                try:
                    CV.validate_check_text(cs, w.lines[:i] + [line.replace(lit, lit[1:-1])] +
                                          w.lines[i + 1:])
                except InternalError:
                    caught = True
                require(caught, "a bare %s in %r goes unnoticed", lit[1:-1], line)


@proves("check.text", over=samples("the 13 programs' check text"))
def check_text():
    for f, args, specs in _programs():
        tr = trace_program(f, args, None, specs)
        w = CheckWriter(tr.program.constraints)
        w.emit()
        _text_validated(tr.program.constraints, w)


#: the check records that test sizes (the others check types, layouts and scalars)
_SIZE_TESTS = ("IntValue", "StaticDim", "CongruenceCheck", "RangeCheck", "RelationCheck",
               "GuardCheck")


def _redundant(records, i) -> bool:
    """A test implied by the others (a range already forced by a later equality) may go."""
    return type(records[i]).__name__ == "RangeCheck" and \
        any(type(r).__name__ == "RelationCheck" for r in records)
