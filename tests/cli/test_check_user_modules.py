"""How ``symshape check`` treats user modules: a file edited during the check is
never overwritten by ``--fix``; a module named by both the walk and a pyproject entry runs
once under one name; every way a module can fail or leave during import is an ERROR line
naming its file while the other modules are still checked."""
import json
import os
import textwrap

import pytest

from symshape.cli import main


def run(argv, capsys, monkeypatch, cwd):
    monkeypatch.chdir(cwd)
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def write(path, text):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "w", encoding="utf-8") as fh:
        fh.write(textwrap.dedent(text).lstrip("\n"))


def read(path):
    with open(str(path), encoding="utf-8") as fh:
        return fh.read()


GOOD = """
    import numpy as np
    import symshape as ss


    @ss.exportable(example_inputs=(np.ones((8, 3), np.float32),),
                   dynamic_shapes={"x": (ss.Dim.AUTO, None)})
    def good(x):
        return x + 1
"""


# --------------------------------------------------------------------------- --fix vs an edit
# the module saves an edit to its own file while it is imported by the check: what an editor
# save or a git pull does between the check reading the file and --fix writing it
EDITED_DURING_CHECK = '''
    import pathlib

    import numpy as np
    import symshape as ss

    _p = pathlib.Path(__file__)
    _t = _p.read_text()
    _mark = "# reviewed" + " by the user"
    if _mark not in _t:
        _p.write_text(_t.replace('n = ss.Dim("n")\\n', 'n = ss.Dim("n")  ' + _mark + '\\n'))

    n = ss.Dim("n")


    @ss.exportable(example_inputs=(np.ones(16),), dynamic_shapes={"x": (n,)})
    def f(x):
        return x.reshape(4, -1)
'''


def test_fix_never_overwrites_a_file_edited_during_the_check(tmp_path, capsys, monkeypatch):
    write(tmp_path / "mod.py", EDITED_DURING_CHECK)
    code, out, err = run(["check", "--fix"], capsys, monkeypatch, tmp_path)
    text = read(tmp_path / "mod.py")
    assert '# reviewed by the user' in text, text        # the user's edit is there
    assert "4*_n" not in text and "Dim('_n'" not in text, text   # and nothing of the fix
    assert code == 2, out + err
    assert "NOT written mod.py: it changed on disk while the check ran" in out, out


def test_fix_json_reports_the_refusal(tmp_path, capsys, monkeypatch):
    write(tmp_path / "mod.py", EDITED_DURING_CHECK)
    code, out, err = run(["check", "--fix", "--format", "json"], capsys, monkeypatch, tmp_path)
    doc = json.loads(out)
    assert code == 2
    assert doc["written"] == []
    assert doc["write_errors"] and doc["write_errors"][0].startswith(
        "mod.py: it changed on disk while the check ran"), doc["write_errors"]
    assert "# reviewed by the user" in read(tmp_path / "mod.py")


def test_fix_of_an_unchanged_file_still_writes(tmp_path, capsys, monkeypatch):
    write(tmp_path / "mod.py", '''
        import numpy as np
        import symshape as ss

        n = ss.Dim("n")


        @ss.exportable(example_inputs=(np.ones(16),), dynamic_shapes={"x": (n,)})
        def f(x):
            return x.reshape(4, -1)
    ''')
    code, out, err = run(["check", "--fix"], capsys, monkeypatch, tmp_path)
    assert code == 0, out + err
    assert "4*_n" in read(tmp_path / "mod.py")


def test_fix_refuses_an_edited_pyproject(tmp_path, capsys, monkeypatch):
    # the module imported for a TOML entry edits pyproject.toml (as a git pull would)
    write(tmp_path / "pyproject.toml", '''
        [tool.symshape.dims]
        n = { max = 64 }

        [[tool.symshape.exports]]
        function = "mod:f"
        example_inputs = [{ shape = [8], dtype = "float32" }]
        dynamic_shapes = { x = ["n"] }
    ''')
    write(tmp_path / "mod.py", '''
        import pathlib
        _p = pathlib.Path(__file__).with_name("pyproject.toml")
        _t = _p.read_text()
        if "# pulled" not in _t:
            _p.write_text(_t + "# pulled\\n")


        def f(x):
            return x.reshape(4, -1)
    ''')
    code, out, err = run(["check", "--fix"], capsys, monkeypatch, tmp_path)
    text = read(tmp_path / "pyproject.toml")
    assert text.endswith("# pulled\n") and "n = { max = 64 }" in text, text
    assert code == 2, out + err
    assert "NOT written pyproject.toml: it changed on disk while the check ran" in out, out


# --------------------------------------------------------------------------- one file, one name
def _namespace_project(tmp_path, toml_function):
    write(tmp_path / "app" / "model.py", '''
        import numpy as np
        import symshape as ss

        print("LOADING app/model.py")


        @ss.exportable(example_inputs=(np.ones((8, 3), np.float32),),
                       dynamic_shapes={"x": (ss.Dim.AUTO, None)})
        def f(x):
            return x + 1


        def g(x):
            return x * 2
    ''')
    write(tmp_path / "pyproject.toml", '''
        [[tool.symshape.exports]]
        function = "%s"
        example_inputs = [{ shape = [8, 4], dtype = "float32" }]
    ''' % toml_function)


def test_module_walked_and_named_by_pyproject_runs_once(tmp_path, capsys, monkeypatch):
    _namespace_project(tmp_path, "app.model:g")
    code, out, err = run(["check"], capsys, monkeypatch, tmp_path)
    assert code == 0, out + err
    assert err.count("LOADING app/model.py") == 1, err       # one execution
    assert "ok   app.model:f" in out and "ok   app.model:g" in out, out   # one name
    assert "model:f" not in out.replace("app.model:f", ""), out
    assert "2 exports: 2 ok" in out


def test_module_walked_and_named_by_pyproject_json(tmp_path, capsys, monkeypatch):
    _namespace_project(tmp_path, "app.model:g")
    code, out, err = run(["check", "--format", "json"], capsys, monkeypatch, tmp_path)
    doc = json.loads(out)
    assert sorted(e["name"] for e in doc["exports"]) == ["app.model:f", "app.model:g"]
    assert err.count("LOADING app/model.py") == 1


def test_walked_module_alone_keeps_its_folder_name(tmp_path, capsys, monkeypatch):
    # no pyproject entry names it: imported as its folder gives (a top-level module)
    write(tmp_path / "svc" / "model.py", GOOD)
    code, out, err = run(["check"], capsys, monkeypatch, tmp_path)
    assert code == 0 and "ok   model:good" in out, out + err


# --------------------------------------------------------------------------- leaving at import
LEAVERS = {
    "exit0": "import sys\nsys.exit(0)\n",
    "exit3": "import sys\nsys.exit(3)\n",
    "exit_none": "raise SystemExit\n",
    "exit_text": "raise SystemExit('bye')\n",
    "genexit": "raise GeneratorExit\n",
    "recursion": "def r():\n    return r()\n\n\nr()\n",
    "syntax": "x = (\n",
    "keyerror": "{}['k']\n",
}


@pytest.mark.parametrize("how", sorted(LEAVERS))
def test_module_leaving_at_import_is_an_error_and_others_are_checked(how, tmp_path, capsys,
                                                                      monkeypatch):
    write(tmp_path / "good.py", GOOD)
    write(tmp_path / "bad.py", "import symshape as ss\nss.exportable\n" + LEAVERS[how])
    code, out, err = run(["check"], capsys, monkeypatch, tmp_path)
    assert code == 2, out + err
    assert "ERROR bad  (bad.py:" in out, out
    assert "import of bad failed" in out
    assert "ok   good:good" in out, out
    assert "1 module failed to import" in out


@pytest.mark.parametrize("how", sorted(LEAVERS))
def test_toml_module_leaving_at_import_is_an_error(how, tmp_path, capsys, monkeypatch):
    write(tmp_path / "good.py", "def good(x):\n    return x + 1\n")
    write(tmp_path / "bad.py", LEAVERS[how] + "\n\ndef f(x):\n    return x\n")
    write(tmp_path / "pyproject.toml", '''
        [[tool.symshape.exports]]
        function = "good:good"
        example_inputs = [{ shape = [8, 4], dtype = "float32" }]

        [[tool.symshape.exports]]
        function = "bad:f"
        example_inputs = [{ shape = [8, 4], dtype = "float32" }]
    ''')
    code, out, err = run(["check"], capsys, monkeypatch, tmp_path)
    assert code == 2, out + err
    assert "ERROR bad:f  (pyproject.toml:" in out, out
    assert "import of bad failed" in out and "bad.py" in out, out
    assert "ok   good:good" in out, out


def test_module_leaving_at_import_json(tmp_path, capsys, monkeypatch):
    write(tmp_path / "good.py", GOOD)
    write(tmp_path / "bad.py", "import symshape as ss\nss.exportable\nimport sys\nsys.exit(0)\n")
    code, out, err = run(["check", "--format", "json"], capsys, monkeypatch, tmp_path)
    doc = json.loads(out)
    assert code == 2 and doc["summary"]["import_errors"] == 1
    bad = [e for e in doc["exports"] if e["kind"] == "import"]
    assert bad[0]["file"] == "bad.py" and bad[0]["status"] == "error"
    assert any("SystemExit: 0" in l for l in bad[0]["error"]), bad


def test_fix_refuses_a_module_edited_after_the_check_imported_it(tmp_path, capsys,
                                                                  monkeypatch):
    # models.py is imported for a TOML entry (not walked); its annotation is what --fix
    # would rewrite, and it changes on disk while its export runs
    pytest.importorskip("jaxtyping")
    write(tmp_path / "pyproject.toml", '''
        [[tool.symshape.exports]]
        function = "models:half"
        example_inputs = [{ shape = [8], dtype = "float32" }]
    ''')
    write(tmp_path / "models.py", '''
        import pathlib

        import numpy as np
        from jaxtyping import Float


        def half(x: Float[np.ndarray, "n"]) -> Float[np.ndarray, "n"]:
            p = pathlib.Path(__file__)
            t = p.read_text()
            mark = "# edited" + " meanwhile"
            if mark not in t:
                p.write_text(t + mark + "\\n")
            return x[:, None] * 2
    ''')
    code, out, err = run(["check", "--fix"], capsys, monkeypatch, tmp_path)
    text = read(tmp_path / "models.py")
    assert text.endswith("# edited meanwhile\n"), text
    assert '-> Float[np.ndarray, "n"]:' in text, text       # the fix was not written
    assert code == 2, out + err
    assert "NOT written models.py: it changed on disk while the check ran" in out, out
