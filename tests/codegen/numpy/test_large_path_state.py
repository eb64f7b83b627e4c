"""Compiled code on its large-size path (planned scratch buffers, blocks) with Python state:
the scratch set and the state call are separate names, so the state writes replay on the
state call (a 784-128-10 MLP at batch 1024 raised ``AttributeError: 'dict' object has no
attribute 'scope'`` when the machine was quiet enough for that path).  The path is forced
here by lowering its thresholds, so the test does not depend on the machine's load."""
import re

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.codegen import rt


@pytest.fixture
def large_path(monkeypatch):
    monkeypatch.setattr(rt, "BIG", 64)
    monkeypatch.setattr(rt, "SOLO", 1)
    monkeypatch.setattr(rt, "WORTH", 16)


class MLP:
    def __init__(self):
        r = np.random.default_rng(0)
        self.W1 = r.standard_normal((16, 32))
        self.b1 = np.zeros(32)
        self.W2 = r.standard_normal((32, 4))
        self.m = np.zeros(32)
        self.calls = 0

    def __call__(self, x):
        h = np.maximum(x @ self.W1 + self.b1, 0.0)
        self.m = 0.9 * self.m + 0.1 * h.mean(0)      # a rebound state array
        self.calls += 1                               # a replayed scalar
        return np.tanh(h @ self.W2) * 2.0 + 1.0


@pytest.mark.parametrize("dynamic", [False, True])
def test_state_writes_replay_on_the_large_path(large_path, dynamic):
    m, eager = MLP(), MLP()
    x = np.random.default_rng(1).standard_normal((64, 16))
    spec = {"x": (Dim.AUTO, None)} if dynamic else None
    ep = ss.export(m, (x,), dynamic_shapes=spec)
    c = ep.compile()
    assert "_cg.scratch" in c.source and "_SP.begin" in c.source
    # each name is bound once: the state call and the scratch set never share one
    assert len(re.findall(r"^\s*_st = ", c.source, re.M)) == 1
    for k in range(3):
        xs = x * (k + 1)
        assert np.allclose(c(xs), eager(xs))
        assert np.allclose(m.m, eager.m) and m.calls == eager.calls
