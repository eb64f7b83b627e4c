"""The op table: for every op name, how generated code computes it with NumPy.

Each entry's ``template`` is a ``str.format`` pattern over the rendered inputs
(``{0}``, ``{1}``, ...; ``{inputs}`` for all of them as a tuple) and rendered attributes
(``{axis}``).  The same table drives ``ep.module()``, printing and the compiled backends.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional
from symshape.errors import UserError


class OpDef:
    __slots__ = ("name", "template", "emit_fn", "doc")

    def __init__(self, name: str, template: Optional[str], emit_fn: Optional[Callable],
                 doc: str) -> None:
        self.name = name
        self.template = template
        self.emit_fn = emit_fn
        self.doc = doc

    def emit(self, args, attrs) -> str:
        if self.emit_fn is not None:
            return self.emit_fn(args, attrs)
        return self.template.format(*args, inputs="(%s,)" % ", ".join(args), **attrs)


OPS: Dict[str, OpDef] = {}


def defop(name: str, template: Optional[str] = None, emit: Optional[Callable] = None,
          doc: str = "") -> OpDef:
    op = OPS[name] = OpDef(name, template, emit, doc)
    return op


def lookup(name: str) -> OpDef:
    op = OPS.get(name)
    if op is None:
        raise UserError("unknown op %r (no entry in the op table)" % name)
    return op
