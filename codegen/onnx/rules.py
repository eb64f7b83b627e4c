"""The op table: every core op (``docs/core_ops.md``) and how it becomes ONNX.

``CONVERTERS`` maps an op name to the function writing its nodes (``fn(cx, node)`` returns
the ONNX value, or a list of values for a node with several outputs).  Elementwise ops
share one converter driven by the ``elementwise.RULES`` table.  ``REFUSED`` names the core
ops with no exact ONNX form and why; ``to_onnx`` refuses them (and any op outside both
tables) with a ``UserError`` naming the op and the user's line.
"""
from __future__ import annotations

from typing import Callable, Dict

from . import control, datadep, elementwise, movement, reductions

CONVERTERS: Dict[str, Callable] = {}
CONVERTERS.update({op: elementwise.convert_ew for op, r in elementwise.RULES.items()
                   if r.kinds})
CONVERTERS.update(movement.RULES)
CONVERTERS.update(reductions.RULES)
CONVERTERS.update(datadep.RULES)
CONVERTERS.update(control.RULES)

#: core ops without an exact ONNX form onnxruntime runs, and why
REFUSED: Dict[str, str] = {
    "nextafter": "ONNX has no bit cast to step a float by one ulp",
}
