"""The input check as typed records: the Python renderer agrees with the records' Z3 meaning
(the meaning translation validation proves things about), the text renderer and the one
failure protocol give the messages and the JIT's reasons, and nothing parses code."""
import dataclasses

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import symshape as ss
from symshape.contract import records as C
from symshape.contract import render_python as RP
from symshape.algebra import relations as R
from symshape import runtime as _rt
from symshape.errors import InternalError
from symshape.algebra.expr import Sym
from symshape.contract.constraint_set import ConstraintSet, InputDesc
from symshape.contract.writer import CheckWriter
from symshape.algebra.infinity import INT_OO
from symshape.algebra.ranges import ValueRange
from symshape.contract.meaning import CheckMeaning
from symshape.reasoning.z3bridge import z3mod

F32 = np.dtype("float32")
SYMS = [Sym(0), Sym(1)]


# --------------------------------------------------------------------------- generators
@st.composite
def dim_exprs(draw):
    """A static size, or a*s + b over one root (or s0 + s1)."""
    kind = draw(st.sampled_from(["int", "lin", "lin", "sum"]))
    if kind == "int":
        return draw(st.integers(0, 6))
    if kind == "sum":
        return SYMS[0].expr + SYMS[1].expr + draw(st.integers(-1, 2))
    s = draw(st.sampled_from(SYMS))
    return s.expr * draw(st.integers(1, 3)) + draw(st.integers(-1, 2))


@st.composite
def constraint_sets(draw):
    inputs = []
    for i in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 4)) == 0:
            e = draw(st.one_of(st.integers(0, 5), dim_exprs()))
            inputs.append(InputDesc("n%d" % i, "n%d" % i, sym=e))
        else:
            dims = tuple(draw(dim_exprs()) for _ in range(draw(st.integers(0, 2))))
            inputs.append(InputDesc("x%d" % i, "x%d" % i, dims=dims, dtype=F32))
    ranges = {}
    for s in SYMS:
        lo = draw(st.integers(0, 3))
        hi = draw(st.sampled_from([INT_OO, lo + 2, lo + 5]))
        ranges[s] = ValueRange(lo, hi)
    facts = []
    if draw(st.booleans()):
        facts.append(R.le(SYMS[0].expr + SYMS[1].expr - draw(st.integers(2, 9)), 0))
    used = set()
    for d in inputs:
        for e in (d.dims or ()) + ((d.sym,) if d.sym is not None else ()):
            used |= set(getattr(e, "free_symbols", ()))
    facts = [f for f in facts if f.free_symbols <= used]
    names = {SYMS[0]: "batch"} if draw(st.booleans()) else {}
    return ConstraintSet(inputs, {s: ranges[s] for s in used}, facts, {}, names)


def python_check(writer, cs):
    params = [d.access for d in cs.inputs]
    src = "def check(%s):\n%s    return None\n" % (
        ", ".join(params), "".join("    %s\n" % line for line in writer.lines))
    ns = {"_ndarray": np.ndarray, "_rt": _rt}
    ns.update(writer.consts)
    exec(compile(src, "<check>", "exec"), ns)
    return ns["check"]


def why_check(writer, cs):
    """The same records rendered as the JIT's reason function: ``(index, Failure)``."""
    params = [d.access for d in cs.inputs]
    ns = {"_ndarray": np.ndarray, "_rt": _rt, "_W": _rt.Failures(_rt.return_failure)}
    lines = writer.renderer(fail="why", const=lambda v: _const(ns, v)).lines(writer.checks)
    src = "def why(%s):\n%s    return None\n" % (
        ", ".join(params), "".join("    %s\n" % line for line in lines))
    exec(compile(src, "<why>", "exec"), ns)
    return ns["why"]


def _const(ns, v):
    name = "_c%d" % len([k for k in ns if k.startswith("_c")])
    ns[name] = v
    return name


def meaning_accepts(records, sizes) -> bool:
    """Whether the records' Z3 meaning accepts these concrete input sizes."""
    z3 = z3mod()
    ex = CheckMeaning(lambda name: z3.IntVal(sizes[name]))
    ex.run(records)
    solver = z3.Solver()
    solver.add(*ex.side)
    solver.add(*ex.accept)
    return solver.check() == z3.sat


# --------------------------------------------------------------------------- renderer == meaning
@settings(max_examples=60)
@given(cs=constraint_sets(), data=st.data())
def test_rendered_python_agrees_with_the_records_meaning(cs, data):
    writer = CheckWriter(cs)
    try:
        writer.emit()
    except InternalError:
        assume(False)            # a contract no input binds: not a check to render
    check = python_check(writer, cs)
    why = why_check(writer, cs)
    for _ in range(4):
        args, sizes = [], {}
        for d in cs.inputs:
            if d.is_array:
                shape = tuple(data.draw(st.integers(0, 12)) for _ in d.dims)
                args.append(np.zeros(shape, F32))
                sizes.update({"%s.shape[%d]" % (d.path, k): n for k, n in enumerate(shape)})
            else:
                v = data.draw(st.integers(-1, 12))
                args.append(v)
                sizes[d.path] = v
        try:
            check(*args)
            ran, message = True, None
        except ss.UserError as e:
            ran, message = False, str(e)
        assert ran == meaning_accepts(writer.checks, sizes), (writer.lines, sizes)
        # the JIT's rendering fails at the same record, with the same failure
        failed = why(*args)
        assert (failed is None) == ran
        if failed is not None:
            assert failed[1].message() == message


def test_each_record_is_one_line_in_every_mode():
    cs = ConstraintSet(
        [InputDesc("x", "x", dims=(SYMS[0].expr, 4), dtype=F32),
         InputDesc("y", "y", dims=(2 * SYMS[1].expr + 1, SYMS[0].expr), dtype=F32),
         InputDesc("n", "n", sym=SYMS[0].expr + 1)],
        {SYMS[0]: ValueRange(2, 9), SYMS[1]: ValueRange(2, INT_OO)},
        [R.le(SYMS[0].expr + SYMS[1].expr - 20, 0)], {}, {})
    w = CheckWriter(cs)
    w.emit()
    assert len(w.lines) == len(w.checks)
    for fail in ("raise", "break", "why"):
        lines = w.renderer(fail=fail, const=lambda v: "K").lines(w.checks)
        assert len(lines) == len(w.checks)
        for rec, line in zip(w.checks, lines):
            if C.is_check(rec) and fail == "break":
                assert line.endswith(": break")
            if C.is_check(rec) and fail == "why":
                assert ": return " in line and "_W.%s(" % rec.fails in line


def test_records_hold_values_not_code():
    cs = ConstraintSet([InputDesc("feats['a']", ("feats", ("a",)), dims=(SYMS[0].expr,), dtype=F32)],
                       {SYMS[0]: ValueRange(2, INT_OO)}, [], {}, {})
    w = CheckWriter(cs)
    w.emit()
    for rec in w.checks:
        assert dataclasses.is_dataclass(rec) and rec.__dataclass_params__.frozen
        for f in dataclasses.fields(rec):
            v = getattr(rec, f.name)
            assert not (isinstance(v, str) and ("_rt." in v or " if " in v or "!=" in v))
    read = next(r for r in w.checks if type(r) is C.Read)
    assert read.access == C.Access("feats", "['a']")
    # a renamed parameter is a renderer option, not a text substitution
    r = w.renderer(param=lambda p: "_p_" + p, const=lambda v: "K")
    assert r.line(read) == "_a0 = _p_feats['a']"


def test_size_checks_render_through_the_same_renderer():
    s = SYMS[0]
    lines = RP.render_size_checks([(R.eq(s.expr - 3, 0), "m.shape[0] == 3")])
    assert lines == ["if not ((s0 - 3) == 0): _rt.bad_check('m.shape[0] == 3')"]
    lines = RP.render_size_checks([(R.le(s.expr - 3, 0), "small")], "bad_guard")
    assert lines == ["if not ((s0 - 3) <= 0): _rt.bad_guard('small')"]


# --------------------------------------------------------------------------- one protocol
def test_every_failure_kind_has_a_message_and_a_reason():
    methods = [m for m in dir(_rt.Failures) if m.startswith("bad_")]
    kinds = set()
    seen = []
    probe = _rt.Failures(lambda f: seen.append(f) or f)
    samples = {"bad_array": ("x", np.zeros((2, 3), np.float64), 2, F32),
               "bad_static": ("x.shape[0]", 5, 8), "bad_range": ("x.shape[0]", 1, 2, 9, None),
               "bad_relation": ("y.shape[0]", 6, "x.shape[0] + 1", 5),
               "bad_congruence": ("y.shape[0]", 8, "2*s1 + 1"), "bad_guard": ("a <= b",),
               "bad_check": ("m == 3",), "bad_class": ("rng", "Generator", 3),
               "bad_configured": ("act", max), "bad_int": ("n", 2.0),
               "bad_scalar": ("eps", 1e-5, 1e-6), "bad_struct": ("xs", "a list", 3),
               "bad_len": ("xs", [1], "tuple", 2), "bad_keys": ("d", {"a": 1}, {"b"}),
               "bad_rebound": ("global", "W", "f"),
               "bad_state": ("self.training changed: True -> False",)}
    assert set(methods) == set(samples)
    for m in methods:
        f = getattr(probe, m)(*samples[m])
        kinds.add(f.kind)
        assert f.message() and f.reason()
        with pytest.raises(ss.UserError) as e:
            getattr(_rt.Failures(), m)(*samples[m])
        assert str(e.value) == f.message()
    assert kinds <= set(_rt.TEXTS)


def test_raising_and_returning_give_the_same_failure():
    ret = _rt.Failures(_rt.return_failure)
    f = ret.bad_static("x.shape[0]", 5, 8)
    assert f.reason() == "x.shape[0] == 5 (got 8)"
    with pytest.raises(ss.UserError, match=r"^x.shape\[0\]: expected 5, got 8 \(the axis is static"):
        _rt.bad_static("x.shape[0]", 5, 8)
    f = ret.bad_range("x.shape[0]", 1, 2, "int_oo", None)
    assert f.reason() == "x.shape[0] >= 2 (got 1)"
    assert ret.bad_array("x", [1], 1, F32).reason() == "type(x) is numpy.ndarray (got list)"


def test_cupy_array_type_uses_the_same_protocol():
    fake = type("ndarray", (), {})
    f = _rt.Failures(_rt.return_failure, array_type=fake, lib="cupy")
    failed = f.bad_array("x", np.zeros(3), 1, F32)
    assert failed.reason() == "type(x) is cupy.ndarray (got numpy.ndarray)"
    assert failed.message().startswith("input x: expected a cupy.ndarray (backend='cupy'), "
                                       "got numpy.ndarray; move it to the GPU")


# --------------------------------------------------------------------------- the JIT reads records
def test_jit_guards_and_reasons_come_from_the_records():
    def f(x, n: int, scale=2.0):
        return x[:n] * scale

    cf = ss.compile(f)
    cf(np.ones(7), 3)
    cf(np.ones(9), 3)
    cf(np.ones(9, np.float32), 3)
    v = cf.variants[-1]
    assert v.guards == v.compiled.input_check.guards()
    assert any(g.startswith("x: ndarray, ndim 1, dtype float32") for g in v.guards)
    assert cf.recompile_reasons[-1] == "x.dtype == float64 (got float32)"
    # each variant's constants live under its own names in the dispatcher
    assert "_K2_0" in cf.dispatch_source and "_ND2" in cf.dispatch_source
    assert "_rt.bad_" not in cf.dispatch_source


@pytest.mark.parametrize("names", [("_ndarray", "x_ndarray"), ("np", "_rt")])
def test_parameters_named_like_check_helpers(names):
    """The body is compiled with renamed parameters; the dispatcher's checks read the
    user's (the renderer's parameter option, not text substitution)."""
    a, b = names
    src = "def f(%s, %s):\n    return %s + %s\n" % (a, b, a, b)
    ns = {}
    exec(src, ns)
    cf = ss.compile(ns["f"])
    x, y = np.ones(3), np.arange(3.0)
    for _ in range(3):
        np.testing.assert_array_equal(cf(x, y), x + y)
    assert len(cf.variants) == 1 and cf.variants[0].calls == 3
    np.testing.assert_array_equal(cf(np.ones(5), np.ones(5)), np.ones(5) * 2)
    assert cf.recompile_reasons == ["%s.shape[0] == 3 (got 5)" % a]
    with pytest.raises(ss.UserError):
        ss.export(ns["f"], (x, y)).module()(np.ones(4), y)
