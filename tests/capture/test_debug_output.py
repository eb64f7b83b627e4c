"""Debug output stays symbolic: text of a size that only reaches print, logging, warnings,
stream writes, assert and exception messages shows the user's names (or the example value
under a format spec / %d) and guards nothing; text that becomes data (a dict key, a
comparison, a parsed number, a variable, a user function's argument) still specialises with
a guard and a warning."""
import io
import logging
import sys
import warnings

import numpy as np
import pytest

import symshape as ss
from symshape import Dim

DYN = Dim.DYNAMIC
X = np.ones((5, 3))
LOG = logging.getLogger("test_debug_output.user")


def export_dynamic(f, x=X):
    """Both axes DYNAMIC (any specialisation is a violation); module() matches eager."""
    ep = ss.export(f, (x,), dynamic_shapes={"x": (DYN, DYN)})
    assert str(ep.input_shapes["x"]) == "(s0, s1)"
    for shape in ((2, 7), (9, 4)):
        y = np.arange(float(np.prod(shape))).reshape(shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.testing.assert_array_equal(ep.module()(y), f(y))
    return ep


def specialised(f, caplog, what):
    """The size specialises with a logged warning naming ``what``, and DYNAMIC fails."""
    with caplog.at_level(logging.WARNING, logger="symshape.dynamic"):
        ep = ss.export(f, (X,), dynamic_shapes={"x": (Dim.AUTO, None)})
    assert ep.input_shapes["x"] == (5, 3)
    msgs = " ".join(r.getMessage() for r in caplog.records)
    assert "%s specialized x.shape[0] to 5" % what in msgs, msgs
    assert "test_debug_output.py" in msgs
    with pytest.raises(ss.ConstraintViolationError):
        ss.export(f, (X,), dynamic_shapes={"x": (DYN, None)})


# --------------------------------------------------------------------------- output
def test_print_of_shapes_and_sizes_shows_the_users_names(capsys):
    def f(x):
        print(f"tracing f with {x.shape}")
        print(x.shape, x.shape[0] * 2)
        print("rows: " + str(x.shape[0]), "half: %s" % (x.shape[1] / 2,), repr(x.shape[1]))
        print("{} by {}".format(*x.shape), "%d rows" % x.shape[0], f"{x.shape[0]:>3}|")
        return x * 2
    ep = ss.export(f, (X,), dynamic_shapes={"x": (DYN, DYN)})
    out = capsys.readouterr().out.splitlines()
    assert str(ep.input_shapes["x"]) == "(s0, s1)"
    assert out[0] == "tracing f with (x.shape[0], x.shape[1])"
    assert out[1] == "(x.shape[0], x.shape[1]) 2*x.shape[0]"
    assert out[2] == "rows: x.shape[0] half: x.shape[1] / 2 x.shape[1]"
    assert out[3] == "x.shape[0] by x.shape[1] 5 rows   5|"     # %d / a spec: the example
    assert len(out) == 4                                            # printed once, at trace


def test_logging_warnings_and_streams_stay_symbolic(caplog, capsys):
    def f(x):
        logging.getLogger("test_debug_output").debug("shape %s", x.shape)
        LOG.info("rows %d, cols %s", x.shape[0], x.shape[1])
        LOG.warning(f"seen {x.shape[1]}")
        warnings.warn(f"odd rows {x.shape[0]}")
        sys.stderr.write(f"stderr {x.shape}\n")
        return x + 1
    with caplog.at_level(logging.DEBUG, logger="test_debug_output"), \
            pytest.warns(UserWarning, match=r"odd rows x\.shape\[0\]"):
        export_dynamic(f)
    msgs = [r.getMessage() for r in caplog.records if r.name.startswith("test_debug_output")]
    assert msgs[:3] == ["shape (x.shape[0], x.shape[1])", "rows 5, cols x.shape[1]",
                        "seen x.shape[1]"]
    assert "stderr (x.shape[0], x.shape[1])" in capsys.readouterr().err


def test_assert_and_exception_messages_stay_symbolic():
    def f(x):
        assert x.shape[0] >= 1, f"need rows, got {x.shape}"
        if x.ndim != 2:
            raise ValueError(f"expected a matrix, got {x.shape}")
        return x.sum(axis=0)
    export_dynamic(f)

    def g(x):
        raise ValueError(f"cannot handle {x.shape[0]} rows")
    with pytest.raises(ValueError, match=r"cannot handle x\.shape\[0\] rows"):
        ss.export(g, (X,), dynamic_shapes={"x": (DYN, DYN)})


def test_a_method_printing_through_self_logger():
    class Layer:
        def __init__(self):
            self.log = logging.getLogger("test_debug_output.layer")

        def __call__(self, x):
            self.log.debug("layer input %s", x.shape)
            self.log.debug(f"layer input {x.shape}")
            return x * 3
    export_dynamic(Layer())


# --------------------------------------------------------------------------- data
def test_text_used_as_a_dict_key_specialises(caplog):
    def f(x):
        table = {"5": 1.0}
        return x * table.get(str(x.shape[0]), 2.0)
    specialised(f, caplog, "str()")


def test_text_compared_specialises(caplog):
    def f(x):
        return x * (2.0 if f"{x.shape[0]}" == "5" else 3.0)
    specialised(f, caplog, "format()")


def test_text_parsed_back_specialises(caplog):
    def f(x):
        return x * int(repr(x.shape[0]))
    specialised(f, caplog, "repr()")


def test_text_kept_in_a_variable_specialises_even_if_printed_later(caplog):
    def f(x):
        msg = f"{x.shape[0]} rows"
        print(msg)
        return x * len(msg)
    specialised(f, caplog, "format()")


def test_a_user_function_named_like_output_is_data(caplog):
    seen = []

    def print(*args):          # noqa: A001 - shadows the builtin on purpose
        seen.append(args)
        return len(args[0])

    def f(x):
        return x * print(f"{x.shape[0]}")
    specialised(f, caplog, "format()")

    class Recorder:
        def info(self, msg):
            seen.append(msg)

    rec = Recorder()

    def g(x):
        rec.info(f"{x.shape[0]}")
        return x + 1
    specialised(g, caplog, "format()")


def test_print_into_a_buffer_is_data(caplog):
    buf = io.StringIO()

    def f(x):
        print(x.shape[0], file=buf)
        return x + 1
    specialised(f, caplog, "str()")


# --------------------------------------------------------------------------- symshape check
def test_symshape_check_passes_a_function_that_prints_its_shapes(tmp_path, capsys,
                                                                 monkeypatch):
    import json
    import textwrap

    from symshape.cli import main
    (tmp_path / "noisy.py").write_text(textwrap.dedent('''\
        import logging

        import numpy as np
        import symshape as ss


        @ss.exportable(example_inputs=(np.ones((4, 3)),),
                       dynamic_shapes={"x": (ss.Dim.DYNAMIC, ss.Dim("d"))})
        def f(x):
            print(f"tracing f with {x.shape}")
            logging.getLogger(__name__).warning("rows %s", x.shape[0])
            return x * x.shape[1]
        '''))
    monkeypatch.chdir(tmp_path)
    code = main(["check", "--format", "json"])
    out, err = capsys.readouterr()
    report = json.loads(out)                       # stdout is the report and only that
    assert code == 0, (out, err)
    assert report["exports"][0]["status"] == "ok"
    assert "tracing f with (x.shape[0], x.shape[1])" in err
    assert "tracing" not in out
    code = main(["check"])
    out, err = capsys.readouterr()
    assert code == 0 and "ok   noisy:f" in out and "tracing f with" not in out


def test_code_from_a_file_that_is_not_python_as_a_whole(tmp_path):
    """A code block of a Markdown page (or a notebook cell) runs with the page's path and
    lines: the page as a whole does not parse, the function's own block does, so what it
    prints stays symbolic there too."""
    page = tmp_path / "guide.md"
    src = ('def shout(x):\n'
           '    print(f"tracing shout with {x.shape}")\n'
           '    return x * 2\n')
    page.write_text("# A guide\n\nSome *prose* that is not Python.\n\n```python\n" + src +
                    "```\n")
    import linecache
    linecache.updatecache(str(page))
    code = compile("\n" * 5 + src, str(page), "exec")
    ns = {}
    exec(code, ns)
    ep = ss.export(ns["shout"], (X,), dynamic_shapes={"x": (DYN, DYN)})
    assert ep.module()(np.ones((7, 3))).shape == (7, 3)
