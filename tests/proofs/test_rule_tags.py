"""The rule catalogue (``symshape/rules.py``) and the code agree: each entry's ``where`` names a
function tagged ``@rule(<its name>)``, and every tagged function is the ``where`` of each rule
it names.  Moving or renaming a rewrite without its row (or a row without its function) fails
here, not silently in the proofs' coverage."""
from repo_paths import REPO
import inspect
import sys

import pytest

ROOT = REPO
if ROOT not in sys.path:          # proofs/ lives at the top of the repository
    sys.path.insert(0, ROOT)

import symshape  # noqa: E402,F401  (registers every engine tag)
import symshape.capture  # noqa: E402,F401  (and the op modules')
from proofs.coverage import resolve  # noqa: E402
from symshape import rules  # noqa: E402
from symshape.rules import BY_NAME, RULES, TAGGED, rule  # noqa: E402

def _fn(where: str):
    return inspect.unwrap(resolve(where)[2])


@pytest.mark.parametrize("r", RULES, ids=[r.name for r in RULES])
def test_each_catalogue_entry_names_a_function_carrying_its_tag(r):
    fn = _fn(r.where)
    assert callable(fn), r.where
    assert r.name in getattr(fn, "__rules__", ()), (
        "%s is applied by %s, which is not tagged @rule(%r)" % (r.name, r.where, r.name))


def test_every_tagged_function_is_where_its_rules_say():
    for name, fns in TAGGED.items():
        assert name in BY_NAME, "@rule(%r) names no rule of the catalogue" % name
        assert len(fns) == 1, "%s is tagged on %d functions: %s" % (
            name, len(fns), [f.__qualname__ for f in fns])
        assert _fn(BY_NAME[name].where) is fns[0], (
            "%s is tagged on %s.%s but the catalogue says %s" % (
                name, fns[0].__module__, fns[0].__qualname__, BY_NAME[name].where))


def test_the_tag_returns_the_function_itself(monkeypatch):
    monkeypatch.setattr(rules, "TAGGED", {})

    def step(x):
        return x
    assert rule("demo.one", "demo.two")(step) is step
    assert step.__rules__ == ("demo.one", "demo.two")
    assert rules.TAGGED == {"demo.one": [step], "demo.two": [step]}
