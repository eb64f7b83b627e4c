"""A CUDA kernel's source around its body: the parameter list, the comment head, the
device helpers it calls, the index type and the launch bounds."""
from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

from symshape.capture.ir import Node
from symshape.capture.value_text import dtype_short
from symshape.algebra.expr import format_expr

from . import cops
from .cops import STORAGE
from .ctext import ROW_HELPERS, fmt_shape

#: what the head says of each index mode
INDEX_NOTE = {
    "int32": "32-bit (the ranges prove every index < 2**31)",
    "int64": "64-bit (the sizes provably reach 2**31)",
    "dual": "32-bit, or 64-bit when compiled with -DSS_INDEX64 (chosen per call)",
}
#: ``idx_t`` per index mode
TYPEDEF = {"int32": ["typedef int idx_t;"], "int64": ["typedef long long idx_t;"],
           "dual": ["#ifdef SS_INDEX64", "typedef long long idx_t;", "#else",
                    "typedef int idx_t;", "#endif"]}
#: how the head names each role of a root
ROLE = {"reduce": "reduce", "out": "write ", "rowout": "write (per row)"}


def array_params(outs: Sequence[Node], out_names: Dict[Node, str], loads: Sequence[Node],
                 bufs: Dict[Node, str]) -> Tuple[List[Tuple[str, str]], List[Tuple[str, Any]]]:
    """The parameters (C type, name) and arguments of the arrays written and read."""
    params: List[Tuple[str, str]] = []
    args: List[Tuple[str, Any]] = []
    for n in outs:
        params.append(("%s* __restrict__" % STORAGE[n.dtype.name], out_names[n]))
        args.append(("out", n))
    for n in loads:
        params.append(("const %s* __restrict__" % STORAGE[n.dtype.name], bufs[n]))
        args.append(("in", n))
    return params, args


def head(spec, kind: str, outs: Sequence[Node], sizes: Dict[Any, str], index: str
         ) -> List[str]:
    """The comment opening a kernel: its domain, its roots, the sizes that are not
    symbols, and its index arithmetic."""
    lines = ["// symshape %s kernel over %s%s" % (
        kind, fmt_shape(spec.shape),
        "" if spec.axes is None else ", reducing axes %s" % (tuple(spec.axes),))]
    for n, role in spec.roots:
        lines.append("//   %s: %s %s[%s]%s" % (
            ROLE[role], n.name, dtype_short(n.dtype),
            ", ".join(format_expr(s) for s in n.shape),
            "" if role != "reduce" or n in outs else " (kept in registers)"))
    for e, name in sizes.items():
        if e.as_symbol() is None:
            lines.append("//   %s = %s" % (name, format_expr(e)))
    lines.append("//   index arithmetic: %s" % INDEX_NOTE[index])
    return lines


def helper_block(helpers: set) -> str:
    """The device helpers the kernel calls: ``cops``' and the merged phases' own (each
    under an include guard, so kernels can share one translation unit)."""
    own = sorted(h for h in helpers if h in ROW_HELPERS)
    text = cops.helper_source(helpers - set(own))
    for h in own:
        guard = "SS_HELPER_%s" % h.upper()
        text += "\n#ifndef %s\n#define %s\n%s\n#endif" % (guard, guard, ROW_HELPERS[h])
    return text.strip("\n")
