"""A function of plain Python ints (a shape rule of ``capture/ops``) run on *symbolic* ints
along every path: proofs for every integer argument, not a grid of them.

The arguments are ``symcoeff.SInt`` values (a Z3 term each); every comparison the path so
far does not decide branches through ``symexec.Explorer``, so the function runs once per
feasible outcome of each of its tests.  ``int_module(module)`` makes the module see an
``SInt`` as an ``int`` while the proof runs: its ``type(v) is int`` and ``isinstance(v,
int)`` answer True and ``int(v)`` is ``v`` (the module's globals ``type`` and ``int`` shadow the builtins; the
code itself runs unchanged).  ``prove_int_paths`` then proves, over all paths at once, that
the output on each path satisfies the rule's statement under that path's condition.
"""
from __future__ import annotations

import builtins
from contextlib import contextmanager
from typing import Callable, List, Sequence, Tuple

import z3

from .code import prove_code
from .pyint import ProofFailure
from .symcoeff import SInt, patched, value
from .symexec import Explorer

__all__ = ["int_module", "int_paths", "prove_int_paths"]


class _IntMeta(type):
    """The class of ``Int``: an ``SInt`` is an instance, calling it keeps an ``SInt``."""

    def __instancecheck__(cls, x) -> bool:
        return isinstance(x, (builtins.int, SInt))

    def __call__(cls, x=0, *rest):
        return x if isinstance(x, SInt) else builtins.int(x, *rest)


class Int(metaclass=_IntMeta):
    """``int`` as a patched module sees it: ``isinstance(v, int)`` holds for an SInt,
    ``int(v)`` is ``v`` and ``type(v) is int`` holds for an SInt and an int alike."""


def _type(x):
    if isinstance(x, SInt) or builtins.type(x) is builtins.int:
        return Int
    return builtins.type(x)


@contextmanager
def int_module(module):
    """``module`` sees ``SInt`` as an int (``type``, ``isinstance``, ``int``) while patched."""
    names = {"type": _type, "int": Int}
    saved = {n: vars(module)[n] for n in names if n in vars(module)}
    for n, f in names.items():
        setattr(module, n, f)
    try:
        yield module
    finally:
        for n in names:
            delattr(module, n)
        for n, f in saved.items():
            setattr(module, n, f)


def int_paths(run: Callable[[], object], hyps: Sequence, module
              ) -> Tuple[Explorer, List[Tuple[List, object]]]:
    """``run()`` on every feasible path under ``hyps`` with ``module`` seeing SInts as ints:
    the explorer (its ``P`` holds the quotients' definitions) and (path condition, result
    or the exception raised) per path."""
    ex = Explorer(hyps)
    with patched(ex, inductive=False), int_module(module):
        paths = ex.paths(run)
    return ex, paths


def prove_int_paths(run: Callable[[], object], ok: Callable, hyps: Sequence, module,
                    what: str, raises: Callable = None) -> int:
    """On every feasible path of ``run()`` under ``hyps``, ``ok(out)`` (a Z3 formula over
    the output's terms, ``value`` of each SInt or int the code returned) holds; a path
    that raises must be one where ``raises(exc)`` (a Z3 formula: the condition under which
    the rule says it raises) holds, else it is a failure.  Returns the number of paths."""
    ex, paths = int_paths(run, hyps, module)
    impl, cases = [], []
    for pc, got in paths:
        if isinstance(got, BaseException):
            if raises is None:
                raise ProofFailure("%s: raises %s: %s on the feasible path %s"
                                   % (what, type(got).__name__, got, z3.And(*pc)))
            cases.append((pc, None, raises(got)))
            continue
        outs = got if isinstance(got, tuple) else (got,)
        cases.append((pc, len(impl), len(outs)))
        impl += [value(o) for o in outs]

    def claim(*t):
        parts = []
        for pc, k, n in cases:
            if k is None:
                parts.append(z3.Implies(z3.And(*pc), n))
            else:
                parts.append(z3.Implies(z3.And(*pc), ok(*t[k:k + n])))
        return z3.And(*parts)
    prove_code(claim, impl, list(hyps), P=ex.P, what="%s (%d paths)" % (what, len(paths)))
    return len(paths)
