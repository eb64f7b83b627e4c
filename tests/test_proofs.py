"""The Z3 proofs of the engine's rules (``proofs/``): every rule of ``symshape/rules.py``
has exactly one proof, every proof names a rule, and every proof passes."""
import os
import sys

import pytest
import z3

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:          # proofs/ lives at the top of the repository
    sys.path.insert(0, ROOT)

import proofs  # noqa: E402
from proofs.pyint import ProofFailure, Py, prove  # noqa: E402
from symshape.rules import BY_NAME, RULES  # noqa: E402

REGISTRY = proofs.load()


def test_every_rule_has_exactly_one_proof_and_every_proof_names_a_rule():
    # a second proof of the same rule raises at registration, so one entry means one proof
    missing = [r.name for r in RULES if r.name not in REGISTRY]
    orphans = sorted(n for n in REGISTRY if n not in BY_NAME)
    assert not missing, "rules without a proof: %s" % missing
    assert not orphans, "proofs of rules that symshape/rules.py does not list: %s" % orphans
    assert len(BY_NAME) == len(RULES), "duplicate rule names"


def test_rules_table_is_readable():
    for r in RULES:
        assert r.name.count(".") == 1 and r.name == r.name.strip(), r
        assert ":" in r.where and r.statement.strip(), r


def test_a_second_proof_of_a_rule_is_refused():
    with pytest.raises(RuntimeError, match="two proofs"):
        proofs.proves(RULES[0].name)(lambda: None)


def test_prove_refutes_z3_division_as_python_floor_division():
    # the trap the helpers exist for: Z3's integer / is not Python's // for b < 0
    P = Py()
    a, b = z3.Ints("a b")
    with pytest.raises(ProofFailure, match="counterexample"):
        P.prove(P.floordiv(a, b) == a / b, b != 0)
    P.prove(P.floordiv(a, b) == a / b, b > 0)


def test_prove_reports_vacuous_hypotheses():
    x, = z3.Ints("x")
    with pytest.raises(ProofFailure, match="vacuous"):
        prove(x == 1, x > 2, x < 1)


@pytest.mark.parametrize("rule", [r.name for r in RULES])
def test_proof(rule):
    result = proofs.run_one(rule)
    assert result.ok, "%s (%s): %s" % (rule, BY_NAME[rule].statement, result.message)
