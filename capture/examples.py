"""The example's value of a traced array, for an op whose result dtype NumPy picks from
the values (``np.linalg.eig`` / ``eigvals``: real when every eigenvalue is real).

The trace follows eager NumPy on the example: export knows the example inputs
(``Tracer.examples``, filled by ``export``), state arrays are constants holding their value,
and the graph traced so far is functional, so the array's value on the example is the
stretch of graph it depends on, run as ``ep.module()`` runs it (``codegen.pycode.evaluate``
through ``STAGES["evaluate"]``: capture never imports the code generator).  Under the JIT's
run through graph breaks the inputs are the call's own arrays (``breaker.vals``).
"""
from __future__ import annotations

import warnings
from typing import Any, Dict, Optional

import numpy as np

from . import STAGES
from .ir import Node


def example_value(t, x) -> Optional[np.ndarray]:
    """``x``'s value on the example inputs, or None when the trace cannot compute it (it
    depends on a random draw, on the arguments of a branch being traced, which are inputs
    of its subgraph without an example, or the run failed)."""
    target = x.node
    values: Dict[Node, Any] = dict(t.examples)
    vals = getattr(t.breaker, "vals", None)
    if vals:
        values.update({n: v for n, v in vals.items() if n.op == "input"})
    need = set()
    stack = [target]
    while stack:
        n = stack.pop()
        if n in need:
            continue
        need.add(n)
        if n.meta.get("effect"):
            # a random draw (or another effect): running it here would draw numbers (and
            # advance a generator) that the example's run does not
            return None
        if n not in values:
            stack.extend(n.input_nodes())
    # a node binding a data-dependent size runs too: later nodes name that size
    nodes = [n for n in t.graph.nodes
             if n in need or "binds" in n.meta or "binds_value" in n.meta]
    if target not in nodes:
        nodes.append(target)
    sizes = {info.sym.name: info.hint for info in t.env.infos.values()
             if info.hint is not None}
    try:
        # the example's run warned already, if it does (eager code, or the program)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return np.asarray(STAGES["evaluate"](nodes, target, values, sizes))
    except Exception:
        return None
