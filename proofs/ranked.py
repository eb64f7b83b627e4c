"""A shape rule run on operands of *symbolic rank*: proofs for every rank, not a sweep.

A rule of ``capture/ops`` that reads its operands only through ``ndim`` (and hands each
one whole to other rules) can run on ``Ranked`` operands, whose ``ndim`` is a Z3 integer
``>= 0`` (a ``symcoeff.SInt``: every test of it branches through ``symexec.Explorer``), and
whose every other read fails the proof.  The callees it hands an operand to are replaced
by recorders (``Call``): the proof then states, path by path, which callee each operand
went to for which ranks -- the callees' own proofs cover what they compute.
"""
from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Callable, Dict, List, NamedTuple, Sequence, Tuple

import z3

from .intpaths import int_paths
from .pyint import ProofFailure
from .symcoeff import SInt

__all__ = ["Ranked", "Call", "recorders", "patched_name", "scope_of", "ranked_paths"]


class _Scope:
    """A function's globals as a module: what ``setattr`` / ``vars`` patch (the names the
    function itself reads, also when a test replaced it by a mutated copy)."""


def scope_of(fn: Callable) -> object:
    """The global namespace ``fn`` (unwrapped) reads its names from, as a module."""
    scope = _Scope()
    scope.__dict__ = inspect.unwrap(fn).__globals__
    return scope


@contextmanager
def patched_name(module, name: str, value):
    """``module.name`` is ``value`` while patched."""
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


class Ranked:
    """An operand whose rank is the Z3 integer ``name.ndim`` (``>= 0``); any other read
    than ``ndim`` (its sizes, its dtype, an iteration) fails the proof."""

    def __init__(self, name: str, ndim=None) -> None:
        self.__dict__["name"] = name
        self.__dict__["ndim"] = SInt(z3.Int("%s.ndim" % name)) if ndim is None else ndim

    def __getattr__(self, k):
        raise ProofFailure("the rule reads %s of the operand %s, not its rank alone"
                           % (k, self.__dict__["name"]))

    def __iter__(self):
        raise ProofFailure("the rule iterates over the operand %s" % self.__dict__["name"])

    def __repr__(self) -> str:
        return self.__dict__["name"]


class Call(NamedTuple):
    """A recorded call of a callee: its name and the arguments after the tracer."""
    fn: str
    args: tuple


@contextmanager
def recorders(module, names: Sequence[str], results: Dict[str, Callable] = None):
    """``module``'s functions ``names`` replaced while patched by recorders: each returns
    ``Call(name, args)`` (the tracer argument dropped), or ``results[name](*args)``."""
    results = results or {}
    saved = {n: getattr(module, n) for n in names}

    def recorder(n):
        def rec(t, *args, **kw):
            args = args + tuple(kw[k] for k in sorted(kw))
            return results[n](*args) if n in results else Call(n, args)
        return rec
    for n in names:
        setattr(module, n, recorder(n))
    try:
        yield
    finally:
        for n, f in saved.items():
            setattr(module, n, f)


def ranked_paths(run: Callable[[], object], ops: Sequence[Ranked], module
                 ) -> Tuple[object, List[Tuple[List, object]]]:
    """``run()`` on every feasible path, every operand's rank ``>= 0``: the explorer and
    (path condition, result or exception) per path (``intpaths.int_paths``)."""
    return int_paths(run, [o.ndim.v >= 0 for o in ops], module)
