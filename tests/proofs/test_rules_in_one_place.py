"""Each rewrite rule is reachable from its one name: its catalogue row
(``symshape/rules.py``), the function tagged ``@rule(NAME)`` that applies it, and the proof
registered ``@proves(NAME)`` (``python -m proofs --rule NAME`` prints the three); and the rule
count ``docs/contracts.md`` gives is the generated one (``python -m proofs --docs``)."""
from repo_paths import REPO
import importlib
import os
import subprocess
import sys

import pytest

if REPO not in sys.path:          # proofs/ lives at the top of the repository
    sys.path.insert(0, REPO)

import proofs  # noqa: E402
from symshape.rules import BY_NAME, RULES, TAGGED  # noqa: E402

importlib.import_module("symshape.capture")     # registers the op modules' tags

REGISTRY = proofs.load()


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_each_rule_has_an_implementation_and_a_proof(name):
    v = proofs.view(name)
    assert name in TAGGED, "%s: no function is tagged @rule(%r)" % (name, name)
    assert v.proof != "none", "%s: no proof registered @proves(%r)" % (name, name)
    assert v.over is not None, "%s: its proof declares no class" % name


def test_every_tag_and_every_proof_names_a_catalogue_rule():
    assert sorted(set(TAGGED) - set(BY_NAME)) == []
    assert sorted(set(REGISTRY) - set(BY_NAME)) == []


def test_the_documented_rule_count_is_the_generated_one():
    with open(os.path.join(REPO, "docs", "contracts.md")) as f:
        doc = " ".join(f.read().split())
    assert proofs.rules_phrase() in doc, (
        "docs/contracts.md must say %s (python -m proofs --docs writes it)"
        % proofs.rules_phrase())
    assert str(len(RULES)) in proofs.rules_phrase()


def test_python_m_proofs_rule_prints_row_implementation_and_proof():
    out = subprocess.run([sys.executable, "-m", "proofs", "--rule", "floordiv.nested"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert BY_NAME["floordiv.nested"].statement in out
    assert "symshape.algebra.expr:floordiv" in out and "proofs.divmod_every:" in out
