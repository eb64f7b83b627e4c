"""Writes the recorder cannot see are refused, never silently dropped, and undone.

``__slots__`` objects, ``__dict__`` / ``vars()`` writes, class attributes, library
containers (``deque``, ``array.array``, ``bytearray``, ``Counter``) and file I/O reached as
state: ``export`` raises a ``UserError`` naming the path as the user spells it, what
changed, the line and the fix, and leaves every object exactly as it was (identity and
values).  Under ``ss.compile`` the same statement becomes a graph break: it runs eagerly
on every call, as eager Python does.
"""
import array
import collections
import io
import warnings

import numpy as np
import pytest

import symshape as ss

X = np.arange(3.0)


def refused(obj, fn, match):
    with pytest.raises(ss.UserError, match=match) as e:
        ss.export(fn, (X,))
    return str(e.value)


# ------------------------------------------------------------------ the gaps
class Slotted:
    __slots__ = ("count", "w")

    def __init__(self):
        self.count = 0
        self.w = np.ones(3)

    def step(self, x):
        self.count = self.count + 1
        return x * 2


def test_slots_attribute_write_is_refused_and_undone():
    m = Slotted()
    w = m.w
    msg = refused(m, m.step, r"self\.count \(0 -> 1\)")
    assert "self.count = self.count + 1" in msg and "test_state_unrecorded.py:" in msg
    assert "__slots__" in msg and "Fix:" in msg
    assert m.count == 0 and m.w is w


class ViaDict:
    def __init__(self):
        self.w = np.ones(3)
        self.n = 0

    def poke(self, x):
        self.__dict__["n"] = 5
        return x + self.w

    def bulk(self, x):
        vars(self).update(n=7, extra=1)
        return x + self.w


@pytest.mark.parametrize("meth,line", [("poke", 'self.__dict__["n"] = 5'),
                                       ("bulk", "vars(self).update(n=7, extra=1)")])
def test_dict_and_vars_writes_are_refused_and_undone(meth, line):
    m = ViaDict()
    w = m.w
    msg = refused(m, getattr(m, meth), r"at self\.n \(0 -> \d")
    assert line in msg and "assign it as an attribute (self.n = ...)" in msg
    assert vars(m) == {"w": w, "n": 0} and m.w is w and type(m) is ViaDict


class Counted:
    calls = 0
    registry = []

    def __init__(self):
        self.w = np.ones(3)

    def bump(self, x):
        type(self).calls += 1
        return x + self.w

    def register(self, x):
        Counted.registry.append("seen")
        return x + self.w


def test_class_attribute_writes_are_refused_and_undone():
    m = Counted()
    reg = Counted.registry
    msg = refused(m, m.bump, r"class attribute at Counted\.calls \(0 -> 1\)")
    assert "type(self).calls += 1" in msg
    assert Counted.calls == 0 and type(m) is Counted
    # the recording subclass used while tracing is left clean: a second export sees 0
    msg = refused(m, m.bump, r"Counted\.calls \(0 -> 1\)")
    msg = refused(m, m.register, r"Counted\.registry \(its length went from 0 to 1\)")
    assert 'Counted.registry.append("seen")' in msg
    assert Counted.registry is reg and reg == []


class Buffers:
    def __init__(self):
        self.buf = collections.deque([1.0])
        self.arr = array.array("d", [1.0, 2.0])
        self.raw = bytearray(b"ab")
        self.counter = collections.Counter(a=2)
        self.w = np.ones(3)

    def push(self, x):
        self.buf.append(x)
        return x + self.w

    def grow(self, x):
        self.arr.append(3.0)
        return x + self.w

    def raw_extend(self, x):
        self.raw.extend(b"cd")
        return x + self.w

    def count(self, x):
        self.counter.update(["a", "b"])
        return x + self.w


@pytest.mark.parametrize("meth,path,kind,line", [
    ("push", "self.buf", "deque", "self.buf.append(x)"),
    ("grow", "self.arr", "array.array", "self.arr.append(3.0)"),
    ("raw_extend", "self.raw", "bytearray", 'self.raw.extend(b"cd")'),
    ("count", "self.counter", "Counter", 'self.counter.update(["a", "b"])'),
])
def test_library_containers_are_refused_and_undone(meth, path, kind, line):
    m = Buffers()
    before = {k: v for k, v in vars(m).items()}
    items = (list(m.buf), m.arr.tolist(), bytes(m.raw), dict(m.counter))
    msg = refused(m, getattr(m, meth), r"the %s at %s \(its length went from" % (
        kind.replace(".", r"\."), path.replace(".", r"\.")))
    assert line in msg and "make it a list or dict the program writes through" in msg
    assert all(vars(m)[k] is v for k, v in before.items()) and len(vars(m)) == len(before)
    assert (list(m.buf), m.arr.tolist(), bytes(m.raw), dict(m.counter)) == items
    assert type(m.counter) is collections.Counter and m.counter["a"] == 2


class Logged:
    def __init__(self, f):
        self.log_file = f
        self.w = np.ones(3)

    def step(self, x):
        self.log_file.write("step\n")
        return x + self.w


class LoggedBytes(Logged):
    def step(self, x):
        self.log_file.write(b"step\n")
        return x + self.w


@pytest.mark.parametrize("cls,make,old", [(Logged, io.StringIO, "old\n"),
                                          (LoggedBytes, io.BytesIO, b"old\n")])
def test_file_io_is_refused_and_the_file_left_as_it_was(cls, make, old):
    f = make()
    f.write(old)
    m = cls(f)
    msg = refused(m, m.step, r"the %s file at self\.log_file \(its position moved from 4 "
                             r"to 9" % make.__name__)
    assert "self.log_file.write(" in msg and "move the I/O out" in msg
    assert m.log_file is f and f.tell() == 4 and f.getvalue() == old


def test_a_real_file_is_truncated_back(tmp_path):
    p = tmp_path / "log.txt"
    with open(p, "w") as f:
        f.write("old\n")
        m = Logged(f)
        with pytest.raises(ss.UserError, match=r"self\.log_file"):
            ss.export(m.step, (X,))
        assert f.tell() == 4
    assert p.read_text() == "old\n"


def test_restored_also_when_the_trace_raises_after_the_change():
    class M:
        def __init__(self):
            self.buf = collections.deque()

        def step(self, x):
            self.buf.append(1)
            Counted.calls = 99
            raise ValueError("boom")

    m = M()
    with pytest.raises(ValueError):
        ss.export(m.step, (X,))
    assert len(m.buf) == 0 and Counted.calls == 0


def test_a_global_deque_is_refused_naming_it():
    msg = refused(None, _push_global, r"the deque at HISTORY \(its length went from 0 to 1\)")
    assert "HISTORY.append(x.sum())" in msg
    assert len(HISTORY) == 0


HISTORY = collections.deque()


def _push_global(x):
    HISTORY.append(x.sum())
    return x * 2


def test_no_line_is_claimed_when_none_is_found():
    class M:
        def __init__(self):
            self.buf = collections.deque()

        def step(self, x):
            getattr(self, "b" + "uf").append(1)
            return x + 1

    m = M()
    msg = refused(m, m.step, r"self\.buf")
    assert "cannot tell which line" in msg and len(m.buf) == 0


# ------------------------------------------------------------------ recorded writes still work
class Recorded:
    def __init__(self):
        self.h = np.zeros(3)
        self.cache = []
        self.stats = {}
        self.buf = collections.deque()      # reached, never changed: fine
        self.t = 0

    def step(self, x):
        self.h = np.tanh(self.h + x)
        self.cache.append(self.h)
        self.stats["last"] = x.sum()
        self.t += 1
        return self.h * 2


def test_recorded_writes_are_replayed_as_before():
    eager, m = Recorded(), Recorded()
    ep = ss.export(m.step, (X,))
    assert m.t == 0 and m.cache == [] and m.stats == {}
    run = ep.module()
    for i in range(3):
        x = X + i
        np.testing.assert_array_equal(eager.step(x), run(x))
    assert m.t == eager.t == 3 and len(m.cache) == 3
    np.testing.assert_array_equal(m.h, eager.h)
    assert m.stats["last"] == eager.stats["last"]


# ------------------------------------------------------------------ ss.compile: a graph break
class JitDeque:
    calls = 0

    def __init__(self):
        self.buf = collections.deque()
        self.w = np.ones(3)

    def step(self, x):
        y = x + self.w
        self.buf.append(y)
        type(self).calls += 1
        return y * 2


class JitHelper:
    def __init__(self):
        self.buf = collections.deque()
        self.w = np.ones(3)

    def _log(self, y):
        self.buf.append(y)

    def step(self, x):
        y = x + self.w
        self._log(y)
        return y * 2


def side_state(o):
    """What a step leaves behind, comparable (arrays by value)."""
    if isinstance(o, Slotted):
        return o.count
    return [v.tolist() for v in o.buf], [type(v) for v in o.buf]


@pytest.mark.parametrize("cls", [JitDeque, Slotted, JitHelper])
def test_compile_runs_unrecordable_statements_eagerly_every_call(cls):
    """A deque append and a class-attribute write in the compiled function, a __slots__
    counter, a helper that appends: each a graph break, run eagerly with real arrays."""
    calls = JitDeque.calls
    e, m = cls(), cls()
    f = ss.compile(m.step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(4):
            x = X + i
            np.testing.assert_array_equal(e.step(x), f(x))
    assert side_state(m) == side_state(e)
    assert f.break_reasons
    if cls is JitDeque:
        assert JitDeque.calls == calls + 8      # 4 eager calls and 4 compiled ones


def test_print_into_a_reached_buffer_is_trace_time_output_and_kept():
    out = io.StringIO()

    def f(x):
        print("tracing", file=out)
        return x + 1

    ss.export(f, (X,))
    assert out.getvalue() == "tracing\n"        # ran once, at trace time, as eager print


def test_a_cached_property_filled_while_tracing_is_no_refused_change():
    import functools

    class M:
        def __init__(self):
            self.w = np.ones(3)

        @functools.cached_property
        def scale(self):
            return 2.0

        def step(self, x):
            return x * self.scale + self.w

    m = M()
    ep = ss.export(m.step, (X,))
    assert "scale" not in vars(m)               # undone, like every trace-time change
    np.testing.assert_array_equal(ep.module()(X), X * 2.0 + 1)
