"""``ss.explain(f, *args, **kwargs)``: what the compiler makes of ``f`` on these inputs.

It runs ``f`` once the way ``ss.compile`` runs a function with graph breaks (breaks run
eagerly, the array work between them is captured) and reports the captured graphs, each
break as ``'file:line: reason'``, and op counts, like ``torch._dynamo.explain``.
"""
from __future__ import annotations

from typing import List

from .breaks import (BreakRecord, LazyRun, SegmentCache, Segment, print_hooked,
                     untraceable_break)


class Explanation:
    """``graphs`` (captured graphs: ``.nodes``, ``.ops``, ``.op_count``, ``.source``),
    ``graph_count``, ``graph_break_count``, ``break_reasons`` (``'file:line: reason'``),
    ``breaks`` (records with ``.frame`` and ``.reason``), ``op_count``, ``ops_per_graph``,
    ``result`` (what ``f`` returned)."""

    def __init__(self, name: str, graphs: List[Segment], breaks: List[BreakRecord],
                 result) -> None:
        self.name = name
        self.graphs = graphs
        self.breaks = breaks
        self.result = result

    @property
    def graph_count(self) -> int:
        return len(self.graphs)

    @property
    def graph_break_count(self) -> int:
        return len(self.breaks)

    @property
    def break_reasons(self) -> List[str]:
        return [str(b) for b in self.breaks]

    @property
    def op_count(self) -> int:
        return sum(g.op_count for g in self.graphs)

    @property
    def ops_per_graph(self) -> List[List[str]]:
        return [g.ops for g in self.graphs]

    def __str__(self) -> str:
        lines = ["Explanation of %s:" % self.name,
                 "Graph Count: %d" % self.graph_count,
                 "Graph Break Count: %d" % self.graph_break_count,
                 "Op Count: %d" % self.op_count]
        if self.breaks:
            lines.append("Break Reasons:")
            for i, b in enumerate(self.breaks):
                lines.append("  Break Reason %d: %s" % (i + 1, b))
                code = b.frame.code if b.frame is not None else ""
                if code:
                    lines.append("    %s" % code)
        lines.append("Ops per Graph:")
        for i, g in enumerate(self.graphs):
            lines.append("  Graph %d (%d ops): %s" % (i + 1, g.op_count, ", ".join(g.ops)))
            for line in g.source.splitlines():
                lines.append("      %s" % line)
        return "\n".join(lines)

    __repr__ = __str__

    def draw(self, path) -> str:
        """Draw the captured graphs and the graph breaks (line, code, reason) to ``path``,
        as ``ExportedProgram.draw`` does (``.html``, ``.svg``, ``.png``, ``.dot``)."""
        from .draw import explanation_picture, write
        return write(explanation_picture(self), path)


def explain(f, *args, **kwargs) -> Explanation:
    """Run ``f(*args, **kwargs)`` once through the compiler and report its graphs and
    graph breaks.  A step the tracer cannot follow (a library call that needs a real array)
    is one more break reason, never an exception: the report holds the graphs captured up
    to it, and the call is finished eagerly (its prints already ran and are not repeated).
    Only an error the program also raises eagerly propagates."""
    run = LazyRun(f, SegmentCache(), record=True)
    try:
        result = run(args, kwargs)
    except Exception as e:
        brk = untraceable_break(e)
        run.close_pending()
        run.breaks.append(BreakRecord(brk.frame, brk.reason + "; explain ran the rest of "
                                                              "the call eagerly"))
        with print_hooked(lambda a, k, frame: None):
            result = f(*args, **kwargs)
    return Explanation(getattr(f, "__qualname__", getattr(f, "__name__", "f")),
                       run.segments, run.breaks, result)
