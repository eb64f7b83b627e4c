"""The op table: for every op name, how generated code computes it with NumPy.

Each entry's ``template`` is a ``str.format`` pattern over the rendered inputs
(``{0}``, ``{1}``, ...; ``{inputs}`` for all of them as a tuple) and rendered attributes
(``{axis}``).  The same table drives ``ep.module()``, printing and the compiled backends.
What an op *is* (kind, ufunc, core name, fusion role, C template) is its ``traits``
(``traits.py``); an op cannot be defined without them.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional
from symshape.errors import UserError

from symshape.errors import InternalError

from .traits import OpTraits, traits_of


class OpDef:
    """One op: its name, how generated NumPy code computes it, and its traits."""

    __slots__ = ("name", "template", "emit_fn", "doc", "traits")

    def __init__(self, name: str, template: Optional[str], emit_fn: Optional[Callable],
                 doc: str, traits: OpTraits) -> None:
        self.name = name
        self.template = template
        self.emit_fn = emit_fn
        self.doc = doc
        self.traits = traits

    def emit(self, args, attrs) -> str:
        """The NumPy source computing the op from rendered inputs and attributes."""
        if self.emit_fn is not None:
            return self.emit_fn(args, attrs)
        return self.template.format(*args, inputs="(%s,)" % ", ".join(args), **attrs)


OPS: Dict[str, OpDef] = {}


def defop(name: str, template: Optional[str] = None, emit: Optional[Callable] = None,
          doc: str = "") -> OpDef:
    """Define op ``name`` (it must have an entry in the traits table)."""
    traits = traits_of(name)
    if traits is None:
        raise InternalError("op %r has no entry in the op traits table (capture/ops/traits.py)"
                            % name)
    op = OPS[name] = OpDef(name, template, emit, doc, traits)
    return op


def lookup(name: str) -> OpDef:
    """The definition of op ``name``; ``UserError`` for an unknown name."""
    op = OPS.get(name)
    if op is None:
        raise UserError("unknown op %r (no entry in the op table)" % name)
    return op
