"""`symshape check` against hostile projects: nothing user code does changes the report or the
exit status, and `--fix` never leaves a damaged or half-written file.

Each test builds a small project in ``tmp_path`` in the way real code bases are laid out and
runs ``symshape.cli.main`` in-process (user code itself runs in the isolated child).
"""
from repo_paths import REPO
import json
import os
import stat
import subprocess
import sys
import textwrap

from symshape.cli import main

HEAD = "import numpy as np\nimport symshape as ss\n"


def write(root, rel, text, mode="w", newline=None):
    path = os.path.join(str(root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(text, bytes):
        with open(path, "wb") as fh:
            fh.write(text)
    else:
        with open(path, mode, encoding="utf-8", newline=newline) as fh:
            fh.write(textwrap.dedent(text))
    return path


def read(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def run(argv, capsys, monkeypatch, cwd):
    monkeypatch.chdir(str(cwd))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


OK_MODEL = HEAD + '''
@ss.exportable(example_inputs=(np.ones((4, 3)),), dynamic_shapes={"x": (ss.Dim("n"), None)})
def double(x):
    return x * 2
'''

# a spec that fails with a one-line fix: tokens must be at most 128
NEEDS_MAX = HEAD + '''
tokens = ss.Dim("tokens")


@ss.exportable(example_inputs=(np.ones((2, 8)),), dynamic_shapes={"x": (None, tokens)})
def block(x):
    assert x.shape[1] <= 128
    return x + 1
'''


# --------------------------------------------------------------------------- isolation
def test_os_exit_at_import_is_an_error_not_a_silent_pass(tmp_path, capsys, monkeypatch):
    write(tmp_path, "good.py", OK_MODEL)
    write(tmp_path, "quitter.py", HEAD + "import os\nos._exit(0)\n"
          "@ss.exportable(example_inputs=(np.ones(3),))\ndef f(x):\n    return x\n")
    code, out, err = run(["check", "-q"], capsys, monkeypatch, tmp_path)
    assert code == 2, out
    assert "ERROR quitter" in out and "os._exit" in out
    assert "ok   good:double" in out                 # the rest is still checked
    assert out.splitlines()[-1].endswith("1 module failed to import")


def test_endless_loop_at_import_times_out(tmp_path, capsys, monkeypatch):
    write(tmp_path, "good.py", OK_MODEL)
    write(tmp_path, "spin.py", HEAD + "while True:\n    pass\n"
          "@ss.exportable(example_inputs=(np.ones(3),))\ndef f(x):\n    return x\n")
    code, out, err = run(["check", "-q", "--timeout", "3"], capsys, monkeypatch, tmp_path)
    assert code == 2
    assert "ERROR spin" in out and "did not finish within 3 s" in out
    assert "ok   good:double" in out


def test_endless_loop_in_an_export_times_out(tmp_path, capsys, monkeypatch):
    write(tmp_path, "m.py", OK_MODEL + '''

@ss.exportable(example_inputs=(np.ones(3),))
def hang(x):
    while True:
        pass
''')
    code, out, err = run(["check", "-q", "--timeout", "3"], capsys, monkeypatch, tmp_path)
    assert code == 2
    assert "ERROR m:hang" in out and "export did not finish within 3 s" in out
    assert "ok   m:double" in out


def test_writes_to_fd1_do_not_break_json(tmp_path, capsys, monkeypatch):
    write(tmp_path, "noisy.py", HEAD + '''import os, subprocess, sys
sys.__stdout__.write("via __stdout__\\n")
sys.__stdout__.flush()
os.write(1, b"via fd 1\\n")
subprocess.run([sys.executable, "-c", "print('via a subprocess')"])


@ss.exportable(example_inputs=(np.ones(4),), dynamic_shapes={"x": (ss.Dim.AUTO,)})
def f(x):
    os.write(1, b"while tracing\\n")
    return x + 1
''')
    code, out, err = run(["check", "--format", "json"], capsys, monkeypatch, tmp_path)
    doc = json.loads(out)
    assert code == 0 and doc["exports"][0]["status"] == "ok"
    for text in ("via __stdout__", "via fd 1", "via a subprocess", "while tracing"):
        assert text in err and text not in out


def test_same_helper_name_in_two_subprojects(tmp_path, capsys, monkeypatch):
    # svc_a's config allows 64, svc_b's only 8: each service must see its own config
    for svc, limit in (("svc_a", 64), ("svc_b", 8)):
        write(tmp_path, svc + "/config.py", "LIMIT = %d\n" % limit)
        write(tmp_path, svc + "/model.py", HEAD + '''from config import LIMIT


@ss.exportable(example_inputs=(np.ones(4),),
               dynamic_shapes={"x": (ss.Dim("n", max=32),)})
def f(x):
    assert x.shape[0] <= LIMIT
    return x + 1
''')
    results = []
    for order in (["svc_a", "svc_b"], ["svc_b", "svc_a"]):
        code, out, err = run(["check", "-q"] + order, capsys, monkeypatch, tmp_path)
        assert code == 1, out
        assert "FAIL model:f  (svc_b/model.py:6)" in out
        assert "ok   model:f  n = x.shape[0] in [2, 32]" in out
        results.append(sorted(l for l in out.splitlines() if "symshape check --fix" not in l))
    assert results[0] == results[1]


def test_exports_declared_through_a_wrapper_are_all_checked(tmp_path, capsys, monkeypatch):
    write(tmp_path, "helpers.py", '''import symshape as ss


def export_spec(**kw):
    return ss.exportable(**kw)
''')
    for name, ok in (("a", True), ("b", False)):
        write(tmp_path, name + ".py", HEAD + '''from helpers import export_spec


@export_spec(example_inputs=(np.ones(4),), dynamic_shapes={"x": (ss.Dim("n"),)})
def model(x):
    %s
    return x + 1
''' % ("pass" if ok else "assert x.shape[0] == 4"))
    code, out, err = run(["check", "-q"], capsys, monkeypatch, tmp_path)
    assert code == 1, out
    assert "ok   a:model" in out and "FAIL b:model  (b.py:6)" in out
    assert out.splitlines()[-2] == "2 exports: 1 ok, 1 failed, 0 errors"


def test_symlinked_directories_are_followed(tmp_path, capsys, monkeypatch):
    write(tmp_path, "real/models/m.py", OK_MODEL)
    os.makedirs(str(tmp_path / "proj"))
    os.symlink(str(tmp_path / "real" / "models"), str(tmp_path / "proj" / "models"))
    os.symlink(str(tmp_path / "proj"), str(tmp_path / "proj" / "loop"))   # never endless
    code, out, err = run(["check", "-q", "proj"], capsys, monkeypatch, tmp_path)
    assert code == 0, out + err
    assert out.count("ok   m:double") == 1


def test_chdir_at_import_does_not_break_the_recheck(tmp_path, capsys, monkeypatch):
    write(tmp_path, "pkg/model.py", "import os\nos.chdir('/')\n" + NEEDS_MAX)
    code, out, err = run(["check", "-q", "--fix", "pkg"], capsys, monkeypatch, tmp_path)
    assert code == 0, out
    assert "fixed pkg/model.py" in out
    assert 'tokens = ss.Dim("tokens", max=128)' in read(str(tmp_path / "pkg" / "model.py"))


def test_bad_toml_example_is_an_error_of_that_entry(tmp_path, capsys, monkeypatch):
    write(tmp_path, "models.py", "def f(x):\n    return x + 1\n")
    write(tmp_path, "pyproject.toml", '''\
        [[tool.symshape.exports]]
        function = "models:f"
        example_inputs = [{ shape = [4], dtype = "int8", fill = 300 }]

        [[tool.symshape.exports]]
        function = "models:f"
        example_inputs = [{ shape = [4] }]
        dynamic_shapes = { x = ["n"] }
        ''')
    code, out, err = run(["check", "-q"], capsys, monkeypatch, tmp_path)
    assert code == 2 and "Traceback" not in out + err
    assert "fill = 300 does not fit dtype int8" in out
    assert "ok   models:f  n = x.shape[0]" in out


def test_a_module_is_imported_once(tmp_path, capsys, monkeypatch):
    # pkg/sub has no __init__.py: the walk names pkg/sub/models.py "models", while main.py
    # imports it as pkg.sub.models; its body must run once
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/sub/models.py", HEAD + '''import os
with open(os.path.join(os.path.dirname(__file__), "imports.log"), "a") as fh:
    fh.write("imported as %s\\n" % __name__)


@ss.exportable(example_inputs=(np.ones(3),))
def f(x):
    return x
''')
    write(tmp_path, "main.py", "import symshape as ss\nfrom pkg.sub import models\n"
          "declare = ss.exportable\n")
    code, out, err = run(["check", "-q"], capsys, monkeypatch, tmp_path)
    assert code == 0, out
    assert read(str(tmp_path / "pkg" / "sub" / "imports.log")) == \
        "imported as pkg.sub.models\n"
    assert out.count(":f ") == 1


def test_diff_writes_no_bytecode(tmp_path, capsys, monkeypatch):
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/model.py", NEEDS_MAX.replace(
        "    return x + 1", "    from pkg import util   # imported while tracing\n"
                           "    return x + util.X"))
    write(tmp_path, "pkg/util.py", "X = 1\n")
    monkeypatch.setattr(sys, "dont_write_bytecode", False)   # as in a plain shell
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    code, out, err = run(["check", "-q", "--diff", "pkg"], capsys, monkeypatch, tmp_path)
    assert code == 1 and '+tokens = ss.Dim("tokens", max=128)' in out
    found = [d for d, _, _ in os.walk(str(tmp_path)) if "__pycache__" in d]
    assert found == []


def test_a_file_with_a_bom_is_checked_and_fixed(tmp_path, capsys, monkeypatch):
    path = write(tmp_path, "bom.py", b"\xef\xbb\xbf" + NEEDS_MAX.encode("utf-8"))
    code, out, err = run(["check", "-q", "--fix", "."], capsys, monkeypatch, tmp_path)
    assert code == 0, out
    with open(path, "rb") as fh:
        data = fh.read()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b'tokens = ss.Dim("tokens", max=128)' in data


def test_control_characters_in_user_messages_are_escaped(tmp_path, capsys, monkeypatch):
    write(tmp_path, "m.py", HEAD + '''

@ss.exportable(example_inputs=(np.ones(3),))
def f(x):
    raise RuntimeError("bad\\x1b[31m red \\x07 bell")
''')
    code, out, err = run(["check", "-q"], capsys, monkeypatch, tmp_path)
    assert code == 2
    assert "\x1b" not in out and "\x07" not in out
    assert "bad\\x1b[31m red \\x07 bell" in out


# --------------------------------------------------------------------------- writing
def test_failed_write_leaves_the_file_whole(tmp_path):
    # a file-size limit makes the write fail half way, as a full disk would
    path = write(tmp_path, "model.py", NEEDS_MAX + "# padding\n" * 300)
    before = read(path)
    limit = len(before.encode()) - 100
    code = textwrap.dedent('''
        import resource, sys
        resource.setrlimit(resource.RLIMIT_FSIZE, (%d, %d))
        from symshape.cli import main
        sys.exit(main(["check", "-q", "--fix", "."]))
        ''' % (limit, limit))
    p = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path), capture_output=True,
                       text=True, timeout=300)
    assert read(path) == before
    assert p.returncode == 2, p.stdout + p.stderr
    assert "NOT written model.py" in p.stdout and "Traceback" not in p.stdout + p.stderr
    assert [f for f in os.listdir(str(tmp_path)) if "symshape-tmp" in f] == []


def test_read_only_file_is_reported_not_a_traceback(tmp_path, capsys, monkeypatch):
    path = write(tmp_path, "model.py", NEEDS_MAX)
    before = read(path)
    os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    code, out, err = run(["check", "-q", "--fix", "."], capsys, monkeypatch, tmp_path)
    assert code == 2 and "Traceback" not in out + err
    assert "NOT written model.py: it is read-only" in out
    assert read(path) == before


def test_file_changed_while_checking_is_not_overwritten(tmp_path, capsys, monkeypatch):
    import symshape.cli.command as cli
    path = write(tmp_path, "model.py", NEEDS_MAX)
    real = cli.plan_verified

    def edit_meanwhile(*a, **kw):
        result = real(*a, **kw)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("# saved by the user during the check\n")
        return result

    monkeypatch.setattr(cli, "plan_verified", edit_meanwhile)
    code, out, err = run(["check", "-q", "--fix", "."], capsys, monkeypatch, tmp_path)
    assert code == 2
    assert "NOT written model.py: it changed since the check read it" in out
    assert read(path).endswith("# saved by the user during the check\n")
    assert "max=128" not in read(path)


def test_fix_keeps_file_mode(tmp_path, capsys, monkeypatch):
    path = write(tmp_path, "model.py", NEEDS_MAX)
    os.chmod(path, 0o640)
    code, out, err = run(["check", "-q", "--fix", "."], capsys, monkeypatch, tmp_path)
    assert code == 0
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


# --------------------------------------------------------------------------- what is checked
def test_a_mention_of_exportable_does_not_run_a_script(tmp_path, capsys, monkeypatch):
    write(tmp_path, "m.py", OK_MODEL)
    write(tmp_path, "script.py", "# we could use ss.exportable here one day\n"
          "raise SystemExit('the script ran')\n")
    code, out, err = run(["check", "-q"], capsys, monkeypatch, tmp_path)
    assert code == 0 and "the script ran" not in out + err


def test_checking_one_file_leaves_the_pyproject_alone(tmp_path, capsys, monkeypatch):
    write(tmp_path, "m.py", OK_MODEL)
    write(tmp_path, "models.py", "def f(x):\n    assert x.shape[0] <= 8\n    return x\n")
    pp = write(tmp_path, "pyproject.toml", '''\
        [[tool.symshape.exports]]
        function = "models:f"
        example_inputs = [{ shape = [4] }]
        dynamic_shapes = { x = ["n"] }
        ''')
    before = read(pp)
    code, out, err = run(["check", "-q", "--fix", "m.py"], capsys, monkeypatch, tmp_path)
    assert code == 0 and "models:f" not in out
    assert read(pp) == before


# --------------------------------------------------------------------------- messages
def test_explain_from_the_wrong_directory_suggests_root(capsys, monkeypatch):
    repo = REPO
    code, out, err = run(["explain", "zoo.attn:block"], capsys, monkeypatch, repo)
    assert code == 2 and "Traceback" not in out + err
    assert "cannot find module 'zoo.attn': looked in ." in err
    assert "--root" in err
    code, out, err = run(["explain", "--root", "examples/zoo", "zoo.attn:block"], capsys,
                         monkeypatch, repo)
    assert code == 1 and "explain zoo.attn:block" in out


def test_unknown_log_names_are_reported():
    env = dict(os.environ, SYMSHAPE_LOGS="+dynamics,bogus")
    p = subprocess.run([sys.executable, "-c", "import symshape"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert "unknown log 'dynamics'" in p.stderr and "unknown log 'bogus'" in p.stderr
    assert "the logs are: dynamic" in p.stderr


def test_guard_stack_alone_turns_the_guard_log_on():
    env = dict(os.environ, SYMSHAPE_GUARD_STACK="<= 8")
    env.pop("SYMSHAPE_LOGS", None)
    code = textwrap.dedent('''
        import numpy as np, symshape as ss
        def f(x):
            assert x.shape[0] <= 8
            return x
        ss.export(f, (np.ones(4),), dynamic_shapes={"x": (ss.Dim.AUTO,)})
        ''')
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "user stack for guard" in p.stderr


def test_exported_program_is_importable_for_annotations():
    import numpy as np
    import symshape as ss
    from symshape import ExportedProgram
    ep = ss.export(lambda x: x + 1, (np.ones(3),))
    assert isinstance(ep, ss.ExportedProgram) and ExportedProgram is ss.ExportedProgram
    assert "ExportedProgram" in ss.__all__
