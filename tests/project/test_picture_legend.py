"""The pictures a new user opens: the built-in .svg (no graphviz) carries the same sizes and
guards legend as the .html page; node headers say each name once; an ss.explain drawing
spreads over the page and keeps its break reasons whole."""
import html
import re

import numpy as np

import symshape as ss
from symshape import Dim
from symshape.codegen import draw


def texts(svg):
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def blocks(x):
    ss.check(x.shape[0] % 4 == 0)
    return x.reshape(-1, 4).sum(axis=1)


def test_the_builtin_svg_has_the_legend(tmp_path, monkeypatch):
    monkeypatch.setattr(draw.shutil, "which", lambda name: None)      # no graphviz
    ep = ss.export(blocks, (np.ones(32),), dynamic_shapes={"x": (4 * Dim("n"),)})
    svg = open(ep.draw(str(tmp_path / "b.svg")), encoding="utf-8").read()
    page = open(ep.draw(str(tmp_path / "b.html")), encoding="utf-8").read()
    shown = texts(svg)
    assert "sizes" in shown
    legend = draw.program_picture(ep).legend
    assert legend and legend[0][0] == "sizes"
    for heading, lines in legend:                 # every legend line of the page, in the svg
        assert heading in shown
        for line in lines:
            assert line in shown and html.escape(line) in page
    assert page.count("<h2>sizes</h2>") == 1 and page.count(">sizes</text>") == 0


def test_a_header_says_a_name_once():
    ep = ss.export(lambda x, w: np.maximum(x @ w, 0) @ w.T, (np.ones((3, 4)), np.ones((4, 4))))
    heads = [b.lines[0] for b in draw.program_picture(ep).panels[0].boxes]
    assert "matmul" in heads and "matmul_1" in heads
    assert not any(h.split(" = ")[0] == h.split(" = ")[-1] for h in heads if " = " in h)
    assert "transpose = permute_dims" in heads         # the name and the op differ: both


def test_graphviz_labels_use_a_font_with_underscores():
    ep = ss.export(lambda x: x * 2, (np.ones(3),))
    assert 'fontname="Courier"' in draw.render_dot(draw.program_picture(ep))


def test_explain_uses_the_page_width_and_keeps_reasons_whole():
    def f(x):
        y = x * 2
        print("a side effect with a long enough line to need more than the box's width")
        if y.sum() > 0:
            y = y + 1
        return y

    svg = draw.render_svg(draw.explanation_picture(ss.explain(f, np.ones(3))))
    width = int(re.search(r'<svg[^>]* width="(\d+)"', svg).group(1))
    assert 600 < width <= draw.PAGE_W + 40
    shown = " ".join(texts(svg))
    assert "\u2026" not in shown                                     # nothing cut
    assert "remedy: To compile it whole, use ss.cond" in shown
    assert "data-dependent branch on array values" in shown
