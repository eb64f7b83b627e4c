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
from symshape.env import _holds
from symshape.infinity import is_inf

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
