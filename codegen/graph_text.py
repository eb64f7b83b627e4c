"""The graph as text, in the style of torch.export's ``print(ep.graph)``.

``graph_lines(g)`` is what ``str(ep.graph)`` prints and the graph part of ``str(ep)``: a
``def forward(self, ...)`` whose parameters are the lifted constants and the inputs, then one
line per node -- its name, its dtype and symbolic shape (``"f32[s0, 4]"``), and the NumPy call
with its inputs -- under a ``# File: path:line in f, code: ...`` comment for each user line,
the ``return``, and the bodies of ``cond`` / ``map`` subgraphs.  Everything comes from the
graph itself, so a program loaded from a file prints exactly as the one saved.
"""
from __future__ import annotations

from typing import List

import numpy as np

from symshape.capture.ir import Graph, Subgraph
from symshape.capture.value_text import annotation, dtype_short

from .function_writer import render_outputs
from .pycode import Renderer, emit_node

class _PrintRenderer(Renderer):
    """Renders values that generated code keeps in its namespace as readable text, so the
    printed program names no undefined helper (``_v0``)."""

    labels: dict = {}          # id(object) -> how the user's code names it

    def const(self, v) -> str:
        if id(v) in self.labels:
            return self.labels[id(v)]
        if isinstance(v, np.ndarray):
            return "<%s array %s>" % (dtype_short(v.dtype), list(v.shape))
        label = getattr(v, "__qualname__", None) or getattr(v, "__name__", None)
        if callable(v) and isinstance(label, str):
            return label
        text = repr(v)
        return text if len(text) <= 60 else text[:57] + "..."


def _subgraphs(g: Graph) -> list:
    out = []
    for n in g.nodes:
        for v in n.attrs.values():
            if isinstance(v, Subgraph):
                out.append(v)
                out += _subgraphs(v.graph)
    return out


def _subgraph_text(sub, r) -> List[str]:
    params = ", ".join('%s: "%s"' % (n.name, annotation(n)) for n in sub.inputs)
    lines = ["", "    class %s:" % sub.name, "        def forward(self, %s):" % params]
    for cond, text in sub.checks:
        lines.append("            # run-time check: %s" % text)
    for n in sub.graph.nodes:
        if n.op in ("input", "constant"):
            continue
        lines.append('            %s: "%s" = %s' % (n.name, annotation(n), emit_node(n, r)))
    outs = ", ".join(r.value(o) for o in sub.graph.outputs)
    lines.append("            return (%s,)" % outs)
    return lines


def graph_lines(g: Graph) -> List[str]:
    """The lines of the printed graph (see the module docstring), each indented by 4."""
    params = ['%s: "%s"' % (n.name, annotation(n)) for n in g.constants + g.inputs]
    lines = ["    def forward(self, %s):" % ", ".join(params)]
    last = None
    r = _PrintRenderer({n: n.name for n in g.nodes}, {})
    r.labels = {id(n.attrs["source"]): n.attrs["path"] for n in g.nodes
                if "source" in n.attrs and n.attrs.get("path")}
    for n in g.nodes:
        if n.op in ("input", "constant"):
            continue
        if n.frame is not None and (n.frame.filename, n.frame.lineno) != last:
            last = (n.frame.filename, n.frame.lineno)
            lines.append("        # File: %s" % n.frame.describe())
        lines.append('        %s: "%s" = %s' % (n.name, annotation(n), emit_node(n, r)))
    lines.append("        return %s" % render_outputs(g.out_spec, g.outputs, r))
    for sub in _subgraphs(g):
        lines += _subgraph_text(sub, r)
    return lines

