"""Each proof declares what it quantifies over (``proofs/classes.py``), and a proof declared
"every input" enumerates no samples: its source and the ``proofs/`` helpers it calls hold no
loop over literal values, constant range, ``itertools`` sweep, stepped slice or sample /
grid helper."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:          # proofs/ lives at the top of the repository
    sys.path.insert(0, ROOT)

import proofs  # noqa: E402
from proofs.classes import EVERY, KINDS, sample_enumerations  # noqa: E402

REGISTRY = proofs.load()

#: proofs over every input of their rule's domain (the classification's own floor: a proof
#: moved back to samples fails here and must say why in the change that moves it)
EVERY_FLOOR = 132


def test_every_proof_declares_its_class():
    undeclared = sorted(n for n in REGISTRY if n not in proofs.OVER)
    assert not undeclared, "proofs that declare nothing (over=every/bounded/samples): %s" \
        % undeclared
    for name, over in proofs.OVER.items():
        assert over.kind in KINDS and over.what.strip(), (name, over)


@pytest.mark.parametrize("rule", sorted(n for n in REGISTRY
                                        if proofs.OVER.get(n, (None,))[0] == EVERY))
def test_a_proof_over_every_input_enumerates_no_samples(rule):
    found = sample_enumerations(REGISTRY[rule])
    assert not found, ("%s is declared over every input but enumerates samples (declare "
                       "it bounded or samples, or make it symbolic):\n  %s"
                       % (rule, "\n  ".join(found)))


def test_the_count_of_proofs_over_every_input_keeps_its_floor():
    assert proofs.class_counts()[EVERY] >= EVERY_FLOOR


def _helper(xs):
    return [x for x in xs]


def test_the_check_finds_each_way_of_sampling():
    from symshape.algebra import expr as E
    conds = list(range(9))

    def literal_values():
        for b in (1, 2, 3):
            _helper([b])

    def built_expressions():
        s = E.Sym(990).expr
        return [e for e in (2 * s + 1, E.floordiv(s, 3))]

    def constant_range():
        return [n for n in range(1, 5)]

    def stepped():
        return conds[::2]

    def sweep():
        import itertools
        return list(itertools.product("ab", repeat=2))

    def via_helper():
        return _sample_exprs()

    def through_a_called_helper():
        return _sampling_helper()

    for fn in (literal_values, built_expressions, constant_range, stepped, sweep, via_helper,
               through_a_called_helper):
        assert sample_enumerations(fn), fn.__name__

    def symbolic():
        import z3
        a, b = z3.Ints("a b")
        for op in (min, max):                   # a finite domain of code alternatives
            op(a, b)
        return [x for x in (a, b)]
    assert sample_enumerations(symbolic) == []


def _sample_exprs():
    return [1]


def _sampling_helper():
    return [x for x in [1, 2]]


def test_python_m_proofs_prints_the_class_counts():
    out = subprocess.run([sys.executable, "-m", "proofs", "--classes"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    counts = proofs.class_counts()
    assert ("proof classes: %d every input, %d bounded, %d samples"
            % (counts[EVERY], counts["bounded"], counts["samples"])) in out


def test_the_documented_class_counts_are_the_generated_ones():
    with open(os.path.join(ROOT, "docs", "contracts.md")) as f:
        doc = " ".join(f.read().split())
    assert proofs.classes_sentence() in doc, (
        "docs/contracts.md must carry the generated sentence: %s" % proofs.classes_sentence())
