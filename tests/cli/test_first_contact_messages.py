"""What a new user meets first, message by message: the cause named in the user's terms, a
fix that keeps what the user meant (verified by exporting again), one notation everywhere."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.cli import main


def write(folder, name, text):
    path = os.path.join(str(folder), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(textwrap.dedent(text).lstrip())
    return path


def run(argv, capsys, monkeypatch, cwd):
    monkeypatch.chdir(str(cwd))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- the static axis
def add(x, y):
    return x + y


def test_the_static_axis_is_named_as_the_cause_and_marked_first():
    n = Dim("n")
    spec = {"x": (n, None)}
    args = (np.ones((4, 3)), np.ones((4, 3)))
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(add, args, dynamic_shapes=spec)
    text = str(e.value)
    assert "y.shape[0] is static" in text and "is the cause" in text
    fixes = e.value.suggested_fixes
    assert str(fixes[0]) == "dynamic_shapes['y'][0] = n"
    for fix in fixes:                               # the fix works: export again with it
        spec = fix.apply(spec)
    ep = ss.export(add, args, dynamic_shapes=spec)
    assert ep.module()(np.ones((7, 3)), np.ones((7, 3))).shape == (7, 3)


def test_a_tuple_spec_gets_the_fix_by_position():
    n = Dim("n")
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(add, (np.ones(5), np.ones(5)), dynamic_shapes=((n,), None))
    assert [str(f) for f in e.value.suggested_fixes] == ["dynamic_shapes[1][0] = n"]


def test_an_axis_the_spec_makes_static_stays_static():
    n = Dim("n")
    with pytest.raises(ss.ConstraintViolationError) as e:
        ss.export(add, (np.ones(4), np.ones(4)), dynamic_shapes={"x": (n,), "y": (4,)})
    assert [str(f) for f in e.value.suggested_fixes] == ["n = 4"]


# --------------------------------------------------------------------------- batch size 1
def test_batch_one_says_min_1_is_allowed():
    batch = Dim("batch")
    ep = ss.export(lambda x: x * 2, (np.ones((4, 3)),), dynamic_shapes={"x": (batch, None)})
    with pytest.raises(ss.UserError) as e:
        ep.module()(np.ones((1, 3)))
    assert "x.shape[0] = 1 is outside the range [2, int_oo] of Dim 'batch'" in str(e.value)
    assert "Dim('batch', min=1) admits size 1" in str(e.value)
    with pytest.raises(ss.UserError, match=r"Dim\('batch', min=1\) admits size 1"):
        ss.export(lambda x: x * 2, (np.ones((1, 3)),), dynamic_shapes={"x": (batch, None)})
    one = ss.export(lambda x: x * 2, (np.ones((4, 3)),),
                    dynamic_shapes={"x": (Dim("batch", min=1), None)})
    assert one.module()(np.ones((1, 3))).shape == (1, 3)           # and it works


# --------------------------------------------------------------------------- pyproject lists
def test_shapes_written_as_lists_in_pyproject(tmp_path, capsys, monkeypatch):
    write(tmp_path, "zoo/__init__.py", "")
    write(tmp_path, "zoo/m.py", """
        def attn(q, k):
            return q @ k.transpose(0, 2, 1)
        """)
    write(tmp_path, "pyproject.toml", """
        [[tool.symshape.exports]]
        function = "zoo.m:attn"
        example_inputs = [[2, 16, 8], [2, 16, 8]]
        dynamic_shapes = { q = ["batch", 16, 8] }
        """)
    code, out, _ = run(["check", "-q", "."], capsys, monkeypatch, tmp_path)
    assert code != 0
    assert "example_inputs[0] is the list [2, 16, 8]" in out
    assert "{ shape = [2, 16, 8] }" in out


# --------------------------------------------------------------------------- notation
PAIRS = """
    import numpy as np
    import symshape as ss
    from symshape import Dim

    @ss.exportable(example_inputs=(np.ones((8, 3)),), dynamic_shapes={"x": (Dim("n"), None)})
    def pairs(x):
        y = x.reshape(-1, 2, 3)          # pairs of rows
        return y.sum(axis=1)

    @ss.exportable(example_inputs=(np.ones((8, 3)),), dynamic_shapes={"x": (Dim("m"), None)})
    def double(x):
        return x * 2
    """


def test_one_notation_for_ranges_guards_and_lines(tmp_path, capsys, monkeypatch):
    write(tmp_path, "m.py", PAIRS)
    code, out, _ = run(["check", "-q", "."], capsys, monkeypatch, tmp_path)
    assert "m = x.shape[0] in [2, int_oo]" in out and "inf]" not in out
    assert "y = x.reshape(-1, 2, 3))" in out and "# pairs of rows" not in out
    code, out, _ = run(["explain", "m:pairs"], capsys, monkeypatch, tmp_path)
    assert "s0 % 2 == 0  [guard]" in out and "Mod(" not in out
    assert "# pairs of rows" not in out


# --------------------------------------------------------------------------- the two explains
def test_the_two_explains_are_told_apart(tmp_path, capsys, monkeypatch):
    write(tmp_path, "m.py", PAIRS)
    code, out, _ = run(["export-log", "m:double"], capsys, monkeypatch, tmp_path)
    assert code == 0 and "Guards:" in out
    assert main(["--help"]) == 0
    assert "explain (export-log)" in capsys.readouterr().out


def test_ss_explain_gives_remedies_and_the_graphs_op_names():
    def f(x):
        y = x.T * 2
        if y.sum() > 0:
            y = y + 1
        return y

    ex = ss.explain(f, np.ones((3, 4)))
    assert "use ss.cond" in ex.remedies[0]
    assert "remedy: To compile it whole, use ss.cond" in str(ex)
    assert ex.ops_per_graph[0][0] == "transpose" and "permute_dims" not in str(ex.ops_per_graph)
    assert ex.graphs[0].core_ops[0] == "permute_dims"


# --------------------------------------------------------------------------- exit at import
def test_a_module_that_exits_0_at_import_is_an_error(tmp_path):
    write(tmp_path, "a.py", """
        import numpy as np
        import symshape as ss

        @ss.exportable(example_inputs=(np.ones(4),))
        def f(x):
            return x * 2
        """)
    write(tmp_path, "b.py", "import sys; sys.exit(0)\nfrom symshape import exportable\n")
    done = subprocess.run([sys.executable, "-m", "symshape", "check", "-q", "."],
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ERROR b" in done.stdout and "SystemExit: 0" in done.stdout
    assert "1 module failed to import" in done.stdout
