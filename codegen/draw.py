"""Pictures of graphs: ``ep.draw(path)`` and ``ss.explain(...).draw(path)``.

A picture is a list of panels (one per graph: the program, a ``cond`` branch, a compiled
segment of ``ss.compile``; or one per graph break) and a legend (the sizes, where they come
from and their ranges; the guards). Each node box shows the node's name and op, its dtype and
symbolic shape, and the user line that made it, so a reader sees where a size is specialised
or a guard comes from.

Written three ways, by the path's suffix:

* ``.html``: one self-contained page, the picture as inline SVG (laid out here: no
  dependency), the legend as text;
* ``.svg`` / ``.png``: through graphviz's ``dot`` when it is on PATH (an optional tool, never
  a dependency); ``.svg`` without ``dot`` is the page's inline SVG with the legend drawn
  above the panels, ``.png`` without ``dot`` is a UserError saying what to install or write
  instead;
* ``.dot``: the graphviz source.
"""
from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import textwrap
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

from symshape.errors import UserError

from symshape.capture.ir import Node, Subgraph
from symshape.capture.value_text import annotation

from .breaks import break_advice

BOX_W = 300          # px: a box, wide enough for ~44 characters of 11px monospace
CHAR_W = 6.7         # px: one character of 11px monospace (a little over 0.6 em)
LINE_H = 15          # px per text line
GAP_X, GAP_Y = 24, 34
MAX_CHARS = 44       # longer text is cut in a node's box; the box's tooltip holds all of it
WRAP_CHARS = 110     # a graph break's box wraps its reason here, never cutting it
PER_LINE = 6         # boxes side by side, at most
PAGE_W = 1240        # px: panels sit side by side while they fit this width (a 1280 px page)
FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"   # one whose "_" shows at 10-11 px


@dataclass
class Box:
    """One node (or one graph break) as drawn: ``lines`` are shown, ``tooltip`` on hover."""
    key: str
    lines: List[str]
    kind: str = "op"                     # input | constant | op | output | break
    tooltip: str = ""

    @property
    def width(self) -> int:
        """A node's box is BOX_W (its lines cut to fit); a break's grows to its text."""
        if self.kind != "break":
            return BOX_W
        return max(BOX_W, int(max(len(l) for l in self.lines) * CHAR_W) + 16)


@dataclass
class Panel:
    """One graph: its boxes in execution order and the edges between them (box keys)."""
    title: str
    boxes: List[Box]
    edges: List[Tuple[str, str]] = field(default_factory=list)


@dataclass
class Picture:
    """What gets drawn: a title, the panels in order, and the legend's sections."""
    title: str
    panels: List[Panel]
    legend: List[Tuple[str, List[str]]] = field(default_factory=list)


# --------------------------------------------------------------------------- graphs to panels
def _where(node: Node) -> Tuple[str, str]:
    """('file.py:12', 'h = x @ W') for a node with a user frame."""
    f = node.frame
    if f is None:
        return "", ""
    return "%s:%d" % (os.path.basename(f.filename), f.lineno), f.code


_NUMBERED = re.compile(r"_\d+$")     # the suffix that keeps a repeated name apart


def node_box(node: Node) -> Box:
    """The box of one node: ``name = op`` (the name alone when it is the op's,
    ``matmul``, ``sum_1``), ``dtype[shape]``, ``file:line``, the code."""
    kind = node.op if node.op in ("input", "constant") else "op"
    named_for_op = _NUMBERED.sub("", node.name) == node.op
    head = node.name if kind != "op" or named_for_op else "%s = %s" % (node.name, node.op)
    if kind == "constant" and node.attrs.get("target"):
        head = "%s (%s)" % (node.name, node.attrs["target"])
    loc, code = _where(node)
    lines = [head, annotation(node)] + [t for t in (loc, code) if t]
    full = [head, annotation(node)]
    if node.frame is not None:
        full.append(node.frame.describe())
    return Box(node.name, lines, kind, "\n".join(full))


def graph_panel(title: str, nodes: Sequence[Node], outputs: Sequence = ()) -> Panel:
    """A panel of ``nodes`` with an edge from each input node among them to its user, and
    an ``output`` box fed by the graph's output nodes."""
    boxes = [node_box(n) for n in nodes]
    present = {n.name for n in nodes}
    edges = []
    for n in nodes:
        for i in n.input_nodes():
            if i.name in present:
                edges.append((i.name, n.name))
    outs = [o for o in outputs if isinstance(o, Node) and o.name in present]
    if outs:
        boxes.append(Box("__output__", ["output"], "output",
                         "returns " + ", ".join(o.name for o in outs)))
        edges += [(o.name, "__output__") for o in outs]
    return Panel(title, boxes, edges)


def _subgraph_panels(nodes: Sequence[Node]) -> List[Panel]:
    out = []
    for n in nodes:
        for attr, v in n.attrs.items():
            if isinstance(v, Subgraph):
                out.append(graph_panel("%s: %s of %s" % (v.name, attr, n.name),
                                       list(v.inputs) + [m for m in v.graph.nodes
                                                         if m not in v.inputs],
                                       v.graph.outputs))
                out += _subgraph_panels(v.graph.nodes)
    return out


def program_picture(ep) -> Picture:
    """The picture of an ExportedProgram: its graph (and ``cond`` / loop bodies), the sizes
    with the input axes they stand for and their ranges, and the guards."""
    g = ep.graph
    panels = [graph_panel("graph of %s" % ep.name, g.nodes, g.outputs)]
    panels += _subgraph_panels(g.nodes)
    axes: Dict[str, List[str]] = {}
    for path, shape in ep.input_shapes.items():
        for i, s in enumerate(shape):
            if not isinstance(s, int):
                axes.setdefault(str(s), []).append("%s.shape[%d]" % (path, i))
    sizes = []
    for sym, vr in ep.range_constraints.items():
        where = axes.get(str(sym))
        sizes.append("%s%s in %s" % (sym, " = " + " = ".join(where) if where else "", vr))
    legend = [("sizes", sizes or ["all sizes static"])]
    if ep.guards:
        legend.append(("guards", list(ep.guards)))
    return Picture("ExportedProgram %s" % ep.name, panels, legend)


def explanation_picture(ex) -> Picture:
    """The picture of an ``ss.explain`` result: each captured graph, and each graph break as
    a box with its line and reason, in source-line order."""
    items = []
    for i, seg in enumerate(ex.graphs):
        first = next((n.frame for n in seg.nodes if n.frame is not None), None)
        items.append((first, 0, graph_panel("graph %d (%d ops)" % (i + 1, seg.op_count),
                                            seg.nodes)))
    for i, b in enumerate(ex.breaks):
        code = b.frame.code if b.frame is not None else ""
        loc = ("%s:%d" % (os.path.basename(b.frame.filename), b.frame.lineno)
               if b.frame is not None else "")
        reason = textwrap.wrap(b.reason, WRAP_CHARS) + \
            textwrap.wrap("remedy: " + break_advice(b.reason), WRAP_CHARS)
        box = Box("break%d" % i, ["graph break %d" % (i + 1)] +
                  [t for t in (loc, code) if t] + reason, "break", str(b))
        items.append((b.frame, 1, Panel("break %d" % (i + 1), [box])))
    if all(f is not None for f, _, _ in items):
        items.sort(key=lambda t: (t[0].filename, t[0].lineno, t[1]))
    legend = [("graph breaks", [_break_line(b) for b in ex.breaks] or ["none: one graph"])]
    return Picture("explain(%s)" % ex.name, [p for _, _, p in items], legend)


def _break_line(b) -> str:
    """``file.py:12: reason`` (the file's name, as the boxes show it)."""
    if b.frame is None:
        return b.reason
    return "%s:%d: %s" % (os.path.basename(b.frame.filename), b.frame.lineno, b.reason)


# --------------------------------------------------------------------------- layout
def _layers(panel: Panel) -> Dict[str, int]:
    """Each box's row: one below the lowest of its inputs (a longest-path layering)."""
    row: Dict[str, int] = {}
    preds: Dict[str, List[str]] = {}
    for a, b in panel.edges:
        preds.setdefault(b, []).append(a)
    for box in panel.boxes:                  # boxes are in execution order
        row[box.key] = 1 + max((row[p] for p in preds.get(box.key, ()) if p in row),
                               default=-1)
    return row


def _box_h(box: Box) -> int:
    return 10 + LINE_H * len(box.lines)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1] + "\u2026"


_FILL = {"input": "#e3f0ff", "constant": "#eeeeee", "op": "#ffffff", "output": "#e6f6e6",
         "break": "#ffe3e3"}
_STROKE = {"break": "#c0392b", "output": "#2e7d32"}


def _edge(src: Tuple[int, int, int, int], dst: Tuple[int, int, int, int]) -> str:
    """The path of an edge from the bottom of one box to the top of another. An edge to the
    next line is one curve; a longer one runs down the gap right of its boxes, so it never
    crosses the boxes of the lines in between."""
    (xa, ya, ha, wa), (xb, yb, _, wb) = src, dst
    x1, y1, x2, y2 = xa + wa // 2, ya + ha, xb + wb // 2, yb - 2
    if y2 - y1 <= GAP_Y + 2:
        mid = (y1 + y2) // 2
        return "M%d,%d C%d,%d %d,%d %d,%d" % (x1, y1, x1, mid, x2, mid, x2, y2)
    gx = max(xa + wa, xb + wb) + GAP_X // 2
    d = GAP_Y // 2
    return ("M%d,%d C%d,%d %d,%d %d,%d L%d,%d C%d,%d %d,%d %d,%d"
            % (x1, y1, x1, y1 + d, gx, y1, gx, y1 + d, gx, y2 - d,
               gx, y2, x2, y2 - d, x2, y2))


def _panel_svg(panel: Panel, y0: int) -> Tuple[List[str], int, int]:
    """SVG elements of one panel placed at height ``y0``; its (elements, width, height)."""
    row = _layers(panel)
    rows: Dict[int, List[Box]] = {}
    for box in panel.boxes:
        rows.setdefault(row[box.key], []).append(box)
    pos: Dict[str, Tuple[int, int, int, int]] = {}          # key -> (x, y, h, w)
    y = y0 + 28
    width = 0
    for r in sorted(rows):
        # a wide layer (a model's forty weights) wraps onto several lines of PER_LINE boxes
        for start in range(0, len(rows[r]), PER_LINE):
            line = rows[r][start:start + PER_LINE]
            x = 10
            for box in line:
                pos[box.key] = (x, y, _box_h(box), box.width)
                x += box.width + GAP_X
                width = max(width, x)      # room for a gap edge
            y += max(_box_h(b) for b in line) + GAP_Y
    out = ['<text x="10" y="%d" class="panel">%s</text>' % (y0 + 18, html.escape(panel.title))]
    for a, b in panel.edges:
        out.append('<path d="%s" class="edge" marker-end="url(#arrow)"/>' % _edge(pos[a], pos[b]))
    for box in panel.boxes:
        x, by, h, w = pos[box.key]
        out.append('<g class="node %s"><title>%s</title>' % (box.kind, html.escape(box.tooltip)))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" rx="4" fill="%s" stroke="%s"/>'
                   % (x, by, w, h, _FILL[box.kind], _STROKE.get(box.kind, "#555555")))
        for k, line in enumerate(box.lines):
            cls = "head" if k == 0 else ("shape" if k == 1 and box.kind != "break" else "src")
            text = line if box.kind == "break" else _cut(line)
            out.append('<text x="%d" y="%d" class="%s">%s</text>'
                       % (x + 8, by + 17 + k * LINE_H, cls, html.escape(text)))
        out.append("</g>")
    return out, max(width, 200), y - y0


def _legend_svg(picture: Picture) -> Tuple[List[str], int, int]:
    """The legend (sizes, guards, graph breaks) as SVG text lines at the top; its
    (elements, width, height)."""
    out: List[str] = []
    y, width = 0, 0
    for heading, lines in picture.legend:
        y += 20
        out.append('<text x="10" y="%d" class="panel">%s</text>' % (y, html.escape(heading)))
        for line in lines:
            y += LINE_H
            out.append('<text x="18" y="%d" class="legend">%s</text>' % (y, html.escape(line)))
            width = max(width, int(len(line) * CHAR_W) + 28)
    return out, width, y + 10 if out else 0


def render_svg(picture: Picture, legend: bool = True) -> str:
    """The panels as one standalone SVG document (text as text, so it can be searched),
    the legend above them unless ``legend=False`` (the page shows it as text)."""
    body, width, y = [], 200, 0
    if legend:
        body, width, y = _legend_svg(picture)
        width = max(width, 200)
    # panels flow left to right while they fit the page, then start a new row
    x, row_h = 0, 0
    for panel in picture.panels:
        elements, w, h = _panel_svg(panel, 0)
        if x and x + w > PAGE_W:
            x, y, row_h = 0, y + row_h + 10, 0
        body.append('<g transform="translate(%d,%d)">' % (x, y))
        body += elements
        body.append("</g>")
        x, row_h = x + w, max(row_h, h)
        width = max(width, x)
    y += row_h
    head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
            'viewBox="0 0 %d %d" font-family="%s" font-size="11">' % (width, y, width, y, FONT))
    style = ("<style>.panel{font-weight:bold;font-size:13px}.head{font-weight:bold}"
             ".shape{fill:#1a4f8b}.src{fill:#666666}.legend{fill:#333333}"
             ".edge{fill:none;stroke:#888888}</style>")
    defs = ('<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#888888"/>'
            '</marker></defs>')
    return "\n".join([head, style, defs] + body + ["</svg>"]) + "\n"


def render_html(picture: Picture) -> str:
    """One self-contained HTML page: the legend as text, then the picture as inline SVG."""
    parts = ["<!DOCTYPE html>", '<html><head><meta charset="utf-8">',
             "<title>%s</title>" % html.escape(picture.title),
             "<style>body{font-family:sans-serif;margin:1em}pre{background:#f6f6f6;"
             "padding:.5em}</style></head><body>",
             "<h1>%s</h1>" % html.escape(picture.title)]
    for heading, lines in picture.legend:
        parts.append("<h2>%s</h2>" % html.escape(heading))
        parts.append("<pre>%s</pre>" % html.escape("\n".join(lines)))
    parts.append(render_svg(picture, legend=False))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _dot_text(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def render_dot(picture: Picture) -> str:
    """The graphviz source: a cluster per panel, a box per node, the legend as a note."""
    # Courier: graphviz knows its metrics, and browsers draw it (Liberation Mono, Courier
    # New) with a visible "_"; with "monospace" at 10 px Chromium loses it (c_W read "c W")
    lines = ['digraph symshape {', '  node [shape=box, fontname="Courier", fontsize=11];',
             '  label="%s"; labelloc=t;' % _dot_text(picture.title)]
    for i, panel in enumerate(picture.panels):
        lines.append('  subgraph cluster_%d {' % i)
        lines.append('    label="%s";' % _dot_text(panel.title))
        for box in panel.boxes:
            label = "\\l".join(_dot_text(l) for l in box.lines) + "\\l"
            lines.append('    "p%d_%s" [label="%s", style=filled, fillcolor="%s"];'
                         % (i, _dot_text(box.key), label, _FILL[box.kind]))
        for a, b in panel.edges:
            lines.append('    "p%d_%s" -> "p%d_%s";' % (i, _dot_text(a), i, _dot_text(b)))
        lines.append("  }")
    if picture.legend:
        text = "\\l".join(_dot_text("%s: %s" % (h, l)) for h, ls in picture.legend for l in ls)
        lines.append('  legend [shape=note, label="%s\\l"];' % text)
    lines.append("}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- writing
def write(picture: Picture, path) -> str:
    """Write ``picture`` to ``path`` in the format its suffix names; return the path."""
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext in (".html", ".htm"):
        data = render_html(picture)
    elif ext == ".dot":
        data = render_dot(picture)
    elif ext in (".svg", ".png"):
        dot = shutil.which("dot")
        if dot is None:
            if ext == ".png":
                raise UserError("drawing %s needs graphviz's `dot` on PATH (install graphviz), "
                                "or draw to a .html or .svg file, which need nothing" % path)
            data = render_svg(picture)
        else:
            done = subprocess.run([dot, "-T" + ext[1:], "-o", path],
                                  input=render_dot(picture).encode("utf-8"),
                                  capture_output=True, timeout=120)
            if done.returncode != 0:
                raise UserError("graphviz's dot could not draw %s: %s; draw to a .html file "
                                "instead" % (path, done.stderr.decode(errors="replace").strip()))
            return path
    else:
        raise UserError("cannot draw to %s: name a .html (self-contained page), .svg, .png "
                        "(through graphviz) or .dot file" % path)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(data)
    return path
