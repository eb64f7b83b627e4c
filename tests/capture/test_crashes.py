"""Inputs a user can get wrong end in a UserError that says what and where, never in a
TypeError, KeyError or RecursionError from inside symshape."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim

A = Dim.AUTO


def test_size_as_an_array_operand():
    ep = ss.export(lambda x: x * np.array(x.shape[0]), (np.ones((4, 3)),),
                   dynamic_shapes={"x": (A, None)})
    np.testing.assert_array_equal(ep.module()(np.ones((5, 3))), np.full((5, 3), 5.0))


def test_dicts_with_int_keys_and_odd_string_keys():
    ep = ss.export(lambda d: d[1] * 2, ({1: np.ones(3)},))
    np.testing.assert_array_equal(ep.module()({1: np.ones(3)}), np.full(3, 2.0))
    with pytest.raises(ss.UserError, match=r"input d: expected a dict with keys \[1\]"):
        ep.module()([np.ones(3), np.ones(3)])
    ep = ss.export(lambda d: d["a]"] * 2, ({"a]": np.ones(3)},))
    np.testing.assert_array_equal(ep.module()({"a]": np.ones(3)}), np.full(3, 2.0))
    with pytest.raises(ss.UserError, match=r"expected a dict with keys \['a\]'\]"):
        ep.module()({"b": np.ones(3)})


def test_deeply_nested_inputs_are_refused_clearly():
    deep = np.ones(2)
    for _ in range(500):
        deep = [deep]

    def dig(v):
        while isinstance(v, list):
            v = v[0]
        return v * 2
    with pytest.raises(ss.UserError, match="nested more than 100 deep"):
        ss.export(dig, (deep,))


def test_round_of_an_item_and_split_by_a_size_and_list_shapes():
    x = np.linspace(0, 1, 12).reshape(4, 3)
    ep = ss.export(lambda x: x * round(x.mean().item(), 2), (x,))
    np.testing.assert_array_equal(ep.module()(x), x * round(x.mean().item(), 2))
    ep = ss.export(lambda x, y: np.split(x, y.shape[0]), (np.arange(6.0), np.ones(3)),
                   dynamic_shapes={"x": (A,), "y": (A,)})
    assert len(ep.module()(np.arange(9.0), np.ones(3))) == 3
    ep = ss.export(lambda x: np.broadcast_to(x, [3, 4]), (np.ones(4),))
    assert ep.module()(np.ones(4)).shape == (3, 4)


def test_module_called_with_the_wrong_arguments():
    ep = ss.export(lambda x, y: x + y, (np.ones(3), np.ones(3)))
    m = ep.module()
    with pytest.raises(ss.UserError, match="missing a required argument: 'y'"):
        m(np.ones(3))
    with pytest.raises(ss.UserError, match="too many positional arguments"):
        m(np.ones(3), np.ones(3), np.ones(3))
    with pytest.raises(ss.UserError, match=r"\(x, y\)"):
        m(np.ones(3), z=np.ones(3))


def test_export_arguments_and_dim_arithmetic():
    with pytest.raises(ss.UserError, match="kwargs must be a dict"):
        ss.export(lambda x: x, (np.ones(3),), "kw")
    for op in ("//", "%", "**", "/"):
        with pytest.raises(ss.UserError, match="not a derived dim"):
            eval("Dim('a') %s 2" % op)
