"""``ss.explain(f, *args, **kwargs)``: what the compiler makes of ``f`` on these inputs.

It runs ``f`` once the way ``ss.compile`` runs a function with graph breaks (breaks run
eagerly, the array work between them is captured) and reports the captured graphs, each
break as ``'file:line: reason'``, and op counts, like ``torch._dynamo.explain``: N breaks
between array work give N + 1 graphs.  ``try`` / ``with`` statements are breaks
(codegen/protected.py), and a statement the tracer cannot follow (a library call that needs
real arrays) runs eagerly while the work before and after it is captured, as
``ss.compile`` splits the function there.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from symshape.userframe import UserFrame

from . import split as _split
from .breaks import (BreakRecord, LazyRun, SegmentCache, Segment, break_advice,
                     print_hooked, untraceable_break)
from .protected import protected_breaks

MAX_SPLITS = 64         # statements that can become eager, one more per attempt


class Explanation:
    """``graphs`` (captured graphs: ``.nodes``, ``.ops``, ``.op_count``, ``.source``),
    ``graph_count``, ``graph_break_count``, ``break_reasons`` (``'file:line: reason'``),
    ``breaks`` (records with ``.frame`` and ``.reason``), ``remedies`` (per break, what to
    change to remove it), ``op_count``, ``ops_per_graph`` (ops named as each graph's code
    names them), ``result`` (what ``f`` returned).  Not the export log that the command
    ``symshape explain module:function`` prints: this is how ``ss.compile`` splits ``f``."""

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
    def remedies(self) -> List[str]:
        return [break_advice(b.reason) for b in self.breaks]

    @property
    def op_count(self) -> int:
        return sum(g.op_count for g in self.graphs)

    @property
    def ops_per_graph(self) -> List[List[str]]:
        return [g.ops for g in self.graphs]

    def __str__(self) -> str:
        lines = ["Explanation of %s (ss.explain: the graphs ss.compile captures and its "
                 "graph breaks):" % self.name,
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
                lines.append("    remedy: %s" % break_advice(b.reason))
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
    is one more break reason, never an exception: the statement holding it runs eagerly
    and the array work around it is captured (the call starts again with that statement
    split out, its prints already printed not printed again; where the function cannot
    be split, the rest of the call runs eagerly).  Only an error the program also raises
    eagerly propagates."""
    name = getattr(f, "__qualname__", getattr(f, "__name__", "f"))
    fdef = _split.function_ast(f)
    if fdef is not None and not _split.splittable(fdef):
        fdef = None
    static = protected_breaks(f, fdef) if fdef is not None else []
    heads = {r.frame.lineno for r in static}
    eager: Dict[int, BreakRecord] = {}      # line -> the untraceable step there
    skip = 0
    for _ in range(MAX_SPLITS):
        run = LazyRun(f, SegmentCache(), record=True)
        run.skip_prints = skip
        sp = None
        if heads or eager:
            sp = _split.split(f, fdef, set(eager), _lazy_segments(run), heads)
        try:
            if sp is None:
                result = run(args, kwargs)
            else:
                with print_hooked(run._print):
                    result = sp.driver(*args, **kwargs)
        except Exception as e:
            line = _failed_line(e, f, sp)
            if fdef is None or line is None or line in eager:
                return _finish_eagerly(name, f, run, e, static, eager, args, kwargs)
            brk = untraceable_break(e)
            eager[line] = BreakRecord(brk.frame or UserFrame(
                _split.code_of(f).co_filename, line, fdef.name), brk.reason)
            skip = max(skip, run.side_effects)
            continue
        return Explanation(name, run.segments,
                           _in_order(static + list(eager.values()), run.breaks), result)
    return _finish_eagerly(name, f, run, None, static, eager, args, kwargs)


def _lazy_segments(run: LazyRun):
    """``wrap`` for ``split``: each segment is traced into ``run`` on proxies of its
    array inputs and its pending work runs at its end (inside the ``try`` / ``with``
    around it).  Compiled work that raises there is run again by the driver, as written
    (``CompiledRaised``), so the exception, the partial effects and the locals bound
    before it are eager's."""
    def wrap(chunk, raw):
        def segment(*vals):
            new_vals, inputs = run.enter(list(chunk.inputs), list(vals))
            try:
                return run.leave(raw(*new_vals), inputs)
            except Exception as e:
                if run.failed is not e:
                    raise
                run.failed = None
                if chunk.protected:
                    raise _split.CompiledRaised(e) from None
                with print_hooked(lambda a, k, frame: None), _split.quiet_rerun(e):
                    return raw(*vals)
        segment.__name__ = getattr(raw, "__name__", "segment")
        segment.raw = raw
        return segment
    return wrap


def _failed_line(e: BaseException, f, sp) -> Optional[int]:
    """The line of ``f``'s own statements (in ``f``, its rewritten driver or a segment)
    that was running when ``e`` was raised."""
    codes = {_split.code_of(f)}
    if sp is not None:
        codes.add(_split.code_of(sp.driver))
        codes.update(fn.raw.__code__ for fn in sp.fns)
    return _split.break_line(e, codes)


def _finish_eagerly(name, f, run, e, static, eager, args, kwargs) -> Explanation:
    """The tracer cannot go on and the function cannot be split there: what was captured
    so far, and the call run eagerly (its prints already ran and are not repeated)."""
    breaks = static + list(eager.values())
    if e is not None:
        brk = untraceable_break(e)
        run.close_pending()
        run.breaks.append(BreakRecord(brk.frame, brk.reason + "; explain ran the rest of "
                                                              "the call eagerly"))
    with print_hooked(lambda a, k, frame: None):
        result = f(*args, **kwargs)
    return Explanation(name, run.segments, _in_order(breaks, run.breaks), result)


def _in_order(static: List[BreakRecord], seen: List[BreakRecord]) -> List[BreakRecord]:
    """The breaks met while running (in order), with the statements that run as Python
    (try / with, untraceable steps) placed before the first later line of their file."""
    out = list(seen)
    for rec in sorted(static, key=lambda r: r.frame.lineno):
        at = next((i for i, b in enumerate(out) if b.frame is not None and
                   b.frame.filename == rec.frame.filename and
                   b.frame.lineno > rec.frame.lineno and b not in static), len(out))
        out.insert(at, rec)
    return out
