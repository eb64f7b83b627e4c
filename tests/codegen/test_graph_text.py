"""The graph as text (``str(ep.graph)``, the graph part of ``str(ep)``): one node a line under
the user's line, the same after save and load."""
import re

import numpy as np
import pytest

import symshape as ss

A = ss.Dim.AUTO
W = np.arange(12, dtype=np.float32).reshape(3, 4)


def _model(x, y):
    h = x[:, :3] @ W
    z = ss.cond(h.shape[0] > 100, lambda a: a * 2, lambda a: a + 1, (h,))
    return np.tanh(z).sum(0), y[1:] * 2


def _program():
    return ss.export(_model, (np.ones((8, 5), np.float32), np.ones(6, np.float32)),
                     dynamic_shapes={"x": (A, A), "y": (A,)})


# --------------------------------------------------------------------------- str(ep.graph)
def test_str_graph_prints_the_graph_one_node_a_line():
    ep = _program()
    text = str(ep.graph)
    assert "object at 0x" not in text
    lines = text.splitlines()
    assert lines[0].startswith("    def forward(self, ")
    assert 'c_W: "f32[3, 4]"' in lines[0] and 'x: "f32[s0, s1]"' in lines[0]
    # every node that computes is one line: name, dtype and symbolic shape, op and inputs
    for n in ep.graph.nodes:
        if n.op in ("input", "constant"):
            continue
        mine = [l for l in lines if l.startswith("        %s: " % n.name)]
        assert len(mine) == 1, (n.name, text)
        assert re.match(r'\s+%s: "[a-z0-9]+\[.*\]" = ' % re.escape(n.name), mine[0]) or \
            "Sym(" in mine[0], mine[0]
    assert re.search(r'matmul: "f32\[s0, 4\]" = np\.matmul\(getitem, c_W\)', text), text
    # the user line that produced the nodes, as torch.export prints it
    assert re.search(r"# File: .*test_graph_text\.py:\d+ in _model, code: h = x\[:, :3\] @ W",
                     text), text
    assert lines[-1].strip().startswith("return") or "class " in text


def test_str_graph_is_the_graph_part_of_str_ep():
    ep = _program()
    full = str(ep)
    graph = str(ep.graph)
    assert full.startswith("ExportedProgram:\n" + graph + "\n\nGraph signature:"), full


def test_str_graph_is_identical_after_save_and_load(tmp_path):
    ep = _program()
    for fmt in ("json", None):
        p = tmp_path / ("p.json" if fmt else "p.symshape")
        if fmt:
            ss.save(ep, p, format=fmt)
        else:
            ss.save(ep, p)
        back = ss.load(p)
        assert str(back.graph) == str(ep.graph)




