"""Tests written for the survivors of the mutation gate on the model-state code
(``python -m proofs.mutation --only objstate stateprog guardcode access unrecorded``):
each pins a behaviour of capture/state/ that the other state tests left open."""
import operator

import numpy as np
import pytest

import symshape as ss
from symshape.capture.state.objstate import Recorder, active

X = np.arange(3.0)


def test_the_innermost_recorder_is_the_active_one():
    outer, inner = Recorder(), Recorder()
    assert active() is None
    with outer:
        assert active() is outer
        with inner:
            assert active() is inner
        assert active() is outer
    assert active() is None


class Counter:
    def __init__(self, t):
        self.t = t

    def step(self, x):
        self.t += 1
        if self.t > 1:                  # a tracked number compared: eager's answer
            return x * 2.0
        return x


@pytest.mark.parametrize("start", [-5, 0, 1])
def test_a_tracked_number_compares_as_eager(start):
    m, eager = Counter(start), Counter(start)
    run = ss.export(m.step, (X,)).module()
    assert np.array_equal(run(X), eager.step(X))


class Members:
    def __init__(self):
        self.vals = [float("2.5"), 4.0]

    def f(self, x):
        if 2.0 * 1.25 in self.vals:     # equal, not the same object
            return x * 2.0
        return x


def test_membership_in_a_state_list_compares_by_value():
    m = Members()
    assert np.array_equal(ss.export(m.f, (X,)).module()(X), X * 2.0)
    for vals in ([3.0], [1.0]):
        m2 = Members()
        m2.vals = vals
        assert np.array_equal(ss.export(m2.f, (X,)).module()(X), X)


class CondWrite:
    def __init__(self):
        self.n = 0

    def f(self, x):
        def yes(a):
            self.n = 1
            return a * 2.0

        return ss.cond(x.sum() > 0, yes, lambda a: a, (x,))


def test_a_write_inside_a_cond_branch_is_refused_with_its_message():
    m = CondWrite()
    with pytest.raises(ss.UserError, match=r"ss\.cond: a branch writes Python state "
                                           r"\(setattr on self\.n\) at .*test_mutation_kills_"
                                           r"state\.py:\d+"):
        ss.export(m.f, (X,))
    assert m.n == 0


class Negate:
    def __init__(self):
        self.t = 1

    def f(self, x):
        self.t = -self.t                # a tracked number written: replayed arithmetic
        return x * 2.0


def test_a_negated_scalar_write_prints_as_arithmetic():
    m = Negate()
    ep = ss.export(m.f, (X,))
    assert "self.t = -(self.t)" in str(ep)
    run = ep.module()
    run(X)
    run(X)
    run(X)
    assert m.t == -1


class Stores:
    def __init__(self):
        self.h = []

    def f(self, x):
        self.h.extend([x.sum()])        # the first write: an extend
        self.a = [x * 1.0]              # then two new lists the program stores
        self.b = [x * 2.0]
        self.pair = (x + 1.0, x + 2.0)  # and a new tuple
        d = {"k": x * 3.0}
        self.h.append(d)                # one new dict at two places: one object
        self.last = d
        return x


def test_new_containers_the_program_stores_are_rebuilt_as_eager_makes_them():
    m, eager = Stores(), Stores()
    run = ss.export(m.f, (X,)).module()
    for k in range(2):
        run(X + k)
        eager.f(X + k)
    assert type(m.pair) is tuple and len(m.pair) == 2
    assert np.array_equal(m.pair[1], eager.pair[1])
    assert len(m.a) == 1 and np.array_equal(m.a[0], eager.a[0])
    assert len(m.b) == 1 and np.array_equal(m.b[0], eager.b[0])
    assert m.h[-1] is m.last and type(m.last) is dict
    assert [type(v) for v in m.h] == [type(v) for v in eager.h]
    assert float(m.h[0]) == float(eager.h[0])


def make_closure():
    scale = 2.0

    def f(x):
        return x * scale

    def set_scale(v):
        nonlocal scale
        scale = v
    return f, set_scale


def test_a_scalar_in_a_closure_cell_is_guarded_through_the_cell():
    f, set_scale = make_closure()
    run = ss.export(f, (X,)).module()
    assert np.array_equal(run(X), X * 2.0)
    set_scale(3.0)
    with pytest.raises(ss.UserError, match="scale changed: 2.0 -> 3.0"):
        run(X)


class OddName:
    def __init__(self):
        setattr(self, "my-scale", 2.0)

    def f(self, x):
        return x * getattr(self, "my-scale")


def test_an_attribute_whose_name_is_no_identifier_is_guarded():
    m = OddName()
    run = ss.export(m.f, (X,)).module()
    assert np.array_equal(run(X), X * 2.0)
    setattr(m, "my-scale", 5.0)
    with pytest.raises(ss.UserError, match="my-scale"):
        run(X)


# ------------------------------------------------------------------ access paths
import collections  # noqa: E402
import json  # noqa: E402
import enum  # noqa: E402
import types  # noqa: E402

from symshape.capture.state.access import AccessPath, Root, Scope  # noqa: E402


def _scope(obj):
    return Scope({Root("self", "self"): obj})


class Plain:
    def __init__(self, **kw):
        vars(self).update(kw)


def test_paths_get_set_and_delete_attributes_items_and_references():
    import weakref
    inner = Plain(v=1, none=None)
    obj = types.SimpleNamespace(d={"k": [10, 20]}, ref=weakref.ref(inner), x=None)
    sc = _scope(obj)
    root = AccessPath(Root("self", "self"))
    p = root.attr("d").item("k").item(1)
    assert p.get(sc) == 20 and p.last.key == 1 and str(p) == "self.d['k'][1]"
    p.set(sc, 21)
    assert obj.d["k"] == [10, 21]
    root.attr("y").set(sc, 5)
    assert obj.y == 5 and "y" not in vars(obj).get("d")
    root.attr("x").get(sc) is None                   # None at an attribute: no error
    assert root.attr("x").get(sc) is None
    root.attr("y").delete(sc)
    assert not hasattr(obj, "y")
    root.attr("d").item("k").delete(sc)
    assert obj.d == {}
    r = root.attr("ref").deref()
    assert str(r) == "self.ref()" and r.get(sc) is inner and r.attr("v").get(sc) == 1
    assert r.attr("none").get(sc) is None
    # a path read back from a saved program (its step kinds are not interned strings)
    back = AccessPath.from_json(json.loads(json.dumps(
        root.attr("ref").deref().attr("v").to_json())))
    assert back == root.attr("ref").deref().attr("v")
    w = AccessPath.from_json(json.loads(json.dumps(root.attr("ref").deref().attr("w")
                                                   .to_json())))
    w.set(sc, 3)                        # (the step kinds json made: not the interned ones)
    assert inner.w == 3
    w.delete(sc)
    assert not hasattr(inner, "w")


def test_a_dead_reference_on_a_path_is_gone():
    import weakref
    obj = types.SimpleNamespace(ref=weakref.ref(Plain()))
    p = AccessPath(Root("self", "self")).attr("ref").deref().attr("v")
    with pytest.raises(AttributeError, match=r"the object self\.ref refers to is gone"):
        p.get(_scope(obj))


@pytest.mark.parametrize("bad", [{"root": ["self", 3, ""], "steps": []},
                                 {"root": ["nope", "x", ""], "steps": []},
                                 {"root": ["self", "self", ""], "steps": [["jump", 1]]},
                                 {"steps": []}])
def test_malformed_saved_paths_are_user_errors(bad):
    with pytest.raises(ss.UserError, match=r"saved program: malformed state path"):
        AccessPath.from_json(bad)


# ------------------------------------------------------------------ what the recorder cannot see
class Logged:
    def __init__(self, f):
        self.log = f
        self.w = np.ones(3)

    def f(self, x):
        return x * self.w


def test_a_file_that_the_program_does_not_move_is_fine(tmp_path):
    p = tmp_path / "log.txt"
    p.write_text("a" * 2000)
    with open(p) as fh:
        fh.seek(1000)                   # a position no small-int cache holds
        m = Logged(fh)
        run = ss.export(m.f, (X,)).module()
        assert np.array_equal(run(X), X) and fh.tell() == 1000


class Big:
    def __init__(self):
        self.buf = collections.deque(range(300))     # longer than the small-int cache
        self.child = Plain(w=np.ones(3))

    def read(self, x):
        return x * self.child.w

    def drop(self, x):
        self.buf.pop()                  # a deque: not replayable, a removal
        return x

    def push(self, x):
        self.buf.append(1)
        return x


def test_an_unchanged_long_library_container_is_fine():
    m = Big()
    assert np.array_equal(ss.export(m.read, (X,)).module()(X), X)


@pytest.mark.parametrize("meth", ["drop", "push"])
def test_a_library_container_changed_is_refused_and_put_back(meth):
    m = Big()
    with pytest.raises(ss.UserError, match=r"self\.buf"):
        ss.export(getattr(m, meth), (X,))
    assert list(m.buf) == list(range(300))


class Mode(enum.Enum):
    A = 1


class Tagged:
    def __init__(self):
        self.mode = Mode.A

    def f(self, x):
        self.mode.tag = 1               # an attribute of an opaque object (an Enum member)
        return x * 2.0


def test_an_attribute_written_on_an_opaque_object_is_refused():
    m = Tagged()
    with pytest.raises(ss.UserError, match=r"self\.mode.*its attributes changed"):
        ss.export(m.f, (X,))
    assert not hasattr(Mode.A, "tag")


class Equals:
    def __init__(self):
        self.t = 1

    def f(self, x):
        self.t += 1
        if self.t == 2:                 # a tracked number compared for equality
            return x * 2.0
        return x


def test_a_tracked_number_equals_as_eager():
    m, eager = Equals(), Equals()
    run = ss.export(m.f, (X,)).module()
    assert np.array_equal(run(X), eager.f(X))


class Fib:
    def __init__(self):
        self.a, self.b = 0, 1

    def f(self, x):
        self.a, self.b = self.b, self.a + self.b      # two tracked numbers in one sum
        return x


def test_arithmetic_over_two_tracked_numbers_is_replayed():
    m, eager = Fib(), Fib()
    run = ss.export(m.f, (X,)).module()
    for _ in range(4):
        run(X)
        eager.f(X)
    assert (m.a, m.b) == (eager.a, eager.b) == (3, 5)


class Slices:
    def __init__(self):
        self.lst = [1, 2, 3, 4]

    def f(self, x):
        del self.lst[1:3]
        return x


def test_deleting_a_slice_of_a_state_list_is_refused_with_its_message():
    m = Slices()
    with pytest.raises(ss.UserError, match=r"deleting a slice of the list self\.lst at "):
        ss.export(m.f, (X,))
    assert m.lst == [1, 2, 3, 4]


class OneBeforeTwoAfter:
    def __init__(self):
        self.n = 0
        self.h = []

    def f(self, x):
        self.n += 1
        if not (x >= 0).all():
            raise ValueError("negative")
        self.h.append(x.sum())
        self.h.append(x.max())
        return x


def test_only_the_writes_before_a_failing_check_are_made():
    m = OneBeforeTwoAfter()
    run = ss.export(m.f, (X,)).module()
    with pytest.raises(ValueError, match="negative"):
        run(-X - 1.0)
    assert m.n == 1 and m.h == []


class Removes:
    def __init__(self):
        self.h = [1.0, 2.0]
        self.d = {"a": 1.0, "b": 2.0}
        self.tmp = 3.0

    def f(self, x):
        self.h.clear()
        del self.d["a"]
        del self.tmp
        self.h.append(x.sum())
        return x


def test_clear_del_item_and_del_attribute_are_replayed():
    m = Removes()
    run = ss.export(m.f, (X,)).module()
    m.h.append(9.0)
    m.d["c"] = 5.0
    m.tmp = 4.0
    run(X)
    assert [float(v) for v in m.h] == [3.0] and m.d == {"b": 2.0, "c": 5.0}
    assert not hasattr(m, "tmp")


class Scaled:
    def __init__(self):
        self.scale = 2.0

    def f(self, x):
        return x * self.scale


def test_a_guarded_attribute_that_is_gone_is_a_user_error():
    m = Scaled()
    run = ss.export(m.f, (X,)).module()
    del m.scale
    with pytest.raises(ss.UserError, match=r"self\.scale is gone"):
        run(X)


class Window:
    def __init__(self):
        self.buf = np.arange(10.0)

    def f(self, x):
        self.cur = self.buf[:x.shape[0]]        # a slice of state by a size
        return x + self.cur


def test_state_bound_to_a_slice_by_a_size_has_the_call_s_size():
    m, eager = Window(), Window()
    ep = ss.export(m.f, (np.ones(4),), dynamic_shapes={"x": (ss.Dim.AUTO,)})
    run = ep.module()
    run(np.ones(6))
    eager.f(np.ones(6))
    assert m.cur.shape == eager.cur.shape == (6,)
    assert np.array_equal(m.cur, eager.cur)


class Writes:
    def __init__(self):
        self.h = []

    def f(self, x):
        self.h.append(x.sum())
        return x


def test_a_backend_that_cannot_replay_writes_names_the_line():
    pytest.importorskip("dask")
    m = Writes()
    ep = ss.export(m.f, (X,))
    with pytest.raises(ss.UserError, match=r"backend='dask' cannot replay the program's "
                                           r"writes to Python state \(self\.h\.append\(.*\) "
                                           r"at .*test_mutation_kills_state\.py:\d+\)"):
        ep.compile(backend="dask")


def appends(x, acc):
    acc.append(x.sum())
    return x * len(acc)


def test_a_loaded_program_guards_its_list_argument(tmp_path):
    ep = ss.export(appends, (X, [1.0]))
    ss.save(ep, str(tmp_path / "m.ss"))
    run = ss.load(str(tmp_path / "m.ss")).module()
    acc = [1.0]
    assert np.array_equal(run(X, acc), X * 2)      # (root kinds json made: not interned)
    assert acc == [1.0, 3.0]


class Appender:
    def __init__(self, fh):
        self.log = fh

    def f(self, x):
        self.log.write("entry\n")       # I/O: refused, and the file put back
        return x


@pytest.mark.parametrize("past", [0, 10])
def test_a_file_written_by_the_program_gets_its_length_back(tmp_path, past):
    p = tmp_path / "log.txt"
    p.write_text("head\n")
    with open(p, "r+") as fh:
        fh.seek(5 + past)               # at the end, or past it
        with pytest.raises(ss.UserError, match=r"self\.log"):
            ss.export(Appender(fh).f, (X,))
        assert fh.tell() == 5 + past
    assert p.read_text() == "head\n"


def test_an_opaque_object_refusal_says_why():
    m = Tagged()
    with pytest.raises(ss.UserError) as e:
        ss.export(m.f, (X,))
    assert "symshape does not model a" in str(e.value) and "%s" not in str(e.value)
    assert "a change to it cannot be replayed" in str(e.value)


class NotACache:
    """A callable with a ``cache_clear`` method that is no ``lru_cache``."""

    def __init__(self):
        self.w = np.full(3, 2.0)

    def __call__(self, x):
        return x * self.w

    def cache_clear(self):
        pass


class UsesIt:
    def __init__(self):
        self.memo = NotACache()

    def f(self, x):
        return self.memo(x)


def test_a_callable_with_cache_clear_only_is_a_plain_object():
    m = UsesIt()
    run = ss.export(m.f, (X,)).module()
    m.memo.w = np.full(3, 3.0)          # its state: read through the path every call
    assert np.array_equal(run(X), X * 3.0)


class TwoReads:
    def __init__(self):
        self.t, self.u = 0, 1

    def f(self, x):
        self.t = self.t + self.u        # the second operand read by this write alone
        self.u = 7
        return x


def test_both_operands_of_a_tracked_sum_are_read_when_the_call_begins():
    m, eager = TwoReads(), TwoReads()
    run = ss.export(m.f, (X,)).module()
    for _ in range(3):
        run(X)
        eager.f(X)
    assert (m.t, m.u) == (eager.t, eager.u) == (15, 7)


def closed_over():
    w = np.full(3, 2.0)

    def f(x):
        return x * w
    return f


def test_a_loaded_program_reads_its_closure_state(tmp_path):
    ep = ss.export(closed_over(), (X,))
    ss.save(ep, str(tmp_path / "m.ss"))
    run = ss.load(str(tmp_path / "m.ss")).module()  # (root kinds json made: not interned)
    assert np.array_equal(run(X), X * 2.0)


class FloatKeys:
    def __init__(self):
        self.d = {2.5: np.ones(3)}

    def f(self, x):
        return x * self.d[2.5]


def test_a_state_key_a_saved_program_cannot_spell_is_named(tmp_path):
    ep = ss.export(FloatKeys().f, (X,))
    with pytest.raises(ss.UserError, match=r"a state path uses the key 2\.5, which a saved "
                                           r"program cannot spell; use str or int keys"):
        ss.save(ep, str(tmp_path / "m.ss"))


def accumulates():
    w = np.zeros(3)

    def f(x):
        nonlocal w
        w = w + x                       # a closure cell rebound by the program
        return w
    return f


def test_a_loaded_program_rebinds_its_closure_cell(tmp_path):
    ep = ss.export(accumulates(), (X,))
    ss.save(ep, str(tmp_path / "m.ss"))
    run = ss.load(str(tmp_path / "m.ss")).module()
    run(X)
    assert np.array_equal(run(X), X * 2)            # the second call reads the first's


def counts():
    n = 0

    def f(x):
        nonlocal n
        n = n + 1                       # a closure cell rebound with a number
        return x * 2.0
    return f


@pytest.mark.parametrize("make", [accumulates, counts])
def test_a_program_rebinds_its_closure_cell_as_eager_does(make):
    f, eager = make(), make()
    run = ss.export(f, (X,)).module()
    for _ in range(3):
        assert np.array_equal(run(X), eager(X))
    got, want = f.__closure__[0].cell_contents, eager.__closure__[0].cell_contents
    assert np.array_equal(got, want) and np.array_equal(got, 3 if make is counts else X * 3)


class Compares:
    def __init__(self, start, op):
        self.t, self.op = start, op

    def f(self, x):
        self.t += 1
        if self.op(self.t, 2):          # a tracked number on the left of a comparison
            return x * 2.0
        return x


@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.gt, operator.ge,
                                operator.ne, operator.eq], ids=lambda op: op.__name__)
def test_every_comparison_of_a_tracked_number_is_eager_s(op):
    for start in (0, 1, 2):             # the number below, at and above the constant
        m, eager = Compares(start, op), Compares(start, op)
        run = ss.export(m.f, (X,)).module()
        assert np.array_equal(run(X), eager.f(X)), (op, start)
        assert m.t == eager.t


class SizeFirst:
    def __init__(self):
        self.n = 0

    def f(self, x):
        self.n = x.shape[0] - self.n    # the size on the left of the tracked arithmetic
        if not (x >= 0).all():
            raise ValueError("negative")
        return x


def test_a_write_with_the_size_on_the_left_is_made_before_a_failing_check():
    m, eager = SizeFirst(), SizeFirst()
    run = ss.export(m.f, (X,), dynamic_shapes={"x": (ss.Dim.AUTO,)}).module()
    for x in (np.arange(4.0), -np.arange(1.0, 6.0)):
        try:
            eager.f(x)
        except ValueError:
            with pytest.raises(ValueError, match="negative"):
                run(x)
        else:
            run(x)
        assert m.n == eager.n
    assert m.n == 1


class NegatedSize:
    def __init__(self):
        self.n = 1

    def f(self, x):
        self.n = -(self.n + x.shape[0])     # a negated sum holding the call's size
        return x


def test_a_negated_write_holding_a_size_takes_the_call_s_size():
    m, eager = NegatedSize(), NegatedSize()
    ep = ss.export(m.f, (X,), dynamic_shapes={"x": (ss.Dim.AUTO,)})
    assert str(ep).endswith("State writes (replayed in this order):\n"
                            "    self.n = -((self.n + s0))")     # the size by its symbol
    run = ep.module()
    for x in (np.arange(4.0), np.arange(7.0)):
        run(x)
        eager.f(x)
        assert m.n == eager.n
    assert m.n == -(-(1 + 4) + 7)


class NoneItems:
    def __init__(self):
        self.cfg = {"scale": None}
        self.hooks = [None]

    def f(self, x):
        if self.cfg["scale"] is None and self.hooks[0] is None:    # None held by items
            return x * 2.0
        return x


def test_state_items_that_hold_none_are_read_as_none():
    m = NoneItems()
    run = ss.export(m.f, (X,)).module()
    assert np.array_equal(run(X), X * 2.0)
    m.hooks[0] = print                  # the guard after the None item fails: named
    with pytest.raises(ss.UserError, match=r"self\.hooks\[0\] changed: None -> "):
        run(X)
    m.hooks[0] = None
    assert np.array_equal(run(X), X * 2.0)


class StoresAndDeletes:
    def __init__(self):
        self.tmp, self.h = 1, []

    def f(self, x):
        self.d = {"a": x.sum(), "b": [x.max()]}     # a new dict the program stores
        del self.tmp
        self.h.append(x.min())
        return x


WRITES = ("State writes (replayed in this order):\n"
          "    self.d = {'a': sum_1, 'b': [max_1]}\n"
          "    del self.tmp\n"
          "    self.h.append(min_1)")


def test_the_program_lists_its_writes_and_so_does_the_loaded_one(tmp_path):
    ep = ss.export(StoresAndDeletes().f, (X,))
    assert str(ep).endswith(WRITES)
    ss.save(ep, str(tmp_path / "m.ss"))
    assert str(ss.load(str(tmp_path / "m.ss"))).endswith(WRITES)   # ops json made


class AppendPop:
    def __init__(self):
        self.h = [1.0]

    def f(self, x):
        self.h.append(x.sum())
        return x * self.h.pop()         # pops the item it appended: no length read


def test_popping_the_item_the_trace_appended_reads_no_length():
    m, eager = AppendPop(), AppendPop()
    run = ss.export(m.f, (X,)).module()
    for extra in ([], [2.0, 3.0]):      # a longer list: eager works the same
        m.h += extra
        eager.h += extra
        assert np.array_equal(run(X), eager.f(X))
        assert m.h == eager.h


class SlottedApart:
    __slots__ = ("count",)

    def __init__(self):
        self.count = 0

    def step(self, x):
        c = self.count                  # a read: not where the change is made
        self.count = c + 1
        return x * 2.0


def test_a_slots_write_names_the_line_that_stores_not_the_one_that_reads():
    m = SlottedApart()
    with pytest.raises(ss.UserError, match=r"self\.count \(0 -> 1\)") as e:
        ss.export(m.step, (X,))
    msg = str(e.value)
    assert "self.count = c + 1" in msg and "c = self.count" not in msg
    assert m.count == 0


class Loops:
    def __init__(self):
        self.it = iter([1.0, 2.0, 3.0])

    def f(self, x):
        for v in self.it:               # the iterator moves: no method call names the line
            break
        return x * 2.0


def test_an_opaque_object_changed_by_any_use_names_that_line():
    with pytest.raises(ss.UserError, match=r"self\.it \(it advanced\) at .*test_mutation_kills_"
                                           r"state\.py:\d+: for v in self\.it:"):
        ss.export(Loops().f, (X,))
