"""Dim / derived dims / dims() and ``spec.match``: the dynamic_shapes spec against the example
inputs.  Every malformed spec is a ``symshape.UserError`` naming the offending entry."""
import numpy as np
import pytest

import symshape as ss
from symshape import Dim, dims, int_oo
from symshape.specs.dims import DerivedDim, fix_line_dim
from symshape.algebra.ranges import ValueRange
from symshape.specs.matching import entry_text, match

d = Dim("d")
d2 = Dim("d2")


# --------------------------------------------------------------------------- Dim errors
DIM_ERRORS = [
    (lambda: Dim("1x"), "Dim name must be a Python identifier, got '1x'"),
    (lambda: Dim("a b"), "Dim name must be a Python identifier, got 'a b'"),
    (lambda: Dim("class"), "Dim name must be a Python identifier, got 'class'"),
    (lambda: Dim(3), "Dim name must be a Python identifier, got 3"),
    (lambda: Dim(""), "Dim name must be a Python identifier, got ''"),
    (lambda: Dim("x", min=5, max=3), "Dim('x'): min=5 is larger than max=3"),
    (lambda: Dim("x", min=-1), "Dim('x'): min=-1 is negative; sizes are >= 0"),
    (lambda: Dim("x", max=1), "Dim('x'): max=1 is below the default min 2; pass min=1 "
                              "explicitly if sizes that small are meant"),
    (lambda: Dim("x", max=0), "Dim('x'): max=0 is below the default min 2"),
    (lambda: Dim("x", min=1.5), "Dim('x'): min must be an int, got 1.5"),
    (lambda: Dim("x", max="3"), "Dim('x'): max must be an int, got '3'"),
    (lambda: Dim("x", min=True), "Dim('x'): min must be an int, got True"),
    (lambda: dims("a", "2b"), "Dim name must be a Python identifier, got '2b'"),
]


@pytest.mark.parametrize("build,message", DIM_ERRORS)
def test_dim_construction_errors(build, message):
    with pytest.raises(ss.UserError) as e:
        build()
    assert message in str(e.value)


DIM_OK = [
    (lambda: Dim("d"), "Dim('d')", ValueRange(2, int_oo)),
    (lambda: Dim("d", max=16), "Dim('d', max=16)", ValueRange(2, 16)),
    (lambda: Dim("d", min=2, max=16), "Dim('d', max=16)", ValueRange(2, 16)),   # default min
    (lambda: Dim("d", min=0), "Dim('d', min=0)", ValueRange(0, int_oo)),
    (lambda: Dim("d", min=1, max=1), "Dim('d', min=1, max=1)", ValueRange(1, 1)),
    (lambda: Dim("d", min=0, max=1), "Dim('d', min=0, max=1)", ValueRange(0, 1)),
    (lambda: Dim("d", min=4, max=18), "Dim('d', min=4, max=18)", ValueRange(4, 18)),
    (lambda: Dim("d", min=3), "Dim('d', min=3)", ValueRange(3, int_oo)),
    (lambda: Dim("d", max=int_oo), "Dim('d')", ValueRange(2, int_oo)),
]


@pytest.mark.parametrize("build,text,vr", DIM_OK)
def test_dim_repr_fix_line_and_range(build, text, vr):
    dim = build()
    assert repr(dim) == text and fix_line_dim(dim) == text
    assert dim.range == vr


def test_dim_markers_and_identity():
    assert (repr(Dim.AUTO), repr(Dim.DYNAMIC), repr(Dim.STATIC)) == (
        "Dim.AUTO", "Dim.DYNAMIC", "Dim.STATIC")
    assert Dim("d") == Dim("d") and hash(Dim("d")) == hash(Dim("d", max=4))
    assert Dim("d") != Dim("d", max=3) and Dim("d") != Dim("e")


def test_dims():
    a, b = dims("a", "b", max=8)
    assert (repr(a), repr(b)) == ("Dim('a', max=8)", "Dim('b', max=8)")
    assert dims() == ()
    assert dims("n", min=0)[0].range == ValueRange(0, int_oo)


# --------------------------------------------------------------------------- derived dims
DERIVED = [
    (lambda: 2 * d + 1, "2*d + 1", 2, 1),
    (lambda: d * 2 + 1, "2*d + 1", 2, 1),
    (lambda: d + 1, "d + 1", 1, 1),
    (lambda: 1 + d, "d + 1", 1, 1),
    (lambda: d - 3, "d - 3", 1, -3),
    (lambda: 5 - d, "5 - d", -1, 5),
    (lambda: 2 * (d + 1), "2*d + 2", 2, 2),
    (lambda: (d + 1) * 2, "2*d + 2", 2, 2),
    (lambda: 3 * (2 * d + 1) - 1, "6*d + 2", 6, 2),
    (lambda: 5 - (5 - d), "d", 1, 0),
    (lambda: 4 * d, "4*d", 4, 0),
]


@pytest.mark.parametrize("build,text,coeff,offset", DERIVED)
def test_derived_dims(build, text, coeff, offset):
    dd = build()
    assert isinstance(dd, DerivedDim) and dd.root is d
    assert (repr(dd), dd.name, dd.coeff, dd.offset) == (text, text, coeff, offset)


def test_derived_dim_value_and_solve():
    dd = 2 * d + 1
    assert dd.value(5) == 11 and dd.solve(11) == 5 and dd.solve(10) is None
    assert (5 - d).solve(3) == 2
    assert 2 * d + 1 == d * 2 + 1 and hash(2 * d + 1) == hash(1 + 2 * d)
    assert 2 * d + 1 != 2 * d2 + 1


DERIVED_ERRORS = [
    (lambda: d * d, "derived dim d * Dim('d'): only int coefficients make a linear derived dim"),
    (lambda: d * 1.5, "derived dim d * 1.5: only int coefficients make a linear derived dim"),
    (lambda: d * True, "derived dim d * True: only int coefficients"),
    (lambda: -2 * d, "derived dim d * -2: the coefficient must be a positive int"),
    (lambda: d * 0, "derived dim d * 0: the coefficient must be a positive int"),
    (lambda: d + d2, "derived dim d + Dim('d2'): only an int offset makes a linear derived dim; "
                     "Dims cannot be added to each other"),
    (lambda: d - d2, "derived dim d - Dim('d2'): only an int offset makes a linear derived dim"),
    (lambda: 2 * d + d, "Dims cannot be added to each other"),
    (lambda: d + 1.0, "derived dim d + 1.0: only an int offset"),
    (lambda: (5 - d) * 2, "derived dim from 'd': the coefficient must be a positive int "
                          "(or the form B - d), got -2"),
    (lambda: 1 - 2 * d, "the coefficient must be a positive int (or the form B - d), got -2"),
    (lambda: (d + 1) * (d + 1), "only int coefficients make a linear derived dim"),
]


@pytest.mark.parametrize("build,message", DERIVED_ERRORS)
def test_derived_dim_errors(build, message):
    with pytest.raises(ss.UserError) as e:
        build()
    assert message in str(e.value)


# --------------------------------------------------------------------------- spec.match
X = np.zeros((6, 4), np.float32)
Y = np.zeros(5, np.float32)
BATCH = [np.zeros((3, 2), np.float32), np.zeros(4, np.float32)]
FEATS = {"a": np.zeros((2, 3, 4), np.float32), "b": np.zeros(3, np.float32)}
XY = {"x": X, "y": Y}

MATCH_ERRORS = [
    # top level
    (XY, {"z": None}, ["dynamic_shapes has key 'z', which is not a parameter of the function; "
                       "its parameters are ['x', 'y']"]),
    (XY, ((None, None),), ["dynamic_shapes is a tuple of 1 entries, but the function takes 2 "
                           "inputs ['x', 'y']"]),
    (XY, 5, ["dynamic_shapes must be None, a dict keyed by parameter name, or a tuple with one "
             "entry per input; got int"]),
    # rank
    (XY, ((None,), None), ["dynamic_shapes[0]: expected 2 entries, one per axis of x "
                           "(shape (6, 4)), got 1"]),
    (XY, {"x": (None, None, None)}, ["dynamic_shapes['x']: expected 2 entries, one per axis of "
                                     "x (shape (6, 4)), got 3"]),
    (XY, {"x": 5}, ["dynamic_shapes['x']: the spec of array input x must be None, a dict "
                    "{axis: dim} or a tuple of 2 entries, got 5"]),
    # axis keys
    (XY, {"x": {2: d}}, ["dynamic_shapes['x']: axis key 2 is not an axis of x, which has 2 dims "
                         "(shape (6, 4))"]),
    (XY, {"x": {-3: d}}, ["dynamic_shapes['x']: axis key -3 is not an axis of x"]),
    (XY, {"x": {"0": d}}, ["dynamic_shapes['x']: axis key '0' is not an axis of x"]),
    # per-axis values
    (XY, {"x": (7, None)}, ["dynamic_shapes['x'][0] (for x.shape[0]) is the static size 7, but "
                            "the example input has size 6"]),
    (XY, {"x": (None, 5)}, ["dynamic_shapes['x'][1] (for x.shape[1]) is the static size 5, but "
                            "the example input has size 4"]),
    (XY, {"y": {0: 4}}, ["dynamic_shapes['y'][0] (for y.shape[0]) is the static size 4, but the "
                         "example input has size 5"]),
    (XY, {"x": ("batch", None)}, ["dynamic_shapes['x'][0] (for x.shape[0]) is the string "
                                  "'batch'; use Dim('batch') for a named dimension"]),
    (XY, {"x": (True, None)}, ["dynamic_shapes['x'][0] (for x.shape[0]): expected a Dim, an int "
                               "or None, got True"]),
    (XY, {"x": (1.5, None)}, ["dynamic_shapes['x'][0] (for x.shape[0]): expected a Dim, a "
                              "derived dim, Dim.AUTO / Dim.DYNAMIC / Dim.STATIC, an int or "
                              "None; got 1.5"]),
    # Dim bounds and derived dims against the example
    (XY, {"x": (Dim("dm", min=8, max=16), None)},
     ["x.shape[0] (dynamic_shapes['x'][0]) has example size 6, outside the range [8, 16] of "
      "Dim('dm', min=8, max=16); change the example or the bounds"]),
    (XY, {"y": (Dim("dm", max=4),)},
     ["y.shape[0] (dynamic_shapes['y'][0]) has example size 5, outside the range [2, 4] of Dim('dm', max=4)"]),
    (XY, {"x": (2 * d + 1, None)}, ["x.shape[0] (dynamic_shapes['x'][0]) has example size 6, which is not of the form "
                                    "2*d + 1 for any integer d"]),
    (XY, {"x": (d, 3 * d)}, ["x.shape[1] (dynamic_shapes['x'][1]) has example size 4, which is not of the form 3*d for "
                             "any integer d"]),
    (XY, {"x": (5 - d, None)}, ["x.shape[0] (dynamic_shapes['x'][0]) has example size 6 = 5 - d with d = -1, outside the "
                                "range [2, int_oo] of Dim('d')"]),
    (XY, {"x": (Dim("w", min=3, max=4) + 1, None)},
     ["x.shape[0] (dynamic_shapes['x'][0]) has example size 6 = w + 1 with w = 5, outside the range [3, 4] of "
      "Dim('w', min=3, max=4)"]),
    # nested inputs
    ({"batch": BATCH}, {"batch": [(None, 7), None]},
     ["dynamic_shapes['batch'][0][1] (for batch[0].shape[1]) is the static size 7, but the "
      "example input has size 2"]),
    ({"batch": BATCH}, {"batch": [None]},
     ["dynamic_shapes['batch']: expected None or a list/tuple of 2 entries for input batch "
      "(a list of 2 items), got [None]"]),
    ({"batch": BATCH}, {"batch": [("n", None), None]},
     ["dynamic_shapes['batch'][0][0] (for batch[0].shape[0]) is the string 'n'"]),
    ({"batch": BATCH}, {"batch": [(None, None, None), None]},
     ["dynamic_shapes['batch'][0]: expected 2 entries, one per axis of batch[0] (shape (3, 2)), "
      "got 3"]),
    ({"batch": BATCH}, [[None, (None, None)]],
     ["dynamic_shapes[0][1]: expected 1 entries, one per axis of batch[1] (shape (4,)), got 2"]),
    ({"feats": FEATS}, {"feats": {"a": (None, None, 9)}},
     ["dynamic_shapes['feats']['a'][2] (for feats['a'].shape[2]) is the static size 9, but the "
      "example input has size 4"]),
    ({"feats": FEATS}, {"feats": {"c": None}},
     ["dynamic_shapes['feats']: expected None or a dict with keys from ['a', 'b'] for input "
      "feats, got {'c': None}"]),
    ({"feats": FEATS}, {"feats": [None, None]},
     ["dynamic_shapes['feats']: expected None or a dict with keys from ['a', 'b']"]),
    ({"feats": FEATS}, {"feats": {"a": {5: Dim.AUTO}}},
     ["dynamic_shapes['feats']['a']: axis key 5 is not an axis of feats['a'], which has 3 dims "
      "(shape (2, 3, 4))"]),
    ({"feats": FEATS}, {"feats": {"b": ("x",)}},
     ["dynamic_shapes['feats']['b'][0] (for feats['b'].shape[0]) is the string 'x'"]),
    # non-array leaves
    ({"n": 5}, {"n": (None,)}, ["dynamic_shapes['n']: input n is of type int, which is specialized to "
                                "its value; its spec must be None"]),
    ({"n": 1.5}, {"n": Dim.AUTO}, ["dynamic_shapes['n']: input n is of type float, which is "
                                   "specialized to its value; its spec must be None, got "
                                   "Dim.AUTO"]),
    ({"x": object()}, None, ["input x is of type object; export takes NumPy arrays, Python scalars,"
                             " random generators and lists / tuples / dicts of them"]),
]


@pytest.mark.parametrize("inputs,spec,substrings", MATCH_ERRORS)
def test_match_errors_name_the_entry(inputs, spec, substrings):
    with pytest.raises(ss.UserError) as e:
        match(inputs, spec)
    for s in substrings:
        assert s in str(e.value)



@pytest.mark.parametrize("spec", [
    {"x": (Dim("dm", min=8, max=16), None)},
    {"x": (2 * d + 1, None)},
    {"x": (5 - d, None)},
])
def test_dim_mismatch_errors_name_the_spec_entry(spec):
    with pytest.raises(ss.UserError) as e:
        match(XY, spec)
    assert "dynamic_shapes['x'][0]" in str(e.value)


def _kinds(leaves):
    return {l.path: None if l.axes is None else [(ax.kind, ax.value) for ax in l.axes]
            for l in leaves}


MATCH_OK = [
    (XY, None, {"x": [("static", 6), ("static", 4)], "y": [("static", 5)]}),
    (XY, {"x": (Dim.AUTO, Dim.STATIC)}, {"x": [("auto", 6), ("static", 4)],
                                         "y": [("static", 5)]}),
    (XY, ((Dim.DYNAMIC, 4), None), {"x": [("dynamic", 6), ("static", 4)],
                                    "y": [("static", 5)]}),
    (XY, {"x": {-1: d}}, {"x": [("static", 6), ("named", 4)], "y": [("static", 5)]}),
    (XY, {"x": [d, None], "y": (d - 1,)}, {"x": [("named", 6), ("static", 4)],
                                           "y": [("derived", 5)]}),
    ({"batch": BATCH}, {"batch": [{0: d}, None]},
     {"batch[0]": [("named", 3), ("static", 2)], "batch[1]": [("static", 4)]}),
    ({"feats": FEATS}, {"feats": {"a": (None, d, None)}},
     {"feats['a']": [("static", 2), ("named", 3), ("static", 4)], "feats['b']": [("static", 3)]}),
    ({"x": X, "n": 3, "flag": True}, {"x": None, "n": None, "flag": None},
     {"x": [("static", 6), ("static", 4)], "n": None, "flag": None}),
]


@pytest.mark.parametrize("inputs,spec,expected", MATCH_OK)
def test_match_accepts(inputs, spec, expected):
    assert _kinds(match(inputs, spec)) == expected


def test_match_records_entries_and_dims():
    leaves = match({"batch": BATCH}, {"batch": [(d, None), None]})
    ax = leaves[0].axes[0]
    assert ax.dim is d and ax.entry == ("batch", 0, 0)
    assert entry_text(ax.entry) == "dynamic_shapes['batch'][0][0]"
    assert leaves[0].axes[1].entry == ("batch", 0, 1)
    assert leaves[1].axes[0].entry is None
    assert leaves[0].axis_name(1) == "batch[0].shape[1]"
    assert [l.arg_index for l in leaves] == [0, 0]


def test_export_reports_spec_errors():
    def f(x, y):
        return x + y

    with pytest.raises(ss.UserError, match=r"dynamic_shapes\['y'\]: expected 2 entries"):
        ss.export(f, (X, X), dynamic_shapes={"x": (Dim.AUTO, None), "y": (Dim.AUTO,)})
    with pytest.raises(ss.UserError, match=r"x\.shape\[0\] \(dynamic_shapes\['x'\]\[0\]\) has example size 6, outside the range "
                                           r"\[8, 16\]"):
        ss.export(f, (X, X), dynamic_shapes={"x": (Dim("dm", min=8, max=16), None),
                                             "y": None})
