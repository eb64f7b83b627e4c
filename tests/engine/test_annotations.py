"""Shape annotations as specs: ss.from_annotations, the return-annotation proof, the CLI."""
from repo_paths import REPO
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

import symshape as ss
from symshape import Dim
from symshape.specs.annotations import parse_dim_str

jaxtyping = pytest.importorskip("jaxtyping")
from jaxtyping import Float, Int  # noqa: E402

ZOO = os.path.join(REPO, "tests", "annotated_zoo")


def f32(*shape):
    return np.ones(shape, np.float32)


# --------------------------------------------------------------------------- reading
def test_names_ints_and_shared_names_become_dims():
    def attn(q: Float[np.ndarray, "batch seq 64"], k: Float[np.ndarray, "batch seq 64"]):
        return q @ np.swapaxes(k, -1, -2)

    spec = ss.from_annotations(attn)
    assert spec == {"q": (Dim("batch"), Dim("seq"), 64), "k": (Dim("batch"), Dim("seq"), 64)}
    ep = ss.export(attn, (f32(2, 5, 64), f32(2, 5, 64)), dynamic_shapes=spec)
    b, s = ep.input_shapes["q"][:2]
    assert ep.input_shapes["k"] == (b, s, 64)
    out = ep.module()(f32(3, 7, 64), f32(3, 7, 64))
    assert out.shape == (3, 7, 7)
    with pytest.raises(ss.UserError, match=r"k\.shape\[1\]"):
        ep.module()(f32(3, 7, 64), f32(3, 6, 64))


def test_derived_dims_wildcards_and_variadics():
    def f(x: Float[np.ndarray, "*batch n"], y: Float[np.ndarray, "n+1"],
          z: Float[np.ndarray, "2*n _"]):
        return (x * y[1:]).sum(-1), z

    spec = ss.from_annotations(f)
    n = Dim("n")
    assert spec["y"] == (n + 1,) and spec["z"] == (2 * n, Dim.AUTO)
    ep = ss.export(f, (f32(2, 3, 4), f32(5), f32(8, 3)), dynamic_shapes=spec)
    s = ep.input_shapes
    assert s["y"][0] - s["x"][2] == 1 and s["z"][0] == 2 * s["x"][2]
    # the variadic axes are left to tracing: dynamic, any number in the module
    assert all(not isinstance(d, int) for d in s["x"])
    a, b = ep.module()(f32(4, 5, 6), f32(7), f32(12, 2))
    assert a.shape == (4, 5) and b.shape == (12, 2)


def test_method_and_callable_object():
    class Head:
        def __init__(self):
            self.w = np.ones((8, 3), np.float32)

        def __call__(self, x: Float[np.ndarray, "batch 8"]) -> Float[np.ndarray, "batch 3"]:
            return x @ self.w

    head = Head()
    spec = ss.from_annotations(head)
    assert spec == {"x": (Dim("batch"), 8)}
    ep = ss.export(head, (f32(4, 8),), dynamic_shapes=spec)
    assert ep.module()(f32(9, 8)).shape == (9, 3)


def test_user_bounds_through_dims():
    def f(x: Float[np.ndarray, "batch 4"]):
        return x * 2

    spec = ss.from_annotations(f, dims={"batch": Dim("batch", max=64)})
    ep = ss.export(f, (f32(3, 4),), dynamic_shapes=spec)
    (vr,) = [v for v in ep.range_constraints.values()]
    assert (vr.lower, vr.upper) == (2, 64)


def test_unannotated_and_scalar_parameters_are_static():
    def f(x: Float[np.ndarray, "n"], scale: float = 2.0, y=None):
        return x * scale

    spec = ss.from_annotations(f)
    assert set(spec) == {"x"}
    ss.export(f, (f32(5),), dynamic_shapes=spec)


def test_dtype_kind_checked_against_example():
    def f(ids: Int[np.ndarray, "batch seq"]):
        return ids + 1

    with pytest.raises(ss.UserError, match=r"ids .*dtype float32.*Int"):
        ss.export(f, (f32(2, 3),), dynamic_shapes=ss.from_annotations(f))
    ss.export(f, (np.zeros((2, 3), np.int32),), dynamic_shapes=ss.from_annotations(f))


def test_rank_mismatch_names_the_annotation():
    def f(x: Float[np.ndarray, "batch seq dim"]):
        return x

    with pytest.raises(ss.UserError, match=r"x \(annotated Float\[np.ndarray, \"batch seq "
                                           r"dim\"\].*shape \(2, 3\).*3 axes"):
        ss.export(f, (f32(2, 3),), dynamic_shapes=ss.from_annotations(f))


def test_input_relation_violation_says_how_to_write_it_in_the_annotation():
    def add(x: Float[np.ndarray, "n"], y: Float[np.ndarray, "m"]):
        return x + y

    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(add, (f32(3), f32(3)), dynamic_shapes=ss.from_annotations(add))
    assert [str(f) for f in e.value.suggested_fixes] == ["m = n"]
    assert "write n where the annotations of" in str(e.value)


def test_bound_violation_says_annotations_cannot_express_it():
    def f(x: Float[np.ndarray, "n"]):
        ss.check(x.shape[0] <= 16)
        return x

    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(f, (f32(3),), dynamic_shapes=ss.from_annotations(f))
    assert "cannot be written in a jaxtyping annotation" in str(e.value)
    assert "dims={'n': Dim('n', max=16)}" in str(e.value)


# --------------------------------------------------------------------------- returns
def test_wrong_return_annotation_is_reported_with_its_fix():
    def merge(x: Float[np.ndarray, "batch heads seq dh"]) -> Float[np.ndarray, "batch seq dh"]:
        b, h, s, d = x.shape
        return x.transpose(0, 2, 1, 3).reshape(b, s, h * d)

    spec = ss.from_annotations(merge)
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(merge, (f32(2, 4, 6, 8),), dynamic_shapes=spec)
    msg = str(e.value)
    assert 'the return annotation of ' in msg and 'Float[np.ndarray, "batch seq dh"]' in msg
    assert "(batch, seq, dh*heads)" in msg or "(batch, seq, heads*dh)" in msg
    (fix,) = e.value.suggested_fixes
    assert str(fix).startswith("def merge(...) -> Float[np.ndarray, \"batch seq ")
    # the fix, applied, makes export succeed
    ss.export(merge, (f32(2, 4, 6, 8),), dynamic_shapes=fix.apply(spec))


def test_return_linear_relation_fix():
    def double(x: Float[np.ndarray, "n d"]) -> Float[np.ndarray, "n d"]:
        return np.concatenate([x, x], axis=1)

    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(double, (f32(3, 4),), dynamic_shapes=ss.from_annotations(double))
    assert [str(f) for f in e.value.suggested_fixes] == [
        'def double(...) -> Float[np.ndarray, "n 2*d"]']
    assert "shape (n, 2*d)" in str(e.value)


def test_correct_return_annotations_pass():
    def f(x: Float[np.ndarray, "*batch n"], y: Float[np.ndarray, "n"]
          ) -> tuple[Float[np.ndarray, "*batch"], Float[np.ndarray, "n+1"]]:
        return x @ y, np.concatenate([y, y[:1]])

    ss.export(f, (f32(2, 3, 4), f32(4)), dynamic_shapes=ss.from_annotations(f))


def test_return_names_only_the_result_has_must_agree():
    def f(x: Float[np.ndarray, "a b"]) -> Float[np.ndarray, "k k"]:
        return x @ x.T

    ss.export(f, (f32(3, 4),), dynamic_shapes=ss.from_annotations(f))

    def g(x: Float[np.ndarray, "a b"]) -> Float[np.ndarray, "k k"]:
        return x

    with pytest.raises(ss.ConstraintViolationError, match="axis 1 is b, annotated k"):
        ss.export(g, (f32(3, 4),), dynamic_shapes=ss.from_annotations(g))


def test_return_dtype_mismatch():
    def f(x: Float[np.ndarray, "n"]) -> Int[np.ndarray, "n"]:
        return x * 2

    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(f, (f32(3),), dynamic_shapes=ss.from_annotations(f))
    assert "dtype float32 is not Int" in str(e.value)
    assert str(e.value.suggested_fixes[0]).endswith('Float[np.ndarray, "n"]')


def test_return_variadic_mismatch_is_named():
    def f(x: Float[np.ndarray, "*batch n"]) -> Float[np.ndarray, "*batch"]:
        return x.sum(0)

    with pytest.raises(ss.ConstraintViolationError, match=r"\*batch is"):
        ss.export(f, (f32(2, 5, 3),), dynamic_shapes=ss.from_annotations(f))


def test_return_holds_only_for_some_sizes_is_a_violation():
    # equal at the example (n = 4 = 2*2) but not for every admitted n
    def f(x: Float[np.ndarray, "n"]) -> Float[np.ndarray, "4"]:
        return x

    with pytest.raises(ss.ConstraintViolationError, match="axis 0 is n, annotated 4"):
        ss.export(f, (f32(4),), dynamic_shapes=ss.from_annotations(f))


@given(st.integers(2, 9), st.integers(1, 4), st.integers(0, 3))
def test_proved_return_matches_eager_at_every_size(n, k, off):
    def f(x: Float[np.ndarray, "n"]) -> Float[np.ndarray, "n"]:
        return np.tile(x, 2)[: x.shape[0]]

    ep = ss.export(f, (f32(5),), dynamic_shapes=ss.from_annotations(f))
    x = np.arange(n, dtype=np.float32) * k + off
    np.testing.assert_array_equal(ep.module()(x), f(x))


# --------------------------------------------------------------------------- parsing
@pytest.mark.parametrize("text, kinds", [
    ("batch seq 64", ["name", "name", "int"]),
    ("_ #b ?c _foo", ["any", "any", "any", "any"]),
    ("*rest n", ["variadic", "name"]),
    ("... 3", ["variadic", "int"]),
    ("n+1 2*n max(a,b)", ["expr", "expr", "expr"]),
    ("rows=3", ["int"]),
])
def test_parse_dim_str(text, kinds):
    assert [a.kind for a in parse_dim_str(text, "x")] == kinds


@pytest.mark.parametrize("text", ["n**2", "f(n)", "*a *b", "n.x", "-3"])
def test_unreadable_axes_are_user_errors(text):
    with pytest.raises(ss.UserError, match="x: "):
        parse_dim_str(text, "x")


@given(st.text(alphabet="ab1+-*_#.?= n()", max_size=12))
def test_parse_never_crashes(text):
    try:
        parse_dim_str(text, "x")
    except ss.UserError:
        pass


def test_nonlinear_input_axis_is_left_to_tracing_with_a_note():
    def f(x: Float[np.ndarray, "a*b"]):
        return x

    spec = ss.from_annotations(f)
    assert spec["x"] == (Dim.AUTO,)
    assert any("a*b" in n for n in spec.notes)


def test_without_jaxtyping_annotations_are_ignored_with_a_message(monkeypatch):
    import symshape.specs.annotations as A
    monkeypatch.setattr(A, "_jaxtyping", lambda: None)

    def f(x: Float[np.ndarray, "n"]):
        return x

    with pytest.warns(UserWarning, match=r"jaxtyping is not installed.*symshape\[jaxtyping\]"):
        assert ss.from_annotations(f) is None


# --------------------------------------------------------------------------- CLI
def _check(path):
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, "-m", "symshape", "check", path], cwd=REPO,
                          capture_output=True, text=True, env=env, timeout=300)


def test_symshape_check_uses_annotations_with_no_spec_written():
    r = _check(os.path.join(ZOO, "good"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 exports: 5 ok" in r.stdout
    # the exports are dynamic: the ranges come from the annotations, under their names
    assert "ok   blocks:mlp  batch = x.shape[0] in [2, int_oo]; seq = x.shape[1] in [2, int_oo]" \
        in r.stdout
    assert "ok   blocks:pool_pairs  " in r.stdout
    pool = next(l for l in r.stdout.splitlines() if l.startswith("ok   blocks:pool_pairs"))
    assert "n in [2, int_oo] (x.shape[1] = 2*n)" in pool and "s0" not in pool


def test_symshape_check_reports_wrong_return_annotation_with_fix():
    r = _check(os.path.join(ZOO, "wrong_return"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert 'the return annotation of merge_heads, Float[np.ndarray, "batch seq dh"]' in r.stdout
    assert 'def merge_heads(...) -> Float[np.ndarray, "batch seq ' in r.stdout


def test_fix_rewrites_annotation_strings_and_says_what_it_cannot(tmp_path):
    import shutil
    src = os.path.join(ZOO, "wrong_return", "heads.py")
    path = tmp_path / "heads.py"
    shutil.copy(src, path)
    with open(path, "a") as fh:
        fh.write('''

@ss.exportable(example_inputs=lambda: (np.ones(3, np.float32), np.ones((2, 3), np.float32)))
def add(x: Float[np.ndarray, "n"], y: Float[np.ndarray, "b m"]) -> Float[np.ndarray, "b n"]:
    return x + y


@ss.exportable(example_inputs=lambda: (np.ones(3, np.float32),))
def small(x: Float[np.ndarray, "n"]) -> Float[np.ndarray, "n"]:
    ss.check(x.shape[0] <= 16)
    return x
''')
    env = dict(os.environ, PYTHONPATH=REPO)
    r = subprocess.run([sys.executable, "-m", "symshape", "check", "--fix", str(tmp_path)],
                       cwd=REPO, capture_output=True, text=True, env=env, timeout=300)
    text = path.read_text()
    assert '-> Float[np.ndarray, "batch seq heads*dh"]' in text or \
        '-> Float[np.ndarray, "batch seq dh*heads"]' in text
    assert 'y: Float[np.ndarray, "b n"]' in text
    assert "a bound cannot be written in a jaxtyping annotation" in r.stdout + r.stderr
    r = _check(str(tmp_path))
    assert "3 exports: 2 ok, 1 failed" in r.stdout, r.stdout


def _strict_checker(fn):
    """A runtime type checker in the style of beartype / typeguard: isinstance per argument."""
    import functools
    import inspect
    import typing
    hints = typing.get_type_hints(fn)
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        for name, value in sig.bind(*args, **kwargs).arguments.items():
            if hints.get(name, typing.Any) is not typing.Any and \
                    not isinstance(value, hints[name]):
                raise TypeError("%s is not a %s" % (name, hints[name]))
        out = fn(*args, **kwargs)
        if hints.get("return", typing.Any) not in (typing.Any, type(None)) and \
                not isinstance(out, hints["return"]):
            raise TypeError("the result is not a %s" % hints["return"])
        return out
    return checked


def test_runtime_checked_functions_export_and_are_proven():
    from jaxtyping import jaxtyped

    @jaxtyped(typechecker=_strict_checker)
    def row_sums(x: Float[np.ndarray, "n d"]) -> Float[np.ndarray, "n"]:
        return x.sum(-1)

    assert row_sums(f32(2, 3)).shape == (2,)          # the checker runs eagerly
    with pytest.raises(TypeError):
        row_sums(np.ones((2, 3), np.int64))
    ep = ss.export(row_sums, (f32(2, 3),), dynamic_shapes=ss.from_annotations(row_sums))
    assert ep.module()(f32(5, 7)).shape == (5,)

    @jaxtyped(typechecker=_strict_checker)
    def wrong(x: Float[np.ndarray, "n d"]) -> Float[np.ndarray, "d"]:
        return x.sum(-1)

    with pytest.raises(ss.ConstraintViolationError, match="axis 0 is n, annotated d"):
        ss.export(wrong, (f32(2, 3),), dynamic_shapes=ss.from_annotations(wrong))


@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 1))
def test_return_proof_accepts_exactly_the_true_relation(k, claimed, axis):
    # concatenating k copies makes axis `axis` k times longer; only "k*n" holds
    def tile(x):
        return np.concatenate([x] * k, axis=axis)

    dims = ["n", "d"]
    out = list(dims)
    out[axis] = "%d*%s" % (claimed, dims[axis]) if claimed != 1 else dims[axis]
    tile.__annotations__ = {"x": Float[np.ndarray, "n d"],
                            "return": Float[np.ndarray, " ".join(out)]}
    spec = ss.from_annotations(tile)
    if claimed == k:
        ss.export(tile, (f32(3, 4),), dynamic_shapes=spec)
    else:
        with pytest.raises(ss.ConstraintViolationError) as e:
            ss.export(tile, (f32(3, 4),), dynamic_shapes=spec)
        want = "%d*%s" % (k, dims[axis]) if k != 1 else dims[axis]
        assert want in str(e.value.suggested_fixes[0])
        ss.export(tile, (f32(3, 4),), dynamic_shapes=e.value.suggested_fixes[0].apply(spec))


def test_example_sizes_must_agree_with_the_annotations():
    def f(x: Float[np.ndarray, "n 3"], y: Float[np.ndarray, "n"]):
        return x[:, 0] + y

    spec = ss.from_annotations(f)
    with pytest.raises(ss.UserError, match=r"x\.shape\[1\] is 4 in the example input, but "
                                           r"the annotation says 3"):
        ss.export(f, (f32(2, 4), f32(2)), dynamic_shapes=spec)
    with pytest.raises(ss.UserError, match=r"y\.shape\[0\] is 5 .* x\.shape\[0\], also "
                                           r"annotated n, is 2"):
        ss.export(f, (f32(2, 3), f32(5)), dynamic_shapes=spec)


# --------------------------------------------------------------------------- --fix
def _project(tmp_path, files):
    import textwrap
    for rel, text in files.items():
        (tmp_path / rel).write_bytes(textwrap.dedent(text).encode("utf-8"))


def _fix(tmp_path, monkeypatch, capsys, *extra):
    from symshape.cli import main
    monkeypatch.chdir(str(tmp_path))
    code = main(["check", "-q", "--fix"] + list(extra) + ["."])
    return code, capsys.readouterr().out


def _snapshot(tmp_path):
    return {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}


MODELS = '''\
    """Annotated model code in one module, exported from another."""
    import numpy as np
    from jaxtyping import Float, Int


    def pairs(x: Float[np.ndarray, "n d"]) -> Float[np.ndarray, "n d"]:
        b, d = x.shape
        return x.reshape(b // 2, 2, d).sum(1)


    class Mixer:
        """Weights held by a callable object."""

        def __init__(self):
            self.w = np.ones((4, 4), np.float32)

        def __call__(self, x: Float[np.ndarray, "b 4"],   # keep this comment
                     y: "Float[np.ndarray, 'c   4']") -> Float[np.ndarray, "b 4"]:
            return x @ self.w + y


    def count(x: Float[np.ndarray, "n"]) -> Float[np.ndarray, "n"]:
        return (x > 0).astype(np.int64)


    def attend(q: Float[np.ndarray, "b m"], k: Float[np.ndarray, "b n"]
               ) -> Float[np.ndarray, "b"]:
        return (q * k).sum(-1)
    '''

EXPORTS = '''\
    import numpy as np
    import symshape as ss
    from models import Mixer, count, pairs

    f32 = np.float32
    ex_pairs = ss.exportable(example_inputs=lambda: (np.ones((4, 3), f32),))(pairs)
    ex_mix = ss.exportable(example_inputs=lambda: (np.ones((2, 4), f32),
                                                   np.ones((2, 4), f32)))(Mixer())
    ex_count = ss.exportable(example_inputs=lambda: (np.ones(3, f32),))(count)
    '''

PYPROJECT = '''\
    [[tool.symshape.exports]]
    function = "models:attend"
    example_inputs = [{ shape = [2, 3], dtype = "float32" }, { shape = [2, 3], dtype = "float32" }]
    '''


def test_fix_edits_the_def_wherever_the_annotated_function_is_defined(
        tmp_path, monkeypatch, capsys):
    # functions exported from another module, a callable object with a quoted annotation,
    # a TOML entry without dynamic_shapes, a dtype kind in the return annotation
    _project(tmp_path, {"models.py": MODELS, "exports.py": EXPORTS,
                        "pyproject.toml": PYPROJECT})
    code, out = _fix(tmp_path, monkeypatch, capsys)
    src = (tmp_path / "models.py").read_text()
    assert '''def __call__(self, x: Float[np.ndarray, "b 4"],   # keep this comment
                 y: "Float[np.ndarray, 'b   4']") -> Float[np.ndarray, "b 4"]:''' in src
    assert 'def count(x: Float[np.ndarray, "n"]) -> Int[np.ndarray, "n"]:' in src
    assert 'def attend(q: Float[np.ndarray, "b m"], k: Float[np.ndarray, "b m"]' in src
    # n = 2*_n needs _n >= 1, which no annotation can say: not applied, and why
    assert 'def pairs(x: Float[np.ndarray, "n d"])' in src
    assert "not applied (do it by hand): models:pairs: n = 2*_n  (n = 2*_n needs a new size " \
        "_n >= 1, and a name in a jaxtyping annotation is at least 2: write 2*k where the " \
        "annotations of pairs say n and declare dynamic_shapes=ss.from_annotations(pairs, " \
        "dims={'k': Dim('k', min=1)}) for this export)" in out
    assert "ok   models:Mixer.__call__" in out and "ok   models:count" in out
    assert "ok   models:attend" in out and code == 1
    # a second --fix has nothing left to change
    before = _snapshot(tmp_path)
    code, out = _fix(tmp_path, monkeypatch, capsys)
    assert _snapshot(tmp_path) == before
    assert "4 exports: 3 ok, 1 failed" in out and "not applied" in out


def test_fix_refuses_an_annotation_written_through_an_alias(tmp_path, monkeypatch, capsys):
    _project(tmp_path, {"a.py": '''\
        import numpy as np
        from jaxtyping import Float
        import symshape as ss

        Vec = Float[np.ndarray, "n"]


        @ss.exportable(example_inputs=lambda: (np.ones(3, np.float32), np.ones(3, np.float32)))
        def add(x: Float[np.ndarray, "m"], y: Vec) -> Vec:
            return x + y
        '''})
    before = _snapshot(tmp_path)
    code, out = _fix(tmp_path, monkeypatch, capsys)
    assert code == 1 and _snapshot(tmp_path) == before
    assert "not applied (do it by hand): a:add: n = m  (the annotation of y is not written in " \
        "the def of add (a type alias?)" in out


def test_fix_keeps_line_endings_and_unicode_names(tmp_path, monkeypatch, capsys):
    src = ('import numpy as np\r\nfrom jaxtyping import Float\r\nimport symshape as ss\r\n'
           '\r\n\r\n@ss.exportable(example_inputs=lambda: (np.ones((2, 3), np.float32), '
           'np.ones((2, 3), np.float32)))\r\n'
           'def mul(x: Float[np.ndarray, "größe n"],  # größe: the batch\r\n'
           '        y: Float[np.ndarray, "größe m"]):\r\n'
           '    return x * y\r\n')
    (tmp_path / "u.py").write_bytes(src.encode("utf-8"))
    code, out = _fix(tmp_path, monkeypatch, capsys)
    assert code == 0, out
    assert (tmp_path / "u.py").read_bytes() == src.replace(
        '"größe m"', '"größe n"').encode("utf-8")


def test_diff_shows_the_annotation_edit_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from symshape.cli import main
    _project(tmp_path, {"models.py": MODELS, "pyproject.toml": PYPROJECT})
    before = _snapshot(tmp_path)
    monkeypatch.chdir(str(tmp_path))
    main(["check", "-q", "--diff", "."])
    out = capsys.readouterr().out
    assert _snapshot(tmp_path) == before
    assert '-def attend(q: Float[np.ndarray, "b m"], k: Float[np.ndarray, "b n"]\n' in out
    assert '+def attend(q: Float[np.ndarray, "b m"], k: Float[np.ndarray, "b m"]\n' in out


@pytest.mark.parametrize("dim_str, name, new, want", [
    ("b n", "n", "m", "b m"),
    ("b   n", "n", "m", "b   m"),                 # spacing kept
    ("n+1 2*n n_2", "n", "m", "m+1 2*m n_2"),     # expressions; other names untouched
    ("n+1 2*n", "n", "2*k", "(2*k)+1 2*(2*k)"),
    ("#n *n _n ... rows=n", "n", "m", "#m *n _n ... rows=m"),
    ("#n", "n", "4", "#n"),                       # a broadcast axis takes a name only
    ("n n+1 2*n-1 max(n,2)", "n", "4", "4 5 7 4"),  # no name left: the size
])
def test_axis_rename_in_dimension_strings(dim_str, name, new, want):
    from symshape.cli.annotation_fixer import _rename_dim_str
    assert _rename_dim_str(dim_str, name, new) == want


@given(st.lists(st.sampled_from(["n", "m", "3", "n+1", "2*n", "_", "#n", "rows=n", "k"]),
                min_size=1, max_size=5), st.sampled_from(["m", "7", "2*m+1"]))
def test_renamed_dimension_strings_read_as_the_substituted_spec(elems, new):
    from symshape.cli.annotation_fixer import _rename_dim_str
    old = " ".join(elems)
    out = _rename_dim_str(old, "n", new)
    assert len(out.split()) == len(elems)
    for a, b in zip(parse_dim_str(old, "x"), parse_dim_str(out, "x")):
        if a.kind in ("name", "expr") and "n" in (a.names or (a.name,)):
            env = {"m": 5}      # "rows=n" is the size after the "="
            assert eval(b.text.rpartition("=")[2], {}, env) == \
                eval(a.text.rpartition("=")[2], {}, {"n": eval(new, {}, env)})
        else:
            assert a.kind == b.kind


DECLARED = '''\
    import numpy as np
    from jaxtyping import Float
    import symshape as ss


    def small(x: Float[np.ndarray, "n d"]) -> Float[np.ndarray, "n d"]:
        ss.check(x.shape[1] <= 16)
        return x


    def pairs(x: Float[np.ndarray, "n d"]) -> Float[np.ndarray, "n d"]:
        b, d = x.shape
        return x.reshape(b // 2, 2, d).reshape(b, d)


    def halve(x: Float[np.ndarray, "n d"]) -> Float[np.ndarray, "n d"]:
        b, d = x.shape
        return x.reshape(b // 2, 2, d).sum(1)      # the return annotation is wrong too


    f32 = np.float32
    ex_small = ss.exportable(example_inputs=lambda: (np.ones((3, 4), f32),),
                             dynamic_shapes=ss.from_annotations(small))(small)
    ex_pairs = ss.exportable(example_inputs=lambda: (np.ones((4, 3), f32),),
                             dynamic_shapes=ss.from_annotations(
                                 pairs, dims={"d": ss.Dim("d", max=64)}))(pairs)
    ex_halve = ss.exportable(example_inputs=lambda: (np.ones((4, 3), f32),),
                             dynamic_shapes=ss.from_annotations(halve))(halve)
    '''


def test_fix_writes_bounds_into_the_dims_of_a_declared_from_annotations(
        tmp_path, monkeypatch, capsys):
    _project(tmp_path, {"m.py": DECLARED})
    code, out = _fix(tmp_path, monkeypatch, capsys)
    src = (tmp_path / "m.py").read_text()
    assert 'dynamic_shapes=ss.from_annotations(small, dims={"d": ss.Dim("d", max=16)}))' in src
    # a divisibility: the relation in the annotations, the new root's bound in dims=
    assert 'def pairs(x: Float[np.ndarray, "2*_n d"]) -> Float[np.ndarray, "2*_n d"]:' in src
    assert 'pairs, dims={"d": ss.Dim("d", max=64), "_n": ss.Dim("_n", min=1)}))' in src
    assert "ok   m:pairs  _n in [1, int_oo] (x.shape[0] = 2*_n); d = x.shape[1] in [2, 64]" in out
    # the same fix for halve makes its return annotation fail: refused by the re-check,
    # and nothing of it is written
    assert 'def halve(x: Float[np.ndarray, "n d"]) -> Float[np.ndarray, "n d"]:' in src
    assert "dynamic_shapes=ss.from_annotations(halve))" in src
    assert "not applied (do it by hand): m:halve: n = 2*_n  (the re-check with this fix " \
        "applied still fails: the return annotation of halve" in out
    assert code == 1
    before = _snapshot(tmp_path)
    _fix(tmp_path, monkeypatch, capsys)
    assert _snapshot(tmp_path) == before


# --------------------------------------------------------------------------- return annotation
# sympy's spelling of sizes, which messages never use
_SYMPY = re.compile(r"\b(Min|Max|Mod|FloorDiv|floor|ceiling)\(")


def test_return_annotation_int_on_a_slice_says_what_it_returns():
    pytest.importorskip("jaxtyping")
    from jaxtyping import Float

    def f(x: Float[np.ndarray, "n 3"]) -> Float[np.ndarray, "4 3"]:
        return x[:4]
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(f, (np.ones((8, 3), np.float32),), dynamic_shapes=ss.from_annotations(f))
    text = str(e.value)
    assert "is not a size expression" not in text, text
    assert '"4 3"' in text                                   # what the user wrote
    assert "(min(4, n), 3)" in text and "n is x.shape[0]" in text   # what it returns
    assert not _SYMPY.search(text), text
    fix = e.value.suggested_fixes[0]
    assert '"min(4,n) 3"' in str(fix)
