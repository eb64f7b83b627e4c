"""`symshape check --fix` makes exactly the intended edit or none and says why: the Dim
binding an export's spec really uses (by scope), no statement merely mentioning the name,
comments and layout kept, and pyproject.toml edited as TOML.
"""
import textwrap

import pytest

from symshape.cli import main

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

HEAD = "import numpy as np\nimport symshape as ss\n"


def project(tmp_path, files):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def fix(tmp_path, capsys, monkeypatch, *paths):
    monkeypatch.chdir(str(tmp_path))
    code = main(["check", "-q", "--fix"] + list(paths or ["."]))
    out, _ = capsys.readouterr()
    return code, out


def text(tmp_path, rel):
    return (tmp_path / rel).read_text(encoding="utf-8")


def test_auto_fix_leaves_a_statement_that_reuses_the_name(tmp_path, capsys, monkeypatch):
    # n != 16 is no Dim's range: the fix is n = Dim.AUTO
    project(tmp_path, {"m.py": HEAD + '''
n = ss.Dim("n")
BUCKETS = [2 ** n for n in range(3, 8)] + [256]


@ss.exportable(example_inputs=(np.ones(8),), dynamic_shapes={"x": (n,)})
def f(x):
    if x.shape[0] == 16:
        return x * 2
    return x + 1
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    src = text(tmp_path, "m.py")
    assert "BUCKETS = [2 ** n for n in range(3, 8)] + [256]" in src
    assert "n = ss.Dim.AUTO" in src
    assert code == 0, out


def test_two_variables_holding_dims_of_one_name(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"m.py": HEAD + '''
batch_enc = ss.Dim("batch", max=128)
batch_dec = ss.Dim("batch", max=512)


@ss.exportable(example_inputs=(np.ones(4),), dynamic_shapes={"x": (batch_enc,)})
def enc(x):
    assert x.shape[0] <= 64
    return x


@ss.exportable(example_inputs=(np.ones(4),), dynamic_shapes={"x": (batch_dec,)})
def dec(x):
    return x
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    src = text(tmp_path, "m.py")
    assert 'batch_enc = ss.Dim("batch", max=64)' in src
    assert 'batch_dec = ss.Dim("batch", max=512)' in src
    assert code == 0, out


def test_function_local_dim_of_the_same_name_is_left_alone(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"m.py": HEAD + '''
tokens = ss.Dim("tokens")


def make_spec():
    tokens = ss.Dim("tokens", max=7)
    return {"x": (tokens,)}


@ss.exportable(example_inputs=(np.ones(4),), dynamic_shapes={"x": (tokens,)})
def f(x):
    assert x.shape[0] <= 100
    return x
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    src = text(tmp_path, "m.py")
    assert 'tokens = ss.Dim("tokens", max=100)' in src
    assert 'tokens = ss.Dim("tokens", max=7)' in src
    assert code == 0, out


def test_reusable_spec_is_fixed_where_it_is_written(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"m.py": HEAD + '''
n = ss.Dim("n")
encoder_export = ss.exportable(example_inputs=(np.ones(4),), dynamic_shapes={"x": (n,)})
decoder_export = ss.exportable(example_inputs=(np.ones(4),),
                               dynamic_shapes={"x": (ss.Dim("m"),)})


class Encoder:
    @encoder_export
    def forward(x):
        return x


class Decoder:
    @decoder_export
    def forward(x):
        assert x.shape[0] <= 32
        return x
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    src = text(tmp_path, "m.py")
    assert 'dynamic_shapes={"x": (ss.Dim("m", max=32),)})' in src
    assert 'encoder_export = ss.exportable(example_inputs=(np.ones(4),), ' \
           'dynamic_shapes={"x": (n,)})' in src
    assert code == 0, out


def test_relation_is_not_moved_past_a_use(tmp_path, capsys, monkeypatch):
    original = HEAD + '''
mask = ss.Dim("mask")
MASK_SPEC = (mask,)
tokens = ss.Dim("tokens")


@ss.exportable(example_inputs=(np.ones(4), np.ones(4)),
               dynamic_shapes={"x": (tokens,), "m": MASK_SPEC})
def f(x, m):
    return x + m
'''
    project(tmp_path, {"m.py": original})
    code, out = fix(tmp_path, capsys, monkeypatch)
    assert text(tmp_path, "m.py") == textwrap.dedent(original)
    assert code == 1 and "not applied (do it by hand): m:f: mask = tokens" in out
    assert "line 5 uses mask" in out


def test_relation_between_two_dims_on_one_line(tmp_path, capsys, monkeypatch):
    original = HEAD + '''
mask = ss.Dim("mask"); tokens = ss.Dim("tokens")


@ss.exportable(example_inputs=(np.ones(4), np.ones(4)),
               dynamic_shapes={"x": (tokens,), "m": (mask,)})
def f(x, m):
    return x + m
'''
    project(tmp_path, {"m.py": original})
    code, out = fix(tmp_path, capsys, monkeypatch)
    assert text(tmp_path, "m.py") == textwrap.dedent(original)
    assert code == 1 and "not applied" in out


def test_dim_in_a_class_body(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"m.py": HEAD + '''

class Model:
    n = ss.Dim("n")

    @ss.exportable(example_inputs=(np.ones(16),), dynamic_shapes={"x": (n,)})
    def fold(x):
        return x.reshape(4, -1)
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    src = text(tmp_path, "m.py")
    assert '    _n = ss.Dim("_n", min=1)\n    n = 4*_n\n' in src, src
    assert code == 0, out


def test_comments_inside_a_multiline_dim_call_survive(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"m.py": HEAD + '''
tokens = ss.Dim(
    "tokens",  # sequence length
    min=2,     # at least a pair
)


@ss.exportable(example_inputs=(np.ones(4),), dynamic_shapes={"x": (tokens,)})
def f(x):
    assert x.shape[0] <= 128
    return x
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    src = text(tmp_path, "m.py")
    assert "# sequence length" in src and "# at least a pair" in src
    assert "min=2, max=128" in src or "max=128" in src
    assert code == 0, out


def test_comments_inside_a_multiline_dims_call_survive(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"m.py": HEAD + '''
a, b = ss.dims(
    "a",  # rows
    "b",  # columns, equal to rows
)


@ss.exportable(example_inputs=(np.ones(4), np.ones(4)),
               dynamic_shapes={"x": (a,), "y": (b,)})
def f(x, y):
    return x + y
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    src = text(tmp_path, "m.py")
    assert "# rows" in src and "# columns, equal to rows" in src
    assert code == 0, out


def test_two_inline_dims_of_one_name_in_one_file(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"m.py": HEAD + '''

@ss.exportable(example_inputs=(np.ones(4),), dynamic_shapes={"x": (ss.Dim("tokens"),)})
def f(x):
    assert x.shape[0] <= 64
    return x


@ss.exportable(example_inputs=(np.ones(4),), dynamic_shapes={"x": (ss.Dim("tokens"),)})
def g(x):
    assert x.shape[0] <= 64
    return x
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    assert text(tmp_path, "m.py").count('ss.Dim("tokens", max=64)') == 2
    assert code == 0, out


def test_aliased_and_annotated_dims_are_found(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"m.py": '''import numpy as np
import symshape as ss
from symshape import Dim as D

tokens: ss.Dim = ss.Dim("tokens")
rows = D("rows")


@ss.exportable(example_inputs=(np.ones((4, 4)),), dynamic_shapes={"x": (rows, tokens)})
def f(x):
    assert x.shape[1] <= 64 and x.shape[0] <= 32
    return x
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    src = text(tmp_path, "m.py")
    assert 'tokens: ss.Dim = ss.Dim("tokens", max=64)' in src
    assert 'rows = D("rows", max=32)' in src
    assert code == 0, out


def test_shared_dim_gets_bounds_both_exports_accept_and_fix_is_idempotent(
        tmp_path, capsys, monkeypatch):
    project(tmp_path, {"m.py": HEAD + '''
n = ss.Dim("n")


@ss.exportable(example_inputs=(np.ones(4),), dynamic_shapes={"x": (n,)})
def f(x):
    assert x.shape[0] <= 64
    return x


@ss.exportable(example_inputs=(np.ones(4),), dynamic_shapes={"x": (n,)})
def g(x):
    assert x.shape[0] <= 32
    return x
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    src = text(tmp_path, "m.py")
    assert 'n = ss.Dim("n", max=32)' in src
    assert code == 0, out
    code, out = fix(tmp_path, capsys, monkeypatch)
    assert text(tmp_path, "m.py") == src and code == 0


TOML_MODELS = '''def f(x):
    assert x.shape[0] <= 64
    return x


def g(x):
    assert x.shape[0] <= 32
    return x
'''


@pytest.mark.parametrize("dims_form", [
    "[tool.symshape.dims]\nn = { max = 512 }\n",
    "[tool.symshape]\ndims.n = { max = 512 }\n",
    "[tool.symshape]\ndims = { n = { max = 512 } }\n",
    "[tool.symshape.dims.n]\nmax = 512\n",
])
def test_pyproject_bounds_in_any_form(dims_form, tmp_path, capsys, monkeypatch):
    project(tmp_path, {"models.py": TOML_MODELS, "pyproject.toml": dims_form + '''
[[tool.symshape.exports]]
function = "models:f"
example_inputs = [{ shape = [4] }]
dynamic_shapes = { x = ["n"] }

[[tool.symshape.exports]]
function = "models:g"
example_inputs = [{ shape = [4] }]
dynamic_shapes = { x = ["n"] }
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    doc = tomllib.loads(text(tmp_path, "pyproject.toml"))
    assert doc["tool"]["symshape"]["dims"]["n"] == {"max": 32}
    assert len(doc["tool"]["symshape"]["exports"]) == 2
    assert code == 0, out
    before = text(tmp_path, "pyproject.toml")
    code, out = fix(tmp_path, capsys, monkeypatch)
    assert code == 0 and text(tmp_path, "pyproject.toml") == before


def test_pyproject_non_ascii_dim_name(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"models.py": TOML_MODELS, "pyproject.toml": '''
[[tool.symshape.exports]]
function = "models:f"
example_inputs = [{ shape = [4] }]
dynamic_shapes = { x = ["länge"] }
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    doc = tomllib.loads(text(tmp_path, "pyproject.toml"))
    assert doc["tool"]["symshape"]["dims"]["länge"] == {"max": 64}
    assert code == 0, out


def test_one_export_is_fixed_while_another_is_refused(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"m.py": HEAD + '''
mask = ss.Dim("mask")
MASK_SPEC = (mask,)
tokens = ss.Dim("tokens")
n = ss.Dim("n")


@ss.exportable(example_inputs=(np.ones(4), np.ones(4)),
               dynamic_shapes={"x": (tokens,), "m": MASK_SPEC})
def f(x, m):
    return x + m


@ss.exportable(example_inputs=(np.ones(4),), dynamic_shapes={"x": (n,)})
def g(x):
    assert x.shape[0] <= 16
    return x
'''})
    code, out = fix(tmp_path, capsys, monkeypatch)
    src = text(tmp_path, "m.py")
    assert 'n = ss.Dim("n", max=16)' in src and 'mask = ss.Dim("mask")' in src
    assert "fixed m.py" in out and "not applied (do it by hand): m:f: mask = tokens" in out
    assert code == 1 and "ok   m:g" in out and "FAIL m:f" in out.split("re-checking")[1]


def test_a_class_name_shadowing_the_reference_is_refused(tmp_path, capsys, monkeypatch):
    original = HEAD + '''
tokens = ss.Dim("tokens")


class Model:
    tokens = 7
    mask = ss.Dim("mask")

    @ss.exportable(example_inputs=(np.ones(4), np.ones(4)),
                   dynamic_shapes={"x": (ss.Dim("tokens"),), "m": (mask,)})
    def f(x, m):
        return x + m
'''
    project(tmp_path, {"m.py": original})
    code, out = fix(tmp_path, capsys, monkeypatch)
    src = text(tmp_path, "m.py")
    # the spec's tokens is the inline Dim; "mask = tokens" in the class would read 7
    assert "mask = 7" not in src and "    mask = tokens\n" not in src
    assert code in (0, 1), out
