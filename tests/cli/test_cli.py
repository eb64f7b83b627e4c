"""`symshape check` / `symshape explain`, `@ss.exportable`, `[tool.symshape]`, `--fix` / `--diff`.

Most tests call ``symshape.cli.main(argv)`` in-process with the working directory set, so
that paths print relative to it; one runs ``python -m symshape`` in a subprocess.  Tests that
rewrite files copy a fixture (``tests/cli_fixtures/``, ``examples/zoo``) to ``tmp_path``.
"""
from repo_paths import REPO
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import symshape as ss
from symshape.cli import project
from symshape.cli import main
from symshape.cli.exportable import registered

FIX = os.path.join(REPO, "tests", "cli_fixtures")
ZOO = os.path.join(REPO, "examples", "zoo")


def run(argv, capsys, monkeypatch, cwd=REPO):
    monkeypatch.chdir(cwd)
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def copy(src, tmp_path, name=None):
    dst = os.path.join(str(tmp_path), name or os.path.basename(src))
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def readme_zoo_block():
    # the main job's output is shown on the CI page of the docs (the README links there)
    text = read(os.path.join(REPO, "docs", "ci.md"))
    m = re.search(r"```console\n\$ symshape check examples/zoo\n(.*?)\$ echo \$\?\n(\d)\n```",
                  text, re.S)
    assert m, "docs/ci.md shows the main job's output"
    return m.group(1), int(m.group(2))


# --------------------------------------------------------------------------- the zoo
def test_readme_first_command_is_the_main_job():
    first = read(os.path.join(REPO, "README.md")).split("```bash\n", 1)[1].splitlines()[0]
    assert first.startswith("pip install . && symshape check examples/zoo")


def test_zoo_text_matches_readme_and_is_deterministic(capsys, monkeypatch):
    code, out, err = run(["check", "examples/zoo"], capsys, monkeypatch)
    expected, expected_code = readme_zoo_block()
    assert code == expected_code == 1
    assert out == expected
    assert "checking zoo.attn:block ..." in out and "checking zoo.head:classify ..." in out
    assert "FAIL zoo.attn:block  (examples/zoo/zoo/attn.py:20)" in out
    assert "    tokens = Dim('tokens', max=128)\n    mask_tokens = tokens\n" in out
    assert "ok   zoo.head:classify  batch = feats.shape[0] in [2, 128]" in out
    assert out.splitlines()[-2] == "4 exports: 3 ok, 1 failed, 0 errors"
    assert REPO not in out
    # sorted by file then line, same output twice
    names = re.findall(r"^(?:ok  |FAIL) (\S+)", out, re.M)
    assert names == ["zoo.head:classify", "zoo.attn:block", "zoo.mixer:mix", "zoo.pool:pool"]
    code2, out2, _ = run(["check", "examples/zoo"], capsys, monkeypatch)
    assert (code2, out2) == (code, out)


def test_zoo_json(capsys, monkeypatch):
    code, out, err = run(["check", "--format", "json", "examples/zoo"], capsys, monkeypatch)
    assert code == 1
    doc = json.loads(out)                       # progress lines went to stderr
    assert "checking zoo.attn:block ..." in err
    by = {e["name"]: e for e in doc["exports"]}
    assert [e["name"] for e in doc["exports"]] == ["zoo.head:classify", "zoo.attn:block",
                                                   "zoo.mixer:mix", "zoo.pool:pool"]
    attn = by["zoo.attn:block"]
    assert attn["status"] == "fail" and attn["file"] == "examples/zoo/zoo/attn.py"
    assert attn["line"] == 20
    assert attn["fixes"] == ["tokens = Dim('tokens', max=128)", "mask_tokens = tokens"]
    assert len(attn["violations"]) == 2 and "mask_tokens must equal tokens" in \
        attn["violations"][1]
    head = by["zoo.head:classify"]
    assert head["status"] == "ok" and head["file"] == "examples/zoo/pyproject.toml"
    assert head["range_constraints"] == {"batch": "[2, 128]"}
    assert head["axes"] == {"batch": ["feats.shape[0]"]}
    assert head["input_shapes"] == {"feats": ["s0", "4", "8"]}
    assert by["zoo.pool:pool"]["range_constraints"] == {
        "x.shape[0]": "[2, int_oo]", "blocks": "[2, 256]", "4*blocks": "[8, 1024]"}
    assert doc["summary"] == {"exports": 4, "ok": 3, "failed": 1, "errors": 0,
                              "import_errors": 0, "exit_code": 1}


def test_zoo_github(capsys, monkeypatch):
    code, out, err = run(["check", "--format", "github", "examples/zoo"], capsys, monkeypatch)
    assert code == 1
    lines = out.splitlines()
    errors = [l for l in lines if l.startswith("::error")]
    assert len(errors) == 1
    e = errors[0]
    assert e.startswith("::error file=examples/zoo/zoo/attn.py,line=20,title=symshape::"
                        "zoo.attn:block: the dynamic_shapes spec is violated%0A")
    assert "%0ASuggested fixes:%0A  tokens = Dim('tokens', max=128)%0A  mask_tokens = tokens" \
        in e
    assert "ok   zoo.head:classify  batch = feats.shape[0] in [2, 128]" in lines
    assert lines[-1] == "4 exports: 3 ok, 1 failed, 0 errors"
    assert "checking" not in out and "checking zoo.pool:pool ..." in err


def test_python_dash_m_subprocess():
    p = subprocess.run([sys.executable, "-m", "symshape", "check", "-q", "examples/zoo"],
                       cwd=REPO, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    assert "FAIL zoo.attn:block" in p.stdout and "checking" not in p.stdout
    assert p.stdout.splitlines()[-2] == "4 exports: 3 ok, 1 failed, 0 errors"


# --------------------------------------------------------------------------- exit codes
def test_all_pass_exits_0(capsys, monkeypatch):
    code, out, err = run(["check", "tests/cli_fixtures/ok_pkg"], capsys, monkeypatch)
    assert code == 0, out
    assert "ok   models:project  n = x.shape[0] in [2, 1024]" in out
    assert "ok   models:add  x.shape[0] = y.shape[0] in [2, int_oo]; x.shape[1] = y.shape[1] in [2, int_oo]" in out
    assert out.splitlines()[-1] == "2 exports: 2 ok, 0 failed, 0 errors"


def test_broken_user_modules_are_errors_not_crashes(capsys, monkeypatch):
    code, out, err = run(["check", "tests/cli_fixtures/broken_import"], capsys, monkeypatch)
    assert code == 2
    assert "Traceback" not in out + err
    base = "tests/cli_fixtures/broken_import/"
    assert ("ERROR bad_import  (%sbad_import.py:5)\n  import of bad_import failed:\n"
            "    %sbad_import.py:5 in <module>: import symshape_missing_dependency_xyz"
            % (base, base)) in out
    assert "    ModuleNotFoundError: No module named 'symshape_missing_dependency_xyz'" in out
    assert "%sbad_syntax.py:5: def f(x)\n    SyntaxError: expected ':'" % base in out
    assert "%sraises.py:8 in <module>: WEIGHTS = load_weights()" % base in out
    assert "%sraises.py:5 in load_weights: raise RuntimeError" % base in out
    assert "    RuntimeError: weights.npz not found" in out
    assert "ok   good:double" in out                     # the other modules still run
    assert out.splitlines()[-1] == \
        "1 exports: 1 ok, 0 failed, 0 errors; 3 modules failed to import"
    code, out, err = run(["check", "--format", "json", "tests/cli_fixtures/broken_import"],
                         capsys, monkeypatch)
    doc = json.loads(out)
    imports = [e for e in doc["exports"] if e["kind"] == "import"]
    assert [e["name"] for e in imports] == ["bad_import", "bad_syntax", "raises"]
    assert all(e["status"] == "error" and e["error"] for e in imports)
    code, out, err = run(["check", "--format", "github", "tests/cli_fixtures/broken_import"],
                         capsys, monkeypatch)
    assert code == 2
    assert "::error file=%sbad_import.py,line=5,title=symshape::bad_import: error%%0A" % base \
        in out


def test_model_bug_is_error_and_user_error_is_failure(capsys, monkeypatch):
    code, out, err = run(["check", "tests/cli_fixtures/crash"], capsys, monkeypatch)
    assert code == 2
    assert "ERROR model:buggy  (tests/cli_fixtures/crash/model.py:6)" in out
    assert "tests/cli_fixtures/crash/model.py:8 in buggy: return x @ undefined_weights" in out
    assert "NameError: name 'undefined_weights' is not defined" in out
    assert "FAIL model:value_branch" in out and "ss.cond" in out
    assert out.splitlines()[-1] == "2 exports: 0 ok, 1 failed, 1 errors"


@pytest.mark.parametrize("argv", [
    [],
    ["check", "no/such/dir"],
    ["check", "--format", "xml", "examples/zoo"],
    ["check", "--fix", "--diff", "examples/zoo"],
    ["frobnicate"],
    ["explain", "no_colon"],
    ["explain", "symshape_no_such_module_xyz:f"],
    ["explain", "examples/zoo/zoo/head.py:not_there"],
])
def test_usage_errors_exit_2(argv, capsys, monkeypatch):
    code, out, err = run(argv, capsys, monkeypatch)
    assert code == 2
    assert "Traceback" not in out + err
    assert err


def test_specialization_warnings_are_reported(tmp_path, capsys, monkeypatch):
    (tmp_path / "w.py").write_text(textwrap.dedent('''\
        import builtins
        import numpy as np
        import symshape as ss


        @ss.exportable(example_inputs=(np.ones((4, 3)),),
                       dynamic_shapes={"x": (ss.Dim.AUTO, None)})
        def f(x):
            n = builtins.int(x.shape[0])   # Python's own int pins the size
            return x[:n]
        '''))
    code, out, err = run(["check", "-q"], capsys, monkeypatch, cwd=str(tmp_path))
    assert code == 0
    assert "ok   w:f  all sizes static\n  warning: int() specialized x.shape[0] to 4 at w.py:9: " in out
    code, out, err = run(["check", "--format", "github"], capsys, monkeypatch,
                         cwd=str(tmp_path))
    assert "::warning file=w.py,line=6,title=symshape::w:f: int() specialized" in out


def test_user_prints_do_not_break_json(tmp_path, capsys, monkeypatch):
    (tmp_path / "noisy.py").write_text(textwrap.dedent('''\
        import numpy as np
        import symshape as ss

        print("loading noisy model")


        @ss.exportable(example_inputs=(np.ones(4),), dynamic_shapes={"x": (ss.Dim.AUTO,)})
        def f(x):
            print("tracing", x.shape)
            return x + 1
        '''))
    code, out, err = run(["check", "--format", "json"], capsys, monkeypatch,
                         cwd=str(tmp_path))
    assert code == 0
    assert json.loads(out)["exports"][0]["status"] == "ok"
    assert "loading noisy model" in err and "tracing" in err


def test_no_exports_found_is_a_usage_error(tmp_path, capsys, monkeypatch):
    (tmp_path / "script.py").write_text("print('never run: a plain script')\n")
    code, out, err = run(["check", "."], capsys, monkeypatch, cwd=str(tmp_path))
    assert code == 2 and "no exports found" in err and "never run" not in out


def test_bad_toml_entries(capsys, monkeypatch):
    code, out, err = run(["check", "tests/cli_fixtures/toml_bad"], capsys, monkeypatch)
    assert code == 2
    assert "ERROR models:missing  (tests/cli_fixtures/toml_bad/pyproject.toml:1)" in out
    assert "module models (tests/cli_fixtures/toml_bad/models.py) has no attribute " \
           "'missing'" in out
    assert "ERROR models:f  (tests/cli_fixtures/toml_bad/pyproject.toml:8)" in out
    assert "'n*n' is not linear" in out
    assert "ok   models:f  n = x.shape[0] in [2, int_oo]" in out


def test_invalid_pyproject_is_a_usage_error(tmp_path, capsys, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.symshape\nbroken = \n")
    code, out, err = run(["check", "."], capsys, monkeypatch, cwd=str(tmp_path))
    assert code == 2 and "pyproject.toml" in out + err and "not valid TOML" in out + err


def test_without_a_toml_parser(tmp_path, capsys, monkeypatch):
    # Python 3.10 without tomli: a clear error, not an ImportError
    monkeypatch.setitem(sys.modules, "tomllib", None)
    monkeypatch.setitem(sys.modules, "tomli", None)
    (tmp_path / "pyproject.toml").write_text("[tool.symshape]\n")
    code, out, err = run(["check", "."], capsys, monkeypatch, cwd=str(tmp_path))
    assert code == 2 and "pip install tomli" in out + err


# --------------------------------------------------------------------------- --diff / --fix
ATTN_OLD = ('tokens = ss.Dim("tokens")            # promises any length; the block takes '
            '<= MAX_TOKENS\nmask_tokens = ss.Dim("mask_tokens")  # declared apart from tokens, '
            'but must equal it\n')
ATTN_NEW = ('tokens = ss.Dim("tokens", max=128)            # promises any length; the block '
            'takes <= MAX_TOKENS\nmask_tokens = tokens  # declared apart from tokens, but must '
            'equal it\n')


def test_diff_prints_and_writes_nothing(tmp_path, capsys, monkeypatch):
    zoo = copy(ZOO, tmp_path, "zoo_copy")
    attn = os.path.join(zoo, "zoo", "attn.py")
    before = read(attn)
    code, out, err = run(["check", "--diff", "zoo_copy"], capsys, monkeypatch,
                         cwd=str(tmp_path))
    assert code == 1
    assert read(attn) == before
    diff = out[out.index("--- a/"):]
    assert diff.startswith("--- a/zoo_copy/zoo/attn.py\n+++ b/zoo_copy/zoo/attn.py\n")
    changed = [l for l in diff.splitlines() if l[:1] in "+-" and l[:3] not in ("---", "+++")]
    assert changed == ["-" + l for l in ATTN_OLD.splitlines()] + \
        ["+" + l for l in ATTN_NEW.splitlines()]


def test_fix_zoo_rewrites_two_lines_then_passes(tmp_path, capsys, monkeypatch):
    zoo = copy(ZOO, tmp_path, "zoo_copy")
    attn = os.path.join(zoo, "zoo", "attn.py")
    before = read(attn)
    assert ATTN_OLD in before
    code, out, err = run(["check", "--fix", "-q", "zoo_copy"], capsys, monkeypatch,
                         cwd=str(tmp_path))
    assert code == 0, out
    assert read(attn) == before.replace(ATTN_OLD, ATTN_NEW)
    assert "fixed zoo_copy/zoo/attn.py\nre-checking after --fix:\n" in out
    assert "ok   zoo.attn:block  batch = x.shape[0] = mask.shape[0] in [2, 64]; tokens = x.shape[1] = mask.shape[1] in [2, 128]" in out
    assert out.splitlines()[-1] == "4 exports: 4 ok, 0 failed, 0 errors"
    code, out, err = run(["check", "zoo_copy"], capsys, monkeypatch, cwd=str(tmp_path))
    assert code == 0


def test_fix_json_reports_the_recheck(tmp_path, capsys, monkeypatch):
    copy(ZOO, tmp_path, "zoo_copy")
    code, out, err = run(["check", "--fix", "--format", "json", "zoo_copy"], capsys,
                         monkeypatch, cwd=str(tmp_path))
    assert code == 0
    doc = json.loads(out)
    assert doc["summary"]["failed"] == 1
    assert doc["written"] == ["zoo_copy/zoo/attn.py"]
    assert doc["applied"] == ["zoo.attn:block: tokens = Dim('tokens', max=128)",
                              "zoo.attn:block: mask_tokens = tokens"]
    assert doc["recheck"]["summary"]["ok"] == 4


FIXABLE_CHANGES = [
    ('a, b, c = ss.dims("a", "b", "c", max=64)   # c must equal a\n',
     'a, b = ss.dims("a", "b", max=64)   # c must equal a\nc = a\n'),
    ('dynamic_shapes={"x": (Dim.AUTO, Dim.DYNAMIC)})   # axis 1 meets W\n',
     'dynamic_shapes={"x": (Dim.AUTO, Dim.STATIC)})   # axis 1 meets W\n'),
    ('dx = Dim("dx")  # length of the flat signal\n',
     '_dx = Dim("_dx", min=1)\ndx = 4*_dx  # length of the flat signal\n'),
    ('dynamic_shapes={"x": (Dim("m"),), "y": (Dim("m1"),)})\n',
     'dynamic_shapes={"x": (Dim("m"),), "y": (Dim("m") + 1,)})\n'),
]


def replaced(text, changes):
    """``text`` with each ``(old, new)`` of ``changes`` applied (every ``old`` must occur)."""
    for old, new in changes:
        assert old in text
        text = text.replace(old, new)
    return text


def test_fix_python_spec_forms(tmp_path, capsys, monkeypatch):
    d = copy(os.path.join(FIX, "fixable"), tmp_path)
    path = os.path.join(d, "relations.py")
    before = read(path)
    code, out, err = run(["check", "fixable"], capsys, monkeypatch, cwd=str(tmp_path))
    assert code == 1 and out.count("FAIL ") == 4
    code, out, err = run(["check", "--fix", "fixable"], capsys, monkeypatch,
                         cwd=str(tmp_path))
    assert code == 0, out
    expected = replaced(before, FIXABLE_CHANGES)
    assert read(path) == expected
    assert "# keep this comment" in expected
    assert out.splitlines()[-1] == "4 exports: 4 ok, 0 failed, 0 errors"


LATER = """\
import numpy as np
from symshape import Dim, exportable

mb = Dim("mbatch")   # mask batch
b = Dim("batch")


@exportable(example_inputs=(np.ones((3, 2)), np.ones((3, 2))),
            dynamic_shapes={"x": (b, None), "m": (mb, None)})
def masked(x, m):
    return x + m
"""

NOIMPORT = """\
import numpy as np
from symshape import dims, exportable

nx, ny = dims("nx", "ny")  # two lengths


@exportable(example_inputs=(np.ones(6), np.ones(7)), dynamic_shapes=((nx,), (ny,)))
def long_enough(x, y):
    if x.shape[0] + y.shape[0] > 10:
        return x.sum() + y.sum()
    return x.sum()
"""


def test_fix_moves_a_relation_below_its_reference_and_adds_imports(tmp_path, capsys,
                                                                   monkeypatch):
    pkg = tmp_path / "moves"
    pkg.mkdir()
    (pkg / "later.py").write_text(LATER)
    (pkg / "noimport.py").write_text(NOIMPORT)
    code, out, err = run(["check", "--diff", "moves"], capsys, monkeypatch, cwd=str(tmp_path))
    assert code == 1 and "+mb = b   # mask batch" in out and "+nx = Dim('nx', min=4)" in out
    code, out, err = run(["check", "--fix", "moves"], capsys, monkeypatch, cwd=str(tmp_path))
    assert code == 0, out
    assert (pkg / "later.py").read_text() == LATER.replace(
        'mb = Dim("mbatch")   # mask batch\nb = Dim("batch")\n',
        'b = Dim("batch")\nmb = b   # mask batch\n')
    assert (pkg / "noimport.py").read_text() == NOIMPORT.replace(
        'from symshape import dims, exportable\n',
        'from symshape import dims, exportable\nfrom symshape import Dim\n').replace(
        'nx, ny = dims("nx", "ny")  # two lengths\n',
        "nx = Dim('nx', min=4)\nny = Dim('ny', min=7)  # two lengths\n")


TOML_CHANGES = [
    ('mbatch = { max = 64 }  # declared apart from batch\n',
     'mbatch = { max = 64 }  # declared apart from batch\ntokens = { max = 32 }\n'),
    ('mask = ["mbatch", "tokens"] }', 'mask = ["batch", "tokens"] }'),
    ("""x = ["Dim.AUTO", 'Dim.DYNAMIC'] }   # axis 1 meets W""",
     """x = ["Dim.AUTO", 'Dim.STATIC'] }   # axis 1 meets W"""),
    ('dynamic_shapes = [["m"], ["m1"]]', 'dynamic_shapes = [["m"], ["m + 1"]]'),
]


def test_fix_pyproject_entries(tmp_path, capsys, monkeypatch):
    d = copy(os.path.join(FIX, "toml_project"), tmp_path)
    path = os.path.join(d, "pyproject.toml")
    before = read(path)
    code, out, err = run(["check", "--diff", "toml_project"], capsys, monkeypatch,
                         cwd=str(tmp_path))
    assert code == 1 and read(path) == before
    assert "--- a/toml_project/pyproject.toml" in out
    code, out, err = run(["check", "--fix", "toml_project"], capsys, monkeypatch,
                         cwd=str(tmp_path))
    assert code == 0, out
    expected = replaced(before, TOML_CHANGES)
    assert read(path) == expected
    assert "ok   models:masked  batch = x.shape[0] = mask.shape[0] in [2, 64]; tokens = x.shape[1] = mask.shape[1] in [2, 32]" in out


def test_fix_adds_a_dims_table_when_missing(tmp_path, capsys, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent('''\
        # exports only
        [[tool.symshape.exports]]
        function = "m:f"
        example_inputs = [{ shape = [10] }]
        dynamic_shapes = { x = ["n"] }  # n is capped by the code
        '''))
    (tmp_path / "m.py").write_text("def f(x):\n    assert x.shape[0] <= 16\n    return x\n")
    code, out, err = run(["check", "--fix", "."], capsys, monkeypatch, cwd=str(tmp_path))
    assert code == 0, out
    assert (tmp_path / "pyproject.toml").read_text() == textwrap.dedent('''\
        # exports only
        [tool.symshape.dims]
        n = { max = 16 }

        [[tool.symshape.exports]]
        function = "m:f"
        example_inputs = [{ shape = [10] }]
        dynamic_shapes = { x = ["n"] }  # n is capped by the code
        ''')


def test_fix_adds_one_dims_table_for_several_exports(tmp_path, capsys, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent('''\
        [[tool.symshape.exports]]
        function = "m:f"
        example_inputs = [{ shape = [10] }, { shape = [10] }]
        dynamic_shapes = { x = ["n"], y = ["k"] }

        [[tool.symshape.exports]]
        function = "m:g"
        example_inputs = [{ shape = [10] }]
        dynamic_shapes = { x = ["q"] }
        '''))
    (tmp_path / "m.py").write_text("def f(x, y):\n    assert x.shape[0] <= 16\n"
                                   "    assert y.shape[0] <= 20\n    return x\n"
                                   "def g(x):\n    assert x.shape[0] <= 30\n    return x\n")
    code, out, err = run(["check", "--fix", "-q"], capsys, monkeypatch, cwd=str(tmp_path))
    assert code == 0, out
    assert (tmp_path / "pyproject.toml").read_text().startswith(
        "[tool.symshape.dims]\nn = { max = 16 }\nk = { max = 20 }\nq = { max = 30 }\n\n"
        "[[tool.symshape.exports]]\n")


def test_fix_keeps_crlf_and_a_missing_final_newline(tmp_path, capsys, monkeypatch):
    src = ('import numpy as np\nimport symshape as ss\n\n'
           'a, b = ss.dims("a", "b", max=99)  # c\n\n\n'
           '@ss.exportable(example_inputs=(np.ones(5), np.ones(5)),\n'
           '               dynamic_shapes={"x": (a,), "y": (b,)})\n'
           'def f(x, y):\n    return x + y')
    with open(str(tmp_path / "crlf.py"), "w", newline="") as fh:
        fh.write(src.replace("\n", "\r\n"))
    code, out, err = run(["check", "--fix", "-q", "crlf.py"], capsys, monkeypatch,
                         cwd=str(tmp_path))
    assert code == 0, out
    with open(str(tmp_path / "crlf.py"), newline="") as fh:
        new = fh.read()
    assert new == src.replace('a, b = ss.dims("a", "b", max=99)  # c\n',
                              'a = ss.Dim("a", max=99)  # c\nb = a\n').replace("\n", "\r\n")


def test_fix_reports_what_it_cannot_place(tmp_path, capsys, monkeypatch):
    (tmp_path / "built.py").write_text(textwrap.dedent('''\
        import numpy as np
        import symshape as ss

        def make_spec():
            return {"x": (ss.Dim("k"),), "y": (ss.Dim("k2"),)}

        @ss.exportable(example_inputs=(np.ones(4), np.ones(4)), dynamic_shapes=make_spec())
        def f(x, y):
            return x + y
        '''))
    before = (tmp_path / "built.py").read_text()
    code, out, err = run(["check", "--fix", "built.py"], capsys, monkeypatch,
                         cwd=str(tmp_path))
    assert code == 1
    assert "not applied (do it by hand): built:f: k2 = k" in out
    assert (tmp_path / "built.py").read_text() == before


# --------------------------------------------------------------------------- explain
def test_explain_broken_export(capsys, monkeypatch):
    code, out, err = run(["explain", "zoo.attn:block"], capsys, monkeypatch, cwd=ZOO)
    assert code == 1
    assert out.startswith("explain zoo.attn:block  (zoo/attn.py:20)\n"
                          "example inputs: x: float32[2, 10, 16], mask: float32[2, 10]\n")
    assert "  create_symbol s0 = 2 for x.shape[0] VR[2, 64]\n" in out
    assert "  create_symbol s2 = 10 for mask.shape[1] VR[2, int_oo]\n" in out
    assert ('  guard added s1 <= 128 at zoo/attn.py:26: assert x.shape[1] <= MAX_TOKENS, '
            '"at most MAX_TOKENS tokens"\n') in out
    assert "  guard added s1 == s2 at zoo/attn.py:29: " in out
    assert "Range constraints: {s0: VR[2, 64], s1: VR[2, 128]}" in out
    assert "  x: (s0, s1, 16)\n  mask: (s0, s1)\n" in out
    assert "Suggested fixes:\n  tokens = Dim('tokens', max=128)\n  mask_tokens = tokens" in out


def test_explain_toml_export_and_root_option(capsys, monkeypatch):
    code, out, err = run(["explain", "zoo.head:classify", "--root", "examples/zoo"], capsys,
                         monkeypatch)
    assert code == 0, out + err
    assert out.startswith("explain zoo.head:classify  (examples/zoo/pyproject.toml:10)")
    assert "create_symbol s0 = 8 for feats.shape[0] VR[2, 128]" in out
    assert "Input shapes:\n  feats: (s0, 4, 8)\n" in out
    assert out.rstrip().endswith("ok: the spec holds")


def test_explain_module_that_fails_to_import(capsys, monkeypatch):
    code, out, err = run(["explain", "tests/cli_fixtures/broken_import/raises.py:f"], capsys,
                         monkeypatch)
    assert code == 2
    assert "RuntimeError: weights.npz not found" in out and "Traceback" not in out + err


# --------------------------------------------------------------------------- pieces
def test_exportable_returns_the_function_and_records_the_declaration():
    def f(x):
        return x * 2

    line = sys._getframe().f_lineno + 1
    g = ss.exportable(example_inputs=(np.ones(3),), dynamic_shapes={"x": (ss.Dim.AUTO,)})(f)
    assert g is f and f(np.ones(2)).tolist() == [2.0, 2.0]
    decl = [d for d in registered() if d.fn is f][0]
    assert decl.file == os.path.abspath(__file__) and decl.line == line
    assert decl.name.endswith(":test_exportable_returns_the_function_and_records_the_"
                              "declaration.<locals>.f")
    with pytest.raises(ss.UserError):
        ss.exportable(dynamic_shapes=None)
    assert "exportable" in ss.__all__


@pytest.mark.parametrize("text, parsed", [
    ("batch", ("linear", ("batch", 1, 0))),
    ("2*batch + 1", ("linear", ("batch", 2, 1))),
    ("batch*4 - 2", ("linear", ("batch", 4, -2))),
    ("8 - d", ("linear", ("d", -1, 8))),
    ("12", ("int", 12)),
    ("Dim.AUTO", ("marker", ss.Dim.AUTO)),
    (" Dim.STATIC ", ("marker", ss.Dim.STATIC)),
])
def test_parse_axis(text, parsed):
    assert project.parse_axis(text) == parsed


@pytest.mark.parametrize("text", ["a + b", "n*n", "-2*n", "n/2", "Dim.WHAT", "1 +"])
def test_parse_axis_rejects(text):
    with pytest.raises(ValueError):
        project.parse_axis(text)


def test_toml_spec_builder_shares_dims_and_derives():
    b = project.SpecBuilder({"n": {"max": 64}}, "here")
    spec = b.spec({"x": ["n", "2*n + 1", 3, "Dim.AUTO"], "y": {"0": "n"}})
    x = spec["x"]
    assert x[0] is b.dims["n"] and x[0].max == 64 and repr(x[1]) == "2*n + 1"
    assert x[2] == 3 and x[3] is ss.Dim.AUTO and spec["y"] == {0: x[0]}


def test_toml_layout_positions():
    text = textwrap.dedent('''\
        [tool.symshape.dims]
        n = { max = 8 }  # c
        [[tool.symshape.exports]]
        function = "m:f"
        dynamic_shapes = { x = [
            "n",   # first axis
            4,
        ] }
        ''')
    lay = project.layout(text)
    ex = lay.exports()
    assert len(ex) == 1 and lay.export_line(0) == 5
    node = ex[0].keys["dynamic_shapes"][2].child("x").child(0)
    assert text[node.start:node.end] == '"n"' and node.value == "n"
    dims = lay.find("tool.symshape.dims").keys["n"][2]
    assert text[dims.start:dims.end] == "{ max = 8 }"
