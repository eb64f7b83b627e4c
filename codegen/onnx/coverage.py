"""The op and dtype table of ``docs/onnx.md``, generated from the rule tables.

Each cell says how a core op computes a dtype in the model: ``yes`` (in that dtype),
a dtype name (computed in that wider dtype and cast back, exactly), ``no`` (refused by
``to_onnx`` with a ``UserError``) or empty (NumPy does not define the op for it, or the op
has no dtype of its own).  ``python -m symshape.codegen.onnx.coverage`` prints it;
``tests/codegen/onnx`` checks the page holds exactly this text.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional

import numpy as np

from .dtypes import DTYPES, compute_dtype
from .elementwise import RULES as EW
from .movement import MATMUL
from .reductions import MINMAX, SAME_BITS, SCAN_NATIVE, SUM, TOPK
from .datadep import UNIQUE
from .rules import CONVERTERS, REFUSED

Cell = Callable[[np.dtype], str]

_SHORT = {"bool": "b", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
          "float16": "f16", "float32": "f32", "float64": "f64"}


def _via(comp: Optional[np.dtype], dt: np.dtype) -> str:
    if comp is None:
        return "no"
    return "yes" if comp == dt else _SHORT[comp.name]


def _ew(op: str) -> Cell:
    rule = EW[op]

    def cell(dt):
        if not rule.kinds:
            return "no"
        if dt.kind not in rule.kinds:
            return ""
        if rule.loop == "bool":         # logical ops: each operand's truth value, exactly
            return "yes"
        return _via(compute_dtype(dt, rule.native), dt)
    return cell


def _sum(dt):
    comp = dt if dt.name in SUM else np.dtype(SAME_BITS.get(dt.name, dt.name))
    return _via(comp if comp.name in SUM else None, dt)


def _ordered(dt):
    if dt.name == "uint64":
        return "yes"
    return _via(compute_dtype(dt, MINMAX) if dt.kind != "b" else np.dtype("uint8"), dt)


def _sorted(dt):
    if dt.name == "uint64":
        return "yes"
    comp = compute_dtype(dt, MINMAX) if dt.kind != "b" else np.dtype("uint8")
    return _via(comp if comp.name in TOPK else np.dtype("int64"), dt)


def _cumsum(dt):
    return _scan(dt) if dt.name == "float16" else _sum(dt)


def _scan(dt):
    return _via(compute_dtype(dt, SCAN_NATIVE), dt)


def _unique(dt):
    if dt.name == "uint64":
        return "yes"
    return _via(compute_dtype(dt, UNIQUE) if dt.kind != "b" else np.dtype("int8"), dt)


def _matmul(dt):
    return _via(compute_dtype(dt, MATMUL), dt)


def _any(dt):
    return "yes"


SPECIAL: Dict[str, Cell] = {
    "sum": _sum, "prod": _sum, "max": _ordered, "min": _ordered, "argmax": _ordered,
    "argmin": _ordered, "sort": _sorted, "argsort": _sorted, "cumulative_sum": _cumsum,
    "cumulative_prod": _scan,
    "unique": _unique, "matmul": _matmul, "astype": _any, "where": _any,
}


def cell_of(op: str) -> Cell:
    """How op ``op`` fills its row of the table: a function of the dtype."""
    if op in REFUSED:
        return lambda dt: "no"
    if op in EW:
        return _ew(op)
    return SPECIAL.get(op, _any)


def table(ops: Optional[List[str]] = None) -> str:
    """The Markdown table: one row per op, one column per dtype."""
    ops = sorted(set(CONVERTERS) | set(REFUSED)) if ops is None else ops
    head = "| op | " + " | ".join(_SHORT[d.name] for d in DTYPES) + " |"
    rule = "|---|" + "---|" * len(DTYPES)
    rows = [head, rule]
    for op in ops:
        cell = cell_of(op)
        rows.append("| `%s` | %s |" % (op, " | ".join(cell(d) for d in DTYPES)))
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
