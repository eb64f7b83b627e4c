"""The op traits table (capture/ops/traits.py) is the one place op kinds live.

Every op the tracer can emit has traits; fusion, the CUDA planner, the C formulas and
run_decompositions read the table's sets instead of keeping their own; docs/core_ops.md
names exactly the table's core ops; and the reductions each backend takes are the ones it
computes as eager NumPy does (the NumPy backend's blocked groups bit for bit, the CUDA
kernels under the emulator to rounding)."""
import pathlib
import re
import shutil

import numpy as np

from repo_paths import REPO
import pytest

import symshape as ss
from symshape import Dim
from symshape.capture import decomp
from symshape.capture.ir import Node
from symshape.capture.ops import traits as T
from symshape.capture.ops.registry import OPS, defop
from symshape.codegen import fusion
from symshape.codegen.cuda import cops, groups, kernels
from symshape.errors import InternalError

ROOT = pathlib.Path(REPO)
A = Dim.AUTO


def f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _all_nodes(graph):
    for n in graph.nodes:
        yield n
        for v in n.attrs.values():
            if hasattr(v, "graph") and hasattr(v.graph, "nodes"):
                yield from _all_nodes(v.graph)


# --------------------------------------------------------------------------- coverage
def test_every_defined_op_has_traits():
    import symshape.capture.control  # noqa: F401
    import symshape.capture.randomness  # noqa: F401
    for name, op in OPS.items():
        assert op.traits is T.traits_of(name), name
        assert op.traits.kind in T.KINDS


def test_every_numpy_ufunc_and_each_output_has_traits():
    for n in dir(np):
        u = getattr(np, n)
        if isinstance(u, np.ufunc) and u.__name__ == n:
            t = T.traits_of(n)
            assert t is not None, n
            if u.nout == 1 and u.signature is None:
                assert t.kind == T.ELEMENTWISE and t.ufunc is u and t.fuse == "ew"
            for i in range(u.nout if u.nout > 1 else 0):
                assert T.traits_of("%s_%d" % (n, i)).kind == T.ELEMENTWISE


def test_families_and_custom_ops_get_traits_and_unknown_names_none():
    assert T.traits_of("mylib::scale").kind == T.CUSTOM
    assert T.traits_of("linalg_lstsq").kind == T.LINALG
    assert T.traits_of("drawn_normal").kind == T.RANDOM
    assert T.traits_of("no_such_op") is None
    with pytest.raises(InternalError, match="no entry in the op traits table"):
        defop("no_such_op", "np.nothing({0})")
    assert "no_such_op" not in OPS


def test_every_op_name_the_capture_code_emits_has_traits():
    """A literal op name passed to ``emit`` anywhere in capture/ must be in the table."""
    pat = re.compile(r"""(?:\.emit|_emit_as)\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']""")
    found = set()
    for p in (ROOT / "capture").rglob("*.py"):
        found |= set(pat.findall(p.read_text()))
    assert len(found) > 20
    assert {n for n in found if T.traits_of(n) is None} == set()


def test_every_op_of_the_corpus_and_its_lowering_has_traits():
    from corpus.registry import PROGRAMS
    seen = set()
    for prog in PROGRAMS:
        args = prog.make(**prog.export_at)
        ep = ss.export(prog.fn, args, dynamic_shapes=prog.spec)
        for g in (ep.graph, ep.run_decompositions().graph):
            seen |= {n.op for n in _all_nodes(g)}
    assert {op for op in seen if T.traits_of(op) is None} == set()
    assert len(seen) > 15


# --------------------------------------------------------------------------- one set each
def test_readers_use_the_tables_sets():
    assert fusion.REDUCTIONS is T.ROW_REDUCTIONS
    assert cops.REDUCTIONS is T.KERNEL_REDUCTIONS
    assert decomp.CORE_OPS is T.CORE_OPS
    assert decomp.RENAMES is T.API_RENAMES
    # the CUDA kernels take a subset of what the NumPy groups take, and say why not the rest
    assert T.KERNEL_REDUCTIONS < T.ROW_REDUCTIONS
    assert {n for n in T.ROW_REDUCTIONS - T.KERNEL_REDUCTIONS
            if T.REDUCE[n].c_combine is None} == {"var", "std"}


_GREPPED = ("capture", "codegen/fusion.py", "codegen/numpy_backend.py", "codegen/cuda")


def _source_lines():
    for part in _GREPPED:
        p = ROOT / part
        for f in ([p] if p.is_file() else sorted(p.rglob("*.py"))):
            if f.name == "traits.py":
                continue
            for i, line in enumerate(f.read_text().splitlines(), 1):
                yield "%s:%d" % (f.relative_to(ROOT), i), line


@pytest.mark.parametrize("what,names", [
    ("reductions", set(T.REDUCE)),
    ("views", set(T.names(T.VIEW))),
    ("pointwise builders", {"where", "clip", "astype", "copy", "round"}),
    ("core ufuncs", {n for n in T.CORE_OPS if T.TRAITS[n].ufunc is not None}),
])
def test_no_module_keeps_its_own_set_of_op_names(what, names):
    """A line listing three or more names of one of the table's sets (as members of a
    tuple / set / list, or as values) is a copy of the set.  Dict keys naming ops are fine
    (``{"mean": _mean}``: what to do per op), and so are the tracer's bindings of NumPy
    functions to ops and the names of Python's builtins."""
    allowed = {"capture/ops/reduction.py",        # implements(np.sum) -> "sum", ...
               "capture/ir.py"}                   # CODE_BUILTINS: min, max, sum, ...
    bad = []
    for where, line in _source_lines():
        if where.split(":")[0] in allowed or line.lstrip().startswith("#"):
            continue
        quoted = set(re.findall(r"""["']([A-Za-z_][A-Za-z0-9_]*)["']\s*(?:[,)\]}]|$)""", line))
        if len(quoted & names) >= 3 and not re.search(r"BUILDERS\s*=", line):
            bad.append("%s: %s" % (where, line.strip()))
    assert bad == [], "%s re-derived outside the traits table:\n%s" % (what, "\n".join(bad))


# --------------------------------------------------------------------------- C templates
def test_c_templates_are_well_formed():
    for name, t in T.TRAITS.items():
        if t.c is None:
            continue
        assert t.kind == T.ELEMENTWISE, name
        if t.c.builder is not None:
            assert t.c.builder in cops.BUILDERS and not t.c.forms, name
            continue
        assert t.ufunc is not None and set(t.c.forms) <= set("biuf"), name
        for kind, text in t.c.forms.items():
            assert set(t.c.helpers[kind]) <= set(cops.HELPERS), (name, kind)
            fields = set(re.findall(r"\{(\w*)\}", text))
            assert fields <= {"0", "1", "ct", "f", "inf"}, (name, text)
            assert {int(f) for f in fields if f.isdigit()} <= set(range(t.ufunc.nin)), name
    for r in T.REDUCE.values():
        assert set(r.helpers) <= set(cops.HELPERS)


def test_array_api_spellings_share_the_numpy_ops_traits():
    for np_name, api in T.API_RENAMES.items():
        a, b = T.TRAITS[np_name], T.TRAITS[api]
        assert a.ufunc is b.ufunc and a.c is b.c and a.core == b.core == api
        assert b.is_core and b.fuse is None       # written np.<op>(out=) only when NumPy-named


# --------------------------------------------------------------------------- core set doc
def _doc_core_names():
    text = (ROOT / "docs" / "core_ops.md").read_text()
    core = text[text.index("## Creation"):text.index("## Default decompositions")]
    return set(re.findall(r"`([a-z_0-9]+)`", core)), text


def test_core_ops_doc_names_exactly_the_tables_core_set():
    named, _ = _doc_core_names()
    ops = {n for n in named if n in T.TRAITS}
    assert ops == set(T.CORE_OPS), ("in the doc, not core: %s; core, not in the doc: %s"
                                    % (sorted(ops - T.CORE_OPS), sorted(T.CORE_OPS - ops)))


def test_core_ops_doc_lists_the_tables_renames():
    _, text = _doc_core_names()
    row = next(line for line in text.splitlines() if line.startswith("| NumPy-named ufuncs"))
    pairs = dict(re.findall(r"`([a-z_0-9]+)` -> `([a-z_0-9]+)`", row))
    assert {k: v for k, v in pairs.items() if k in T.API_RENAMES} == T.API_RENAMES


# --------------------------------------------------------------------------- reductions
ROW_CASES = {
    "sum": lambda x: np.exp(x).sum(axis=-1) * 2,
    "mean": lambda x: x * 3 - (x * x).mean(axis=-1, keepdims=True),
    "prod": lambda x: (x * 0.5 + 1).prod(axis=(1, 2)) + 1,
    "max": lambda x: x - np.abs(x).max(axis=-1, keepdims=True),
    "min": lambda x: np.tanh(x).min(axis=-1) * 2,
    "any": lambda x: (x > 1.5).any(axis=-1) | (x[..., 0] > 0),
    "all": lambda x: (x < 2.5).all(axis=-1) & (x[..., 0] > 0),
    "var": lambda x: (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(
        x.var(axis=-1, keepdims=True) + 1e-5),
    "std": lambda x: np.exp(x * 0.1).std(axis=(1, 2), ddof=1) * 2,
}


def test_row_cases_cover_every_reduction():
    assert set(ROW_CASES) == set(T.REDUCE)


@pytest.mark.parametrize("op", sorted(T.ROW_REDUCTIONS))
def test_numpy_groups_fuse_each_row_reduction_bit_for_bit(op, monkeypatch):
    """Every reduction the table marks ``fuse="red"`` joins a blocked group and gives what
    eager NumPy gives, bit for bit, at blocks of a few rows."""
    from symshape.codegen import rt
    monkeypatch.setattr(rt, "BIG", 64)
    monkeypatch.setattr(rt, "BLOCK", 16)
    monkeypatch.setattr(rt, "WORTH", 16)
    f = ROW_CASES[op]
    ep = ss.export(f, (f32(6, 5, 7),), dynamic_shapes=[(A, A, A)])
    nodes = [n for n in ep.graph.nodes if n.op == op]
    items = fusion.form_groups(ep.graph.nodes, lambda s: 8, 16, lambda m, g: True)
    grouped = [n for g in items if type(g) is fusion.Group for n in g.nodes]
    assert nodes and all(n in grouped for n in nodes)
    c = ep.compile()
    for shape in [(6, 5, 7), (9, 3, 33), (2, 2, 2)]:
        x = f32(*shape, seed=sum(shape)) * 2
        want, got = f(x), c(x)
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
@pytest.mark.parametrize("op", sorted(T.ROW_REDUCTIONS))
def test_cuda_takes_the_reductions_with_a_c_combine_and_runs_the_rest_as_calls(op):
    from symshape.codegen.cuda import compile_cupy
    from symshape.codegen.cuda.emulate import emulate
    f = ROW_CASES[op]
    ep = ss.export(f, (f32(6, 5, 7),), dynamic_shapes=[(A, A, A)])
    plan = kernels.plan_program(ep)
    kinds = {plan.kinds[n] for n in ep.graph.nodes if n.op == op}
    assert kinds == ({"red"} if op in T.KERNEL_REDUCTIONS else {"lib"})
    run = emulate(compile_cupy(ep))
    for shape in [(6, 5, 7), (3, 4, 70)]:
        x = f32(*shape, seed=len(shape)) * 2
        want, got = f(x), run(x)
        assert got.dtype == want.dtype
        if want.dtype == bool:
            assert np.array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_ufunc_reduce_maps_through_the_tables_combine():
    def f(x):
        return np.add.reduce(x, axis=1) + np.maximum.reduce(x, axis=1) + \
            np.logical_and.reduce(x > 0, axis=1)
    ep = ss.export(f, (f32(4, 6),), dynamic_shapes=[(A, A)])
    assert {"sum", "max", "all"} <= {n.op for n in ep.graph.nodes}
    x = f32(5, 6, seed=3)
    np.testing.assert_array_equal(ep.module()(x), f(x))


def test_node_kinds_come_from_the_table():
    ep = ss.export(lambda x: np.abs(x)[1:].sum(axis=(1,)) + np.clip(x, 0, 1)[1:, 0],
                   (f32(4, 3),), dynamic_shapes=[(A, A)])
    by_op = {n.op: n for n in ep.graph.nodes if type(n) is Node}
    assert fusion.kind(by_op["absolute"]) == "ew" and fusion.kind(by_op["clip"]) == "ew"
    assert fusion.kind(by_op["sum"]) == "red" and fusion.kind(by_op["getitem"]) == "view"
    assert fusion.ew_ufunc(by_op["absolute"]) is np.absolute
    assert fusion.ew_ufunc(by_op["clip"]) is None


@pytest.mark.parametrize("dt", ["float16", "int8", "float64"])
@pytest.mark.parametrize("op", sorted(T.ROW_REDUCTIONS))
def test_numpy_groups_match_eager_for_every_row_reduction_and_dtype(op, dt, monkeypatch):
    """Bit for bit and in dtype; the float16 mean (NumPy sums it in float32 and rounds once,
    where ``out=`` into float16 would round the sum first) stays out of groups."""
    from symshape.codegen import rt
    monkeypatch.setattr(rt, "BIG", 64)
    monkeypatch.setattr(rt, "BLOCK", 16)
    monkeypatch.setattr(rt, "WORTH", 16)

    def f(x):
        return getattr(x * 1, op)(axis=(1, 2))

    def make(*shape, seed=0):
        return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dt)

    ep = ss.export(f, (make(5, 6, 9),), dynamic_shapes=[(A, A, A)])
    red = next(n for n in ep.graph.nodes if n.op == op)
    assert (fusion.kind(red) == "red") == (not (op == "mean" and dt == "float16"))
    c = ep.compile()
    for shape in [(7, 5, 11), (3, 2, 40)]:
        x = make(*shape, seed=shape[0])
        with np.errstate(all="ignore"):
            want, got = f(x), c(x)
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
@pytest.mark.parametrize("dt", ["int8", "float16"])
@pytest.mark.parametrize("op", sorted(T.KERNEL_REDUCTIONS))
def test_cuda_kernel_reductions_match_numpy_across_dtypes(op, dt):
    """Identity, accumulator dtype and finish from the table give NumPy's dtype and values
    (float16 sums in float32 and rounds once, as NumPy's mean does; to rounding)."""
    from symshape.codegen.cuda import compile_cupy
    from symshape.codegen.cuda.emulate import emulate

    def f(x):
        return getattr(x * 1, op)(axis=(1, 2))

    def make(*shape, seed=0):
        return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dt)

    ep = ss.export(f, (make(5, 6, 9),), dynamic_shapes=[(A, A, A)])
    assert {kernels.plan_program(ep).kinds[n] for n in ep.graph.nodes if n.op == op} == {"red"}
    run = emulate(compile_cupy(ep))
    x = make(7, 5, 11, seed=7)
    with np.errstate(all="ignore"):
        want, got = f(x), run(x)
    assert got.dtype == want.dtype
    tol = 2e-3 if dt == "float16" or op == "mean" else 0
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                               atol=tol)
