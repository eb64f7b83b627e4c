"""``ep.draw(path)`` and ``ss.explain(...).draw(path)``: the pictures hold, as text, each
node's op, symbolic shape and user line, the sizes with their ranges and the guards, and the
graph breaks with their lines and reasons. The text is checked, never pixels."""
import html
import os
import re
import shutil

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.codegen import draw

W = np.ones((16, 8), np.float32)


def head(x, mask):
    h = np.maximum(x @ W, 0)
    h = h * mask[:, :, None]
    return h.sum(axis=1)


def exported():
    return ss.export(head, (np.ones((4, 12, 16), np.float32), np.ones((4, 12), np.float32)),
                     dynamic_shapes={"x": (Dim.AUTO, Dim.AUTO, None),
                                     "mask": (Dim.AUTO, Dim.AUTO)})


def line_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, l in enumerate(lines) if text in l)


def svg_texts(page):
    """The text elements of the SVG, unescaped."""
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", page)]


def test_html_page_shows_ops_shapes_and_lines(tmp_path):
    ep = exported()
    path = ep.draw(tmp_path / "head.html")
    page = open(path, encoding="utf-8").read()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert "<script" not in page and "http" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")               # self-contained
    texts = svg_texts(page)
    for node in ep.graph.nodes:                                  # every node, by name and shape
        assert any(t.startswith(node.name) for t in texts), node.name
    assert "matmul" in texts and "f32[s0, s1, 8]" in texts     # the name alone: it is the op's
    assert "sum_1" in texts and "f32[s0, 8]" in texts
    assert "x" in texts and "f32[s0, s1, 16]" in texts and "c_W (W)" in texts
    here = os.path.basename(__file__)
    assert "%s:%d" % (here, line_of(head, "x @ W")) in texts
    assert "h = h * mask[:, :, None]" in texts
    # the legend: each size with the axes it stands for and its range
    assert "s0 = x.shape[0] = mask.shape[0] in VR[2, int_oo]" in html.unescape(page)
    # one box per node, plus the output
    assert page.count('<g class="node') == len(ep.graph.nodes) + 1


def test_guards_and_ranges_are_in_the_legend(tmp_path):
    def f(x, y):
        assert x.shape[0] + y.shape[0] <= 100
        return x.sum() + y.sum()

    ep = ss.export(f, (np.ones(5), np.ones(7)), dynamic_shapes={"x": (Dim.AUTO,),
                                                                 "y": (Dim.AUTO,)})
    assert ep.guards
    page = html.unescape(open(ep.draw(tmp_path / "f.html"), encoding="utf-8").read())
    assert "<h2>guards</h2>" in page
    for g in ep.guards:
        assert g in page


def test_svg_and_dot(tmp_path, monkeypatch):
    ep = exported()
    monkeypatch.setattr(draw.shutil, "which", lambda name: None)     # no graphviz
    svg = open(ep.draw(str(tmp_path / "head.svg")), encoding="utf-8").read()
    assert svg.startswith("<svg") and "f32[s0, s1, 8]" in svg
    with pytest.raises(ss.UserError, match=r"graphviz.*\.html or \.svg"):
        ep.draw(str(tmp_path / "head.png"))
    dot = open(ep.draw(str(tmp_path / "head.dot")), encoding="utf-8").read()
    assert dot.startswith("digraph") and "matmul\\l" in dot and "f32[s0, s1, 8]" in dot
    assert '"p0_matmul" -> "p0_maximum"' in dot
    with pytest.raises(ss.UserError, match=r"\.html"):
        ep.draw(str(tmp_path / "head.pdf"))


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is not installed")
def test_graphviz_when_installed(tmp_path):
    svg = open(exported().draw(str(tmp_path / "head.svg")), encoding="utf-8").read()
    assert ">matmul<" in html.unescape(svg)


def test_cond_branches_are_panels(tmp_path):
    def g(x):
        return ss.cond(x.sum() > 0, lambda x: x + 1, lambda x: x * 2, (x,))

    ep = ss.export(g, (np.ones(3),), dynamic_shapes={"x": (Dim.AUTO,)})
    texts = svg_texts(open(ep.draw(tmp_path / "g.html"), encoding="utf-8").read())
    assert any(t.startswith("cond") for t in texts)
    assert any("true" in t for t in texts) and any("false" in t for t in texts)
    assert "add" in texts and "multiply" in texts


def test_explain_draws_graphs_and_breaks(tmp_path):
    def f(x):
        y = x * 2
        print("between")
        return y + 1

    ex = ss.explain(f, np.ones(3))
    assert ex.graph_break_count == 1
    page = open(ex.draw(tmp_path / "ex.html"), encoding="utf-8").read()
    texts = svg_texts(page)
    assert "graph break 1" in texts and 'print("between")' in texts
    assert "%s:%d" % (os.path.basename(__file__), line_of(f, "print(")) in texts
    assert any(t.startswith("call to print") for t in texts)
    assert "multiply" in texts and "add" in texts
    # in source order: graph 1, the break, graph 2
    order = [t for t in re.findall(r'class="panel">([^<]*)<', page)]
    assert order == ["graph 1 (%d ops)" % ex.graphs[0].op_count, "break 1",
                     "graph 2 (%d ops)" % ex.graphs[1].op_count]
    assert ex.break_reasons[0] in html.unescape(page)


def test_a_wide_graph_wraps(tmp_path):
    ws = [np.full((4,), float(i)) for i in range(20)]

    def many(x):
        return sum(x * w for w in ws)

    ep = ss.export(many, (np.ones(4),))
    svg = draw.render_svg(draw.program_picture(ep))
    width = int(re.search(r'<svg[^>]* width="(\d+)"', svg).group(1))
    assert width <= 10 + draw.PER_LINE * (draw.BOX_W + draw.GAP_X)
    assert svg.count('<g class="node constant">') == 20
