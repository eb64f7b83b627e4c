"""Operands of elementwise ops, as the kernel writers of every target see them."""
from __future__ import annotations

from typing import Optional

import numpy as np

from symshape.capture.ir import Node
from symshape.expr import Expr


class Operand:
    """One operand of an elementwise op: its text in the kernel's language, its dtype (or
    weak Python type), and the Python value when it is a literal scalar (for x ** 2 and
    friends)."""

    __slots__ = ("text", "dtype", "value")

    def __init__(self, text: str, dtype, value=None) -> None:
        self.text = text
        self.dtype = dtype
        self.value = value


def scalar_ok(x) -> bool:
    return x is None or type(x) in (bool, int, float) or type(x) is Expr or \
        isinstance(x, (np.bool_, np.integer, np.floating))


def operand_of(x, text: str = "x") -> Optional[Operand]:
    if x is None:
        return None
    if type(x) is Node:
        return Operand(text, x.dtype)
    if type(x) is Expr:
        return Operand(text, int, value=x)
    if type(x) is bool or isinstance(x, np.bool_):
        return Operand(text, np.dtype(bool), value=bool(x))
    if type(x) is int:
        return Operand(text, int, value=x)
    if type(x) is float:
        return Operand(text, float, value=x)
    if isinstance(x, (np.integer, np.floating)):
        return Operand(text, x.dtype, value=x.item())
    return None

