"""Differential fuzzer of loops over a dynamic count (issue 41): eager Python is the oracle.

Hypothesis draws a method ``run(self, x)`` whose body is a ``for`` statement over the rows of
``x`` (``range``, a start and a step, ``enumerate``, ``zip``, ``reversed``, the rows
themselves) or a ``while`` counting up to the row count with a random body over carried arrays, Python number accumulators, lists
appended to and stacked after the loop, an array made before the loop and written row by
row, and object state (``self.v``).  The program is exported once with the row count a
``Dim`` and run through ``module()`` and ``ep.compile()`` at trip counts 0, 1, 2 and more; outputs and the
object's state must agree with eager ones on a twin object.

CI runs a few examples; ``HYPOTHESIS_PROFILE=thorough`` runs 500.
"""
import os
import tempfile

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import symshape as ss

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
EXAMPLES = 500 if THOROUGH else 10

HEADS = [
    ("for t in range(x.shape[0]):", "    r = x[t]\n"),
    ("for t in range(1, x.shape[0]):", "    r = x[t]\n"),
    ("for t in range(0, x.shape[0], 2):", "    r = x[t]\n"),
    ("for t in reversed(range(x.shape[0])):", "    r = x[t]\n"),
    ("for t, r in enumerate(x):", ""),
    ("for r, q in zip(x, x * 2.0):", "    t = 0\n    r = r + q\n"),
    ("for r in x:", "    t = 0\n"),
    ("i = 0\n        while i < x.shape[0]:", "    t = i\n    r = x[t]\n", "i += 1"),
    ("i = 1\n        while i <= len(x) - 1:", "    t = i\n    r = x[t]\n", "i = i + 2"),
]
STATEMENTS = [
    "h = np.tanh(h * 0.5 + r)",
    "h = h + r * t",
    "s = s + r[0]",
    "n += 1",
    "outs.append(h * 2.0)",
    "self.v = self.v * 0.9 + r",
    "y[t] = h",
    "h = h - self.v",
    "if True:\n        h = h * 1.5",
    "for k in range(2):\n        h = h + k",
    "g = h + 1.0\n    h = g * 0.5",
    "n = n + t",
    "s += r[1] * t",
    "h = h * (t + 1) / (t + 2)",
    "outs.append(r - h)",
    "self.v = np.maximum(self.v, r)",
    "if t is None:\n        continue\n    h = h + 0.25",
]
HEAD = """import numpy as np


class Prog:
    def __init__(self):
        self.v = np.ones(3)

    def run(self, x):
        h = np.zeros(3)
        s = 0.0
        n = 0
        outs = []
        y = np.zeros_like(x)
"""
TAIL = """        return h, s, n, np.array(outs).reshape(-1, 3), y
"""


def _source(head, pre, body, post=None) -> str:
    body = list(body) + ([post] if post else [])
    lines = [HEAD, "        %s\n" % head]
    lines.append("".join("        " + ln + "\n" for ln in pre.splitlines()) if pre else "")
    for stmt in body:
        lines.append("".join("            " + ln.strip() + "\n" if i == 0 else
                             "            " + ln[4:] + "\n"
                             for i, ln in enumerate(stmt.splitlines())))
    lines.append(TAIL)
    return "".join(lines)


def _load(src: str):
    fd, path = tempfile.mkstemp(suffix="_loop_prog.py")
    with os.fdopen(fd, "w") as fh:
        fh.write(src)
    ns: dict = {"__name__": "loop_prog"}
    exec(compile(src, path, "exec"), ns)
    return ns["Prog"]


def _same(a, b):
    for u, v in zip(a, b):
        u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
        assert u.shape == v.shape, (u.shape, v.shape)
        np.testing.assert_allclose(v, u, rtol=1e-9, atol=1e-9)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(HEADS), st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=5),
       st.lists(st.integers(0, 9), min_size=2, max_size=4))
def test_loop_programs_match_eager(head, body, counts):
    if len(head) > 2:       # a while: a continue would skip its count (not converted)
        body = [s for s in body if "continue" not in s] or ["h = h + r * t"]
    src = _source(head[0], head[1], body, head[2] if len(head) > 2 else None)
    Prog = _load(src)
    prog, twin = Prog(), Prog()
    rng = np.random.default_rng(len(src))
    ep = ss.export(prog.run, (rng.standard_normal((5, 3)),),
                   dynamic_shapes={"x": {0: ss.Dim("T", min=0)}})
    # (a loop whose results nothing uses is dropped with them)
    assert "for_loop" in str(ep) or "n = n + t" in body or "t = 0" in head[1], src
    runners = [ep.module(), ep.compile()]
    for n in counts:
        x = rng.standard_normal((n, 3))
        v0 = twin.v.copy()
        want = twin.run(x)
        for run in runners:
            prog.v = v0.copy()
            _same(want, run(x))
            _same([twin.v], [prog.v])
