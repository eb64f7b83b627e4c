"""A differential fuzzer for ss.compile (issue 29): random programs, compiled calls
interleaved with random mutations of what the program reads between calls (arrays rebound
to the same or another shape, flags flipped, scalars changed, lists grown and shrunk, dict
entries replaced, globals rebound), and side effects inside the function (in-place writes,
``try`` / ``except`` around array work that may raise, ``with`` blocks, appends through a
graph break).  After every call: outputs, arguments, the list the program appends to, the
context manager's enter / exit counts (on calls that trace nothing: tracing runs the
Python once more) and the exception raised are eager's, and a rebind to
the same shape never fails a shape, identity or rebinding guard; NumPy's warnings are
eager's (as a set of messages).

``test_fuzz_args_and_globals`` covers what the JIT keeps exact through its arguments and
module globals.  ``test_fuzz_object_state`` adds state reached through a global object
(``MODEL.w``, ``MODEL.training``, ``MODEL.layers``) and Python side effects inside compiled
segments (``MODEL.calls += 1``, ``log.append(len(layers))``): guards on access paths and
replayed side effects (issue 29 items 1-2).

Examples: the CI profile runs a few; ``HYPOTHESIS_PROFILE=thorough`` runs 2000 each.
"""
import contextlib
import io
import itertools
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runners import import_source

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
EXAMPLES = 2000 if THOROUGH else 8

import symshape as ss  # noqa: E402

PRELUDE = '''
import types
import numpy as np

G_SCALE = 1.0
G_W = np.ones(4)


class Counting:
    def __init__(self):
        self.enters = self.exits = 0

    def __enter__(self):
        self.enters += 1
        return self

    def __exit__(self, *exc):
        self.exits += 1
        return False


CM = Counting()


def scaled(x):
    with CM:
        return x * 1.25
MODEL = types.SimpleNamespace(w=np.ones(4), training=True, calls=0, layers=[np.ones(4)])
'''

# statements over x (an array of n elements), p (a dict of arrays), layers (a list of
# arrays), flag (bool), k (float), log (a list); globals G_SCALE, G_W, CM, scaled (a
# helper with a ``with``)
STATEMENTS = [
    "x = x * p['w'] + p['b']",
    "for w in layers:\n    x = np.tanh(x * w)",
    "if flag:\n    x = x + k\nelse:\n    x = x - k",
    "try:\n    L = np.linalg.cholesky(np.outer(x, x) + np.eye(x.shape[0]) * k)\n"
    "    x = x + L[-1]\nexcept np.linalg.LinAlgError:\n    x = x * 0.5",
    "with CM:\n    x = x * 1.5 - G_SCALE",
    "p['w'][0] = x[0]",
    "x = x * G_SCALE",
    "s = float(x.max())\nx = x / (abs(s) + 1)",
    "try:\n    v = float(x.sum())\nexcept Exception:\n    v = 0.0\nx = x + v",
    "with np.errstate(all='ignore'):\n    x = np.log(np.abs(x) + 1)",
    "log.append(round(float(x.sum()), 6))",
    "x = x + G_W",
    "try:\n    x = x + layers[2]\nexcept IndexError:\n    x = x - 1",
    "x += 1",
    "x = scaled(x) + 1",
    "z = np.sqrt(x)\nx = np.where(np.isnan(z), -0.5, z)",
]

# state read through a global object and side effects inside compiled code (items 1-2)
STATE_STATEMENTS = [
    "x = x * MODEL.w",
    "if MODEL.training:\n    MODEL.w = MODEL.w * 0.5 + 0.5\nelse:\n    x = x + 1",
    "MODEL.calls += 1",
    "for w in MODEL.layers:\n    x = x + w",
    "log.append(len(layers))",
]

MUTATIONS = ["rebind_same", "rebind_layer_same", "dict_replace", "resize", "flip", "scalar",
             "grow", "shrink", "dict_add", "global_scale", "global_rebind_same", "call"]
STATE_MUTATIONS = ["model_rebind_same", "model_flip", "model_grow", "model_shrink"]
SAME_SHAPE = {"rebind_same", "rebind_layer_same", "dict_replace"}
SAME_SHAPE_STATE = {"global_rebind_same", "model_rebind_same"}   # items 1-2


def load(tmp_path_factory, statements):
    body = "\n".join(statements)
    src = PRELUDE + "\n\ndef f(x, p, layers, flag, k, log):\n%s\n    return x\n" % (
        "\n".join("    " + ln for ln in body.splitlines()))
    return import_source(tmp_path_factory, src, "fuzzprog")


class World:
    """One side's arguments (compiled or eager), mutated alike."""

    def __init__(self, n):
        self.p = {"w": np.linspace(0.5, 1.5, n), "b": np.linspace(-0.2, 0.2, n)}
        self.layers = [np.linspace(-1, 1, n) * 0.3, np.cos(np.arange(n, dtype=float))]
        self.flag, self.k, self.log = True, 0.5, []


def arr(rng, n):
    return rng.standard_normal(n)


def mutate(kind, worlds, mod, rng, n):
    """Apply one mutation to both worlds (and the shared module globals); the new n."""
    if kind == "resize":
        n = int(rng.integers(2, 7))
        new = {"w": arr(rng, n), "b": arr(rng, n)}
        lay = [arr(rng, n) for _ in worlds[0].layers]
        for w in worlds:
            w.p = {key: v.copy() for key, v in new.items()}
            w.layers = [v.copy() for v in lay]
        mod.G_W = arr(rng, n)
        mod.MODEL.w = arr(rng, n)
        mod.MODEL.layers = [arr(rng, n) for _ in mod.MODEL.layers]
        return n
    a = arr(rng, n)
    idx = int(rng.integers(max(1, len(worlds[0].layers))))
    k = float(rng.choice([-1.0, 0.5, 2.0]))
    for w in worlds:
        if kind == "rebind_same":
            w.p["w"] = a.copy()
        elif kind == "rebind_layer_same" and w.layers:
            w.layers[idx] = a.copy()
        elif kind == "dict_replace":
            w.p["b"] = a.copy()
        elif kind == "flip":
            w.flag = not w.flag
        elif kind == "scalar":
            w.k = k
        elif kind == "grow":
            w.layers.append(a.copy())
        elif kind == "shrink" and w.layers:
            w.layers.pop()
        elif kind == "dict_add":
            w.p["c%d" % len(w.p)] = a.copy()
    if kind == "global_scale":
        mod.G_SCALE = float(rng.choice([0.5, 1.0, 3.0]))
    elif kind == "global_rebind_same":
        mod.G_W = a.copy()
    elif kind == "model_rebind_same":
        mod.MODEL.w = a.copy()
    elif kind == "model_flip":
        mod.MODEL.training = not mod.MODEL.training
    elif kind == "model_grow":
        mod.MODEL.layers.append(a.copy())
    elif kind == "model_shrink" and mod.MODEL.layers:
        mod.MODEL.layers.pop()
    return n


def snapshot(mod):
    m = mod.MODEL
    return (mod.CM.enters, mod.CM.exits, m.calls, m.training, m.w.copy(),
            [v.copy() for v in m.layers])


def restore(mod, snap):
    m = mod.MODEL
    mod.CM.enters, mod.CM.exits, m.calls, m.training = snap[:4]
    m.w, m.layers = snap[4].copy(), [v.copy() for v in snap[5]]


def run(fn, world, x):
    """(what ``fn`` returned or raised, the NumPy warnings it gave)."""
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as seen, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            res = fn(x, world.p, world.layers, world.flag, world.k, world.log)
        except Exception as e:                      # eager raises too: compare the type
            res = ("raised", type(e).__name__)
    return res, {str(w.message) for w in seen if w.category is RuntimeWarning}


def same(a, b):
    if isinstance(b, tuple):
        assert a == b
    else:
        assert not isinstance(a, tuple), a
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def same_world(a, b):
    assert a.p.keys() == b.p.keys() and len(a.layers) == len(b.layers)
    for key in a.p:
        same(a.p[key], b.p[key])
    for u, v in zip(a.layers, b.layers):
        same(u, v)
    assert a.log == b.log and a.flag == b.flag and a.k == b.k


@contextlib.contextmanager
def counting_traces():
    """The number of traces (exports) run inside: a call that traces runs the function's
    Python once more, on proxies (a helper's context manager enters then too)."""
    from symshape.capture import export as export_mod
    real, seen = export_mod.export, []

    def counting(*a, **k):
        seen.append(1)
        return real(*a, **k)
    export_mod.export = counting
    try:
        yield seen
    finally:
        export_mod.export = real


def fuzz(tmp_path_factory, picks, ops, seed, statements, mutations, same_shape):
    mod = load(tmp_path_factory, [statements[i] for i in picks])
    cf = ss.compile(mod.f)
    rng = np.random.default_rng(seed)
    n = 4
    worlds = (World(n), World(n))
    for step, op in enumerate(["call"] + [mutations[i % len(mutations)] for i in ops]):
        if op != "call":
            n = mutate(op, worlds, mod, rng, n)
        x = arr(rng, n)
        seen = len(cf.recompile_reasons)
        start = snapshot(mod)
        with counting_traces() as traced:
            got, got_warned = run(cf, worlds[0], x.copy())
        after_compiled = snapshot(mod)
        restore(mod, start)                         # eager starts from the same globals
        want, want_warned = run(mod.f, worlds[1], x.copy())
        after_eager = snapshot(mod)
        same(got, want)
        assert got_warned == want_warned
        same_world(worlds[0], worlds[1])
        if not traced:
            assert after_compiled[:2] == after_eager[:2]      # CM enters and exits
        assert after_compiled[2:4] == after_eager[2:4]
        same(after_compiled[4], after_eager[4])
        assert len(after_compiled[5]) == len(after_eager[5])
        if op in same_shape:
            new = cf.recompile_reasons[seen:]
            assert not [r for r in new if "shape" in r or "rebound" in r or
                        "object traced" in r], (op, new)


SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@SETTINGS
@given(st.lists(st.integers(0, len(STATEMENTS) - 1), min_size=1, max_size=6),
       st.lists(st.integers(0, len(MUTATIONS) - 1), min_size=1, max_size=8),
       st.integers(0, 2 ** 16))
def test_fuzz_args_and_globals(tmp_path_factory, picks, ops, seed):
    fuzz(tmp_path_factory, picks, ops, seed, STATEMENTS, MUTATIONS, SAME_SHAPE)


@SETTINGS
@given(st.lists(st.integers(0, len(STATEMENTS) + len(STATE_STATEMENTS) - 1), min_size=1,
                max_size=6),
       st.lists(st.integers(0, len(MUTATIONS) + len(STATE_MUTATIONS) - 1), min_size=1,
                max_size=8),
       st.integers(0, 2 ** 16))
def test_fuzz_object_state(tmp_path_factory, picks, ops, seed):
    fuzz(tmp_path_factory, picks, ops, seed, STATEMENTS + STATE_STATEMENTS,
         MUTATIONS + STATE_MUTATIONS, SAME_SHAPE | SAME_SHAPE_STATE)


def test_statement_menu_is_valid_python():
    for s in itertools.chain(STATEMENTS, STATE_STATEMENTS):
        compile("def f():\n" + "\n".join("    " + ln for ln in s.splitlines()), "s", "exec")
