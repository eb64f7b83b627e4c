"""Differential fuzzer over the kinds of Python state that had no safe default: class and
module attributes, tuples and named tuples, standard-library containers, ``__slots__``,
``Enum`` members, C extension callables, lazy initialization, ``vars(self)``, counters and
lists.  Every program runs under the verify mode (``ss.compile(f, verify=True)``,
``ep.module(verify=True)``: each call also runs eager on deep copies and compares outputs
and state), against an eager twin, with random changes to the state between steps.  An
exported program whose guard fails (a value it read changed) must say so with a
``UserError``; it is then exported again, as a user would.

CI runs a few examples; ``HYPOTHESIS_PROFILE=thorough`` runs 2000.
"""
import collections
import dataclasses
import enum
import itertools
import os
import sys
import tempfile
import warnings
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import symshape as ss

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
EXAMPLES = 2000 if THOROUGH else 10

_DIR = tempfile.mkdtemp()
with open(os.path.join(_DIR, "ss_fuzz_cfg.py"), "w") as _f:
    _f.write("SCALE = 2.0\nOFFSET = (1.0, 2.0)\n")
sys.path.insert(0, _DIR)
import ss_fuzz_cfg as CFG  # noqa: E402


class Mode(enum.Enum):
    A = 1
    B = 2


class Cfg(NamedTuple):
    scale: float
    shift: float


@dataclasses.dataclass(slots=True)
class Slot:
    eps: float


class Base:
    base = 0.5
    lr = 1.0


STATEMENTS = [
    "y = y * self.lr",
    "y = (y.reshape(self.shape) + 1).reshape(-1)",
    "y = y * self.cfg.scale + self.cfg.shift",
    "y = y + self.od['a']",
    "y = y + self.dq[-1]",
    "if self.mode is Mode.A:\n        y = y + 1",
    "y = y + self.sl.eps",
    "if not hasattr(self, 'W'):\n        self.W = np.ones(6)\n    self.W = self.W * 0.5 + x",
    "if 'V' not in self.__dict__:\n        self.V = np.zeros(6)\n    self.V = self.V + y",
    "y = self.act(y)",
    "y = y * CFG.SCALE + CFG.OFFSET[1]",
    "y = y + type(self).base",
    "self.t += 1",
    "self.hist.append(self.t)",
    "y = y * len(self.hist)",
    "y = y + sum(isinstance(v, np.ndarray) for v in vars(self).values())",
    "if isinstance(y, np.ndarray) and y.ndim == 1:\n        y = y[None][0]",
]

CHANGES = [
    lambda o: setattr(o, "mode", Mode.B if o.mode is Mode.A else Mode.A),
    lambda o: setattr(o, "lr", o.lr * 2),
    lambda o: setattr(o, "shape", (3, 2) if o.shape == (2, 3) else (2, 3)),
    lambda o: setattr(o, "cfg", o.cfg._replace(scale=o.cfg.scale + 1)),
    lambda o: o.od.__setitem__("a", o.od["a"] + 1),
    lambda o: o.dq.append(o.dq[-1] + 1),
    lambda o: setattr(o.sl, "eps", o.sl.eps + 1),
    lambda o: o.__dict__.pop("W", None),
    lambda o: setattr(o, "act", np.sin if o.act is np.tanh else np.tanh),
]
SHARED_CHANGES = [                       # on a class or module: both twins see them
    lambda: setattr(CFG, "SCALE", CFG.SCALE + 1),
    lambda: setattr(Base, "base", Base.base + 1),
]

_ids = itertools.count()


def make_class(stmts):
    body = ["y = x * 1.0"] + list(stmts) + ["return y"]
    src = ("class Fuzzed(Base):\n"
           "  def __init__(self):\n"
           "    self.shape = (2, 3)\n"
           "    self.cfg = Cfg(2.0, 1.0)\n"
           "    self.od = collections.OrderedDict(a=1.0)\n"
           "    self.dq = collections.deque([1.0, 2.0])\n"
           "    self.mode = Mode.A\n"
           "    self.sl = Slot(0.25)\n"
           "    self.act = np.tanh\n"
           "    self.t = 0\n"
           "    self.hist = []\n"
           "  def step(self, x):\n" + "".join("    %s\n" % s for s in body))
    ns = dict(globals())
    code = compile(src, "<fuzzed categories %d>" % next(_ids), "exec")
    exec(code, ns)
    return ns["Fuzzed"]


def state_of(o):
    return {k: (v.tolist() if isinstance(v, np.ndarray) else
                list(v) if isinstance(v, (collections.deque, list)) else v)
            for k, v in vars(o).items() if k not in ("sl", "od")} | {
        "sl": o.sl.eps, "od": dict(o.od)}


def run_exported(obj, x, holder):
    if holder.get("mod") is None:
        holder["mod"] = ss.export(obj.step, (x,)).module(verify=True)
    try:
        return holder["mod"](x)
    except ss.VerifyError:
        raise
    except ss.UserError:
        holder["mod"] = ss.export(obj.step, (x,)).module(verify=True)   # as a user would
        return holder["mod"](x)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not THOROUGH,
          suppress_health_check=list(HealthCheck))
@given(st.data())
@pytest.mark.parametrize("how", ["compile", "module"])
def test_state_categories_match_eager_under_verify(how, data):
    stmts = data.draw(st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=6),
                      label="statements")
    steps = data.draw(st.integers(2, 4), label="steps")
    changes = data.draw(st.lists(st.integers(0, len(CHANGES) + len(SHARED_CHANGES) - 1),
                                 min_size=steps, max_size=steps), label="changes")
    cls = make_class(stmts)
    eager, twin = cls(), cls()
    saved = (CFG.SCALE, Base.base)
    holder = {}
    cf = ss.compile(twin.step, verify=True) if how == "compile" else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k in range(steps):
                x = np.arange(6.0) + k
                want = eager.step(x)
                got = cf(x) if cf is not None else run_exported(twin, x, holder)
                np.testing.assert_array_equal(got, want)
                assert state_of(twin).keys() == state_of(eager).keys()
                c = changes[k]
                if c < len(CHANGES):
                    CHANGES[c](eager)
                    CHANGES[c](twin)
                else:
                    SHARED_CHANGES[c - len(CHANGES)]()
    finally:
        CFG.SCALE, Base.base = saved
    for key, v in state_of(eager).items():
        got = state_of(twin)[key]
        if isinstance(v, list) and v and isinstance(v[0], list):
            np.testing.assert_array_equal(got, v)
        else:
            assert got == v, key
