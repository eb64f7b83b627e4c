"""Property: the printed contract is the enforced one, and it is exact.

Random programs over two inputs ``x`` (n,) and ``y`` (m,) with Dim.AUTO axes assert random
size conditions (``ss.check``, in the function or inside one ``ss.cond`` branch) built from the forms the engine must see through: floor
division and modulo by constants, Min / Max, products, linear relations between the two
sizes.  Over a grid of input sizes, ``module()`` is the oracle:
  * every accepted input satisfies ``range_constraints`` (each root symbol's value in its
    range) and every condition in ``ep.guards``;
  * every finite lower and upper bound in ``range_constraints`` is attained by an input
    that ``module()`` accepts (the ranges are exact, not merely sound).
"""
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape import Dim
from symshape.reasoning.decision import holds as _holds
from symshape.algebra.infinity import is_inf

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
GRID = 48          # sizes 0..GRID-1 on each input: bounds are drawn to fall inside


def _forms(n_hint, m_hint):
    """Condition builders ``(text, fn(n, m))`` that hold at the example sizes."""
    k = st.integers(2, 5)
    return st.one_of(
        k.map(lambda k: ("(n + 1) // %d >= %d" % (k, (n_hint + 1) // k),
                         lambda n, m, k=k, c=(n_hint + 1) // k: (n + 1) // k >= c)),
        k.map(lambda k: ("n // %d == %d" % (k, n_hint // k),
                         lambda n, m, k=k, c=n_hint // k: n // k == c)),
        k.map(lambda k: ("n // %d <= %d" % (k, n_hint // k + 1),
                         lambda n, m, k=k, c=n_hint // k + 1: n // k <= c)),
        st.just(("n * n <= %d" % (n_hint * n_hint + 5),
                 lambda n, m, c=n_hint * n_hint + 5: n * n <= c)),
        st.just(("min(n, %d) == %d" % (n_hint, n_hint),
                 lambda n, m, c=n_hint: ss.sym_min(n, c) == c)),
        k.map(lambda k: ("%d * n // 2 <= %d" % (k, k * n_hint // 2),
                         lambda n, m, k=k, c=k * n_hint // 2: k * n // 2 <= c)),
        st.just(("m <= n - 1", lambda n, m: m <= n - 1) if m_hint <= n_hint - 1 else
                ("n <= m", lambda n, m: n <= m)),
        st.just(("n + m <= %d" % (n_hint + m_hint + 3),
                 lambda n, m, c=n_hint + m_hint + 3: n + m <= c)),
        st.just(("max(n, m) <= %d" % (max(n_hint, m_hint) + 2),
                 lambda n, m, c=max(n_hint, m_hint) + 2: ss.sym_max(n, m) <= c)),
        st.just(("n * m <= %d" % (n_hint * m_hint + 4),
                 lambda n, m, c=n_hint * m_hint + 4: n * m <= c)),
    )


@st.composite
def programs(draw):
    n = draw(st.integers(4, 30))
    m = draw(st.integers(2, 20))
    conds = draw(st.lists(_forms(n, m), min_size=1, max_size=3))
    # keep everything inside the grid: a final bound that the conditions may tighten
    conds.append(("n <= %d" % (GRID - 8), lambda n, m: n <= GRID - 8))
    conds.append(("m <= %d" % (GRID - 8), lambda n, m: m <= GRID - 8))
    in_branch = draw(st.booleans())
    return n, m, conds, in_branch


def _make(conds, in_branch):
    """The checks run in the function, or inside one branch of an ``ss.cond`` (whose
    guards must join the contract all the same)."""
    def checks(x, y):
        n, m = x.shape[0], y.shape[0]
        for _, c in conds:
            ss.check(c(n, m))
        return x.sum() + y.sum()

    def f(x, y):
        if in_branch:
            return ss.cond(x.sum() >= 0, checks, lambda x, y: x.sum() - y.sum(), (x, y))
        return checks(x, y)
    return f


def _root_values(ep, sizes):
    """Root symbol -> value for input sizes (n, m), read off the linear input dims."""
    vals = {}
    for d, size in zip((ep.constraints.inputs[0].dims[0], ep.constraints.inputs[1].dims[0]),
                       sizes):
        if type(d) is int:
            continue
        lin = d.linear_coeffs()
        (s, a), = lin.items()
        vals[s] = (size - d.const) // a
    return vals


@settings(max_examples=200 if THOROUGH else 25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_range_constraints_are_exact_and_the_contract_is_enforced(prog):
    n, m, conds, in_branch = prog
    f = _make(conds, in_branch)
    ep = ss.export(f, (np.ones(n), np.ones(m)),
                   dynamic_shapes={"x": (Dim.AUTO,), "y": (Dim.AUTO,)})
    run = ep.module()
    cs = ep.constraints
    accepted = []
    for a in range(GRID):
        xa = np.ones(a)
        for b in range(GRID):
            try:
                run(xa, np.ones(b))
            except ss.UserError:
                continue
            accepted.append((a, b))
    assert (n, m) in accepted
    seen = {s: set() for s in cs.roots()}
    for sizes in accepted:
        vals = _root_values(ep, sizes)
        for s, v in vals.items():
            assert v in cs.ranges[s], (conds, s, v, cs.ranges[s])
            seen.setdefault(s, set()).add(v)
        for g in cs.facts:                        # what ep.guards prints
            assert _holds(g, vals), (g, sizes)
    for s in cs.roots():
        vr = cs.ranges[s]
        if not is_inf(vr.lower):
            assert vr.lower in seen[s], ("lower bound not attained", [c for c, _ in conds],
                                         s, vr, sorted(seen[s])[:5])
        if not is_inf(vr.upper):
            assert vr.upper in seen[s], ("upper bound not attained", [c for c, _ in conds],
                                         s, vr, sorted(seen[s])[-5:])


# --------------------------------------------------------------------------- programs
# Shape code rather than checks: each step rewrites (x, y) the way array code does, and the
# guards come from the operations themselves (reshape factors, slices, strides, Min / Max,
# a cond whose branches both slice).  ``None`` marks a step that does not apply at the
# example sizes (the generator skips it).
W = np.linspace(0.0, 1.0, 20)
STEPS = {
    "x = x.reshape(-1, k).sum(1)":
        lambda k: lambda x, y: (x.reshape(-1, k).sum(1), y) if x.shape[0] % k == 0 else None,
    "y = y.reshape(k, -1).sum(0)":
        lambda k: lambda x, y: (x, y.reshape(k, -1).sum(0)) if y.shape[0] % k == 0 else None,
    "x = x[:y.shape[0]] + y":
        lambda k: lambda x, y: (x[:y.shape[0]] + y, y) if y.shape[0] <= x.shape[0] else None,
    "x = x[::k]":
        lambda k: lambda x, y: (x[::k], y),
    "y = y[:k]":
        lambda k: lambda x, y: (x, y[:k]),
    "x = x[:x.shape[0] // k * k]":
        lambda k: lambda x, y: (x[:x.shape[0] // k * k], y),
    "x = concat(x, y)[:max(len(x), len(y))]":
        lambda k: lambda x, y: (np.concatenate([x, y])[:ss.sym_max(x.shape[0], y.shape[0])],
                                y),
    "y = y[:min(len(y), k)] * len(y) // k":
        lambda k: lambda x, y: (x, y[:ss.sym_min(y.shape[0], k)] * (y.shape[0] // k)),
    "x = cond(x[:len(y)] * 2, x[:len(y)] - 1)":
        lambda k: lambda x, y: (ss.cond(x.sum() >= 0, lambda x, y: x[:y.shape[0]] * 2.0,
                                        lambda x, y: x[:y.shape[0]] - 1.0, (x, y)), y),
    "x = x + y[:len(x)] (cond branch)":
        lambda k: lambda x, y: (ss.cond(x.sum() >= 0, lambda x, y: x + y[:x.shape[0]],
                                        lambda x, y: x - y[:x.shape[0]], (x, y)), y)
        if x.shape[0] <= y.shape[0] else None,
    # a constant of the program bounds the sizes: above, below, through a floor division
    "x = x + W[:len(x)]":
        lambda k: lambda x, y: (x + W[:x.shape[0]], y)
        if x.shape[0] <= len(W) - k else None,
    "y = y[:k + 2] + W[:k + 2]":
        lambda k: lambda x, y: (x, y[:k + 2] + W[:k + 2]) if y.shape[0] >= k + 2 else None,
    "x = x[:len(x) // k] + W[:len(x) // k]":
        lambda k: lambda x, y: (x[:x.shape[0] // k] + W[:x.shape[0] // k], y),
}
SMALL = 32         # sizes 0..SMALL-1 on each input for the shape-code programs


@st.composite
def shape_programs(draw):
    n = draw(st.integers(2, SMALL - 1))
    m = draw(st.integers(2, SMALL - 1))
    steps = []
    x, y = np.ones(n), np.ones(m)
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(sorted(STEPS)))
        k = draw(st.integers(2, 4))
        step = STEPS[name](k)
        got = step(x, y)
        if got is None or got[0].shape[0] < 2 or got[1].shape[0] < 2:
            continue                 # keep every intermediate size symbolic at the example
        x, y = got
        steps.append(("%s, k=%d" % (name, k), step))
    return n, m, steps


def _program(steps):
    def f(x, y):
        for _, step in steps:
            x, y = step(x, y)
        return x.sum() * 3.0 + y.sum()
    return f


@settings(max_examples=100 if THOROUGH else 12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(shape_programs())
def test_shape_code_contract_is_exact_and_enforced(prog):
    """For programs whose guards come from their operations: every input ``module()``
    accepts satisfies ``range_constraints`` and every guard and gives eager NumPy's
    result; every finite bound of ``range_constraints`` is attained by an accepted input."""
    from symshape.contract.guard_text import shown_facts
    n, m, steps = prog
    f = _program(steps)
    ep = ss.export(f, (np.ones(n), np.ones(m)),
                   dynamic_shapes={"x": (Dim.AUTO,), "y": (Dim.AUTO,)})
    run = ep.module()
    cs = ep.constraints
    names = [s for s, _ in steps]
    seen = {s: set() for s in cs.roots()}
    accepted = 0
    for a in range(SMALL):
        xa = np.arange(float(a)) - 3.0
        for b in range(SMALL):
            yb = np.arange(float(b)) * 0.5
            try:
                got = run(xa, yb)
            except ss.UserError:
                continue
            accepted += 1
            np.testing.assert_allclose(got, f(xa, yb), err_msg=str((names, a, b)))
            vals = _root_values(ep, (a, b))
            for s, v in vals.items():
                assert v in cs.ranges[s], (names, s, v, cs.ranges[s])
                seen[s].add(v)
            for g in cs.facts:                    # the checked guards ...
                assert _holds(g, vals), (names, g, (a, b))
            for g in shown_facts(cs):             # ... and the ones ep.guards prints
                assert _holds(g, vals), (names, g, (a, b))
    assert accepted, names
    size_of = {}                                  # root -> its input size at a value
    for d in (cs.inputs[0].dims[0], cs.inputs[1].dims[0]):
        if type(d) is not int:
            (s, a), = d.linear_coeffs().items()
            size_of[s] = lambda v, a=a, c=d.const: a * v + c
    for s in cs.roots():
        vr = cs.ranges[s]
        for end in (vr.lower, vr.upper):
            if not is_inf(end) and size_of[s](end) < SMALL:
                assert end in seen[s], ("bound not attained", names, s, vr,
                                        sorted(seen[s]))
