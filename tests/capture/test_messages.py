"""Messages name the user's variables and lines, never internal symbols or node names."""
import builtins
import re

import numpy as np
import pytest

import symshape as ss
import logging
import warnings

_INTERNAL = re.compile(r"\b(u\d+|s\d+|_v\d+|nonzero\(|greater\b|sum_\d+)")


def test_data_dependent_error_names_variables_and_lines():
    def f(x, y):
        m = x[x > 0]
        return m + y

    x = np.array([1.0, -1.0, 2.0, 3.0])
    y = np.ones(3)
    with pytest.raises(ss.GuardOnDataDependentError) as e:
        ss.export(f, (x, y))
    msg = str(e.value)
    assert "m.shape[0]" in msg and "m = x[x > 0]" in msg and __file__ in msg
    assert "ss.check(" in msg
    assert not _INTERNAL.search(msg.replace(__file__, "")), msg


def test_traced_array_repr_is_in_user_terms(capsys):
    # (printed, not appended to a list: export leaves the user's objects as they were)
    def f(x):
        t = x.sum(axis=1)
        print(repr(t))
        return t

    ss.export(f, (np.ones((4, 3)),), dynamic_shapes={"x": (ss.Dim.AUTO, None)})
    text = capsys.readouterr().out.strip()
    assert text.startswith("<traced float64 array of shape (x.shape[0],) from ")
    assert not _INTERNAL.search(text.replace(__file__, "")), text


def test_printed_program_names_no_helper():
    table = np.arange(12.0).reshape(4, 3)

    def f(x):
        return np.take(table, np.clip(x, 0, 3), axis=0) * np.float32(2)

    ep = ss.export(f, (np.array([0, 1, 2]),))
    text = str(ep)
    assert not re.search(r"\b_v\d+\b", text), text


def test_loop_over_rows_says_what_keeps_it_symbolic(caplog):
    def f(x):
        out = 0
        for row in x:
            out = out + row
            if out is None:        # a break: this loop stays a Python loop (issue 41)
                break
        return out

    with caplog.at_level("WARNING"):
        ep = ss.export(f, (np.ones((4, 3)),), dynamic_shapes={"x": (ss.Dim.AUTO, ss.Dim.AUTO)})
    text = caplog.text
    assert "for row in x:" in text and "x.shape[0]" in text and "ss.map" in text
    assert "its body breaks out of the loop" in text
    assert "np.zeros(shape)" not in text


def test_indexing_a_local_array_by_a_traced_one_names_the_array():
    def f(x):
        table = np.linspace(0.0, 1.0, 10)
        return table[x]

    with pytest.raises(ss.UserError) as e:
        ss.export(f, (np.array([1, 2, 3]),))
    msg = str(e.value)
    assert msg.startswith("`table` is a plain NumPy array indexed by a traced array")
    assert "np.asarray(table, like=" in msg and "return table[x]" in msg


def test_the_suggested_spelling_works():
    def f(x):
        table = np.linspace(0.0, 1.0, 10)
        return np.asarray(table, like=x)[x]

    ep = ss.export(f, (np.array([1, 2, 3]),), dynamic_shapes={"x": (ss.Dim.AUTO,)})
    np.testing.assert_array_equal(ep.module()(np.array([0, 9, 4, 4])),
                                  f(np.array([0, 9, 4, 4])))


def test_the_re_export_verifying_fixes_labels_its_log(caplog):
    def f(x):
        ss.check(x.shape[0] <= 16)
        return x * 2

    with caplog.at_level("DEBUG", logger="symshape.dynamic"):
        with pytest.raises(ss.ConstraintViolationError):
            ss.export(f, (np.ones(4),), dynamic_shapes={"x": (ss.Dim("n"),)})
    texts = [r.getMessage() for r in caplog.records]
    first = [t for t in texts if not t.startswith("[verifying fixes]")]
    again = [t for t in texts if t.startswith("[verifying fixes]")]
    assert any("create_symbol" in t for t in first)
    assert any("create_symbol" in t for t in again)        # labelled, never a silent repeat
    assert len([t for t in first if "create_symbol" in t]) == 1


def test_guards_read_in_python_notation(caplog):
    def f(x):
        return x.reshape(-1, 4).sum(0) + min(x.shape[0], 8)

    with caplog.at_level("INFO", logger="symshape.dynamic"):
        with pytest.raises(ss.ConstraintViolationError) as e:
            ss.export(f, (np.ones(8),), dynamic_shapes={"x": (ss.Dim("n"),)})
    assert "guard `n % 4 == 0`" in str(e.value) and "Mod(" not in str(e.value)
    assert any("guard added s0 % 4 == 0" in r.getMessage() for r in caplog.records)


def test_a_specialisation_warning_is_shown_once(caplog):
    def f(x):
        n = builtins.int(x.shape[0])        # Python's own int specialises (int() does not)
        ss.check(x.shape[1] <= 16)
        return x * n

    with caplog.at_level("WARNING", logger="symshape"):
        with pytest.raises(ss.ConstraintViolationError):
            ss.export(f, (np.ones((4, 8)),),
                      dynamic_shapes={"x": (ss.Dim.AUTO, ss.Dim("m"))})
    shown = [r for r in caplog.records if r.levelno >= 30 and "int() specialized" in r.getMessage()]
    assert len(shown) == 1, [r.getMessage() for r in shown]


A = ss.Dim.AUTO
X, Y = np.ones((4, 3)), np.ones((5, 3))
_SYMPY = re.compile(r"\b(Min|Max|Mod|FloorDiv|floor|ceiling)\(")


W = np.ones((3, 5), np.float32)


# programs that fail for the example shapes, each naming sizes in its message
FAILING = {
    "matmul": (lambda x, y: x @ y, "x.shape[1]"),
    "tensordot": (lambda x, y: np.tensordot(x, y, axes=([0], [0])), "x.shape[0]"),
    "einsum": (lambda x, y: np.einsum("ij,ij->i", x, y), "x.shape[0]"),
    "reshape": (lambda x, y: x.reshape(7, -1) + y.sum(), "x.shape[0]*x.shape[1]"),
    "split": (lambda x, y: np.split(x, 3, axis=0)[0] + y.sum(), "x.shape[0]"),
    "index": (lambda x, y: x[5] + y[0], "x.shape[0]"),
    "repeat": (lambda x, y: np.repeat(x, np.array([1, 2, 3, 4, 5]), axis=0) + y.sum(),
               "x.shape[0]"),
    "solve": (lambda x, y: np.linalg.solve(x[:, :3], y[:3]), "x.shape[0]"),
}


@pytest.mark.parametrize("name", sorted(FAILING))
def test_shape_errors_name_sizes_without_specializing(name, caplog):
    f, named = FAILING[name]
    with pytest.raises((ValueError, IndexError)):     # eager NumPy rejects these shapes too
        f(X.copy(), Y.copy())
    with caplog.at_level(logging.WARNING, logger="symshape"):
        with pytest.raises(ss.UserError) as e:
            ss.export(f, (X, Y), dynamic_shapes=[(A, A), (A, A)])
    assert named in str(e.value)
    assert "specialized" not in caplog.text, caplog.text


def test_jit_recompile_on_a_bad_shape_does_not_warn_about_str(caplog):
    def f(x):
        return x @ W

    jit = ss.compile(f)
    jit(np.ones((6, 3), np.float32))
    jit(np.ones((7, 3), np.float32))
    with caplog.at_level(logging.WARNING, logger="symshape"):
        with pytest.raises(ValueError):
            jit(np.ones((5, 4), np.float32))
    assert "str()" not in caplog.text, caplog.text


def test_break_inside_a_branch_names_no_placeholder():
    def model(x, y):
        def same(x, y):
            ss.check(x.shape[0] == y.shape[0])
            return x + y

        def other(x, y):
            return x - 1.0

        return ss.cond(x.sum() > 0, same, other, (x, y))

    jit = ss.compile(model)
    jit(np.ones((4, 3)), np.ones((4, 3)))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = jit(-np.ones((5, 3)), np.ones((6, 3)))
    np.testing.assert_array_equal(out, -np.ones((5, 3)) - 1.0)
    text = "\n".join(str(m.message) for m in w)
    assert "inside ?" not in text and "decorate ?" not in text, text
    assert "1 segments" not in text, text


def every_fourth_plus_one(x):
    ss.check(x.shape[0] % 4 == 1)
    ss.check(x.shape[0] <= 17)
    return x * 2


@pytest.mark.parametrize("runner", ["module", "compile"])
@pytest.mark.parametrize("rows, expected", [
    (6, "x.shape[0] = 6 is not of the form 4*k + 1 required by the program"),
    (21, "x.shape[0] = 21 is outside the range [5, 17]"),
    (1, "x.shape[0] = 1 is outside the range [5, 17]"),
])
def test_runtime_checks_on_a_solved_axis_name_no_internal_symbol(runner, rows, expected):
    ep = ss.export(every_fourth_plus_one, (np.ones((9, 3)),), dynamic_shapes={"x": (A, A)})
    run = ep.module() if runner == "module" else ep.compile()
    np.testing.assert_array_equal(run(np.ones((13, 3))), np.full((13, 3), 2.0))
    with pytest.raises(ss.UserError) as e:
        run(np.ones((rows, 3)))
    assert str(e.value) == expected


def scaled_or_summed(x, y=None, *, scale=1.0):
    return x * scale if y is None else x + y


@pytest.mark.parametrize("backend", ["numpy", "cupy"])
@pytest.mark.parametrize("args, kwargs, says", [
    ((), {}, "missing a required argument: 'x'"),
    ((np.ones(3),), {"sclae": 1.0}, "got an unexpected keyword argument 'sclae'"),
    ((np.ones(3), None, 3), {}, "too many positional arguments"),
])
def test_compiled_programs_refuse_calls_that_do_not_fit_the_signature(backend, args, kwargs,
                                                                      says):
    ep = ss.export(scaled_or_summed, (np.ones(3),), dynamic_shapes={"x": (A,)})
    if backend == "cupy":
        import shutil
        if shutil.which("g++") is None:
            pytest.skip("the CUDA emulator needs g++")
        from symshape.codegen.cuda import compile_cupy
        from symshape.codegen.cuda.emulate import emulate
        run = emulate(compile_cupy(ep))
    else:
        run = ep.compile()
    np.testing.assert_array_equal(run(np.ones(4)), np.ones(4))
    with pytest.raises(ss.UserError, match="scaled_or_summed.*do not fit its signature: " + says):
        run(*args, **kwargs)


def halves_of_positives(x):
    idx = np.nonzero(x > 0)[0]
    return x[idx].reshape(2, -1)


def test_data_dependent_advice_is_python_the_user_can_paste():
    with pytest.raises(ss.GuardOnDataDependentError) as e:
        ss.export(halves_of_positives, (np.arange(-3.0, 5.0),), dynamic_shapes={"x": (A,)})
    text = str(e.value)
    assert "ss.check(idx.shape[0] % 2 == 0)" in text and "Mod(" not in text, text

    def advised(x):
        idx = np.nonzero(x > 0)[0]
        ss.check(idx.shape[0] % 2 == 0)
        return x[idx].reshape(2, -1)

    ep = ss.export(advised, (np.arange(-3.0, 5.0),), dynamic_shapes={"x": (A,)})
    np.testing.assert_array_equal(ep.module()(np.arange(-1.0, 5.0)), advised(np.arange(-1.0, 5.0)))
    with pytest.raises(ss.UserError, match="ss.check failed at run time"):
        ep.module()(np.arange(-1.0, 4.0))      # three positives: the check refuses them


def _message(f, args, spec):
    with pytest.raises(ss.UserError) as e:
        ss.export(f, args, dynamic_shapes=spec)
    return str(e.value)


def test_broadcast_message_spells_min_as_python():
    text = _message(lambda x, y: x[:, :3] + y, (np.ones((4, 5)), np.ones((4, 2))),
                    {"x": (A, A), "y": (A, A)})
    assert "min(3, x.shape[1])" in text and not _SYMPY.search(text), text


def test_concatenate_message_spells_min_as_python():
    text = _message(lambda x, y: np.concatenate([x[:, :3], y], 0),
                    (np.ones((4, 5)), np.ones((2, 2))), {"x": (A, A), "y": (A, A)})
    assert "min(3, x.shape[1])" in text and not _SYMPY.search(text), text


def test_violation_message_spells_min_as_python():
    text = _message(lambda x, y: x[:, :3] + y, (np.ones((4, 5)), np.ones((4, 3))),
                    {"x": (A, A), "y": (A, ss.Dim("d"))})
    assert "d must equal min(3, x.shape[1])" in text and not _SYMPY.search(text), text
