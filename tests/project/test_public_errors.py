"""Every error a user catches and every warning category a user filters is importable from
``symshape`` by name, is one class wherever the code raises it, and the errors page (and the
API reference) lists it."""
import os
import re
import warnings

import pytest

import symshape as ss

from repo_paths import REPO
ERRORS = ("UserError", "ConstraintViolationError", "GuardOnDataDependentError",
          "SharedInputsError", "StateGuardFailure", "RecompileError", "VerifyError",
          "ProjectError", "ValueDependentDtypeError")
WARNINGS = ("CompileFallbackWarning", "RecompileLimitWarning", "FrozenValueWarning")


def _read(*parts):
    with open(os.path.join(REPO, *parts), encoding="utf-8") as fh:
        return fh.read()


@pytest.mark.parametrize("name", ERRORS + WARNINGS)
def test_importable_by_name_and_public(name):
    ns = {}
    exec("from symshape import %s as got" % name, ns)      # noqa: S102 - the import itself
    assert ns["got"] is getattr(ss, name) and name in ss.__all__
    base = ss.UserError if name in ERRORS else UserWarning
    assert issubclass(ns["got"], base) and ns["got"].__doc__


@pytest.mark.parametrize("name", ERRORS + WARNINGS)
def test_the_errors_page_and_the_reference_list_it(name):
    page = _read("docs", "errors.md")
    table = page.split("\n## ", 1)[0]                # the summary table, before the sections
    assert "`%s`" % name in table, "the summary table of docs/errors.md lacks %s" % name
    assert re.search(r"^\.\. autoexception:: symshape\.%s$" % name,
                     _read("docs", "reference.md"), re.M), name


def test_one_class_wherever_it_is_raised():
    from symshape.capture.randomness import FrozenValueWarning
    from symshape.capture.state.stateprog import StateGuardFailure
    from symshape.cli.project import ProjectError
    from symshape.codegen.jit import (CompileFallbackWarning, RecompileError,
                                      RecompileLimitWarning)
    assert (StateGuardFailure, RecompileError, ProjectError, CompileFallbackWarning,
            RecompileLimitWarning, FrozenValueWarning) == tuple(
        getattr(ss, n) for n in ("StateGuardFailure", "RecompileError", "ProjectError",
                                 "CompileFallbackWarning", "RecompileLimitWarning",
                                 "FrozenValueWarning"))


def test_verify_error_names_its_job():
    assert "verify mode" in ss.VerifyError.__doc__
    assert "first differing output or state path" in " ".join(ss.VerifyError.__doc__.split())


def test_a_warning_is_caught_by_its_public_name():
    import numpy as np

    def f(x):
        print(end="")                                # a graph break: compiled in two parts
        return x + 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ss.compile(f)(np.ones(3))
    assert any(issubclass(w.category, ss.CompileFallbackWarning) for w in caught)


def test_a_state_guard_failure_is_caught_by_its_public_name():
    import numpy as np

    class Scale:
        def __init__(self):
            self.k = 2

        def __call__(self, x):
            return x * 2 if self.k == 2 else x

    s = Scale()
    ep = ss.export(s, (np.ones(3),))
    s.k = 3
    with pytest.raises(ss.StateGuardFailure):
        ep.module()(np.ones(3))
