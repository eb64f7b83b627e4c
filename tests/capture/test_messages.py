"""Messages name the user's variables and lines, never internal symbols or node names."""
import builtins
import re

import numpy as np
import pytest

import symshape as ss

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
        return out

    with caplog.at_level("WARNING"):
        ep = ss.export(f, (np.ones((4, 3)),), dynamic_shapes={"x": (ss.Dim.AUTO, ss.Dim.AUTO)})
    text = caplog.text
    assert "for row in x:" in text and "x.shape[0]" in text and "ss.map" in text
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
