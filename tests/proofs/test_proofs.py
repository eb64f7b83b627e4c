"""The Z3 proofs of the engine's rules (``proofs/``): every rule of ``symshape/rules.py``
has exactly one proof, every proof names a rule, and every proof passes."""
from repo_paths import REPO
import os
import sys

import pytest
import z3

ROOT = REPO
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


def test_every_transfer_function_and_rewrite_constructor_is_a_rule():
    """A new transfer function (``vr_*``, ``bound*``) or division / Min / Max constructor
    added to the code without a row in the rule table (and so without a proof) fails here."""
    from symshape.algebra import expr as E
    from symshape.algebra import ranges as RG
    named = {r.where.split(":")[1] for r in RULES if r.where.startswith(("symshape.algebra.ranges",
                                                                          "symshape.algebra.expr"))}
    transfer = {n for n, v in vars(RG).items() if callable(v) and getattr(v, "__module__", "")
                == RG.__name__ and (n.startswith("vr_") or n == "bound")}
    rewrites = {"floordiv", "mod", "ceildiv", "_minmax", "_exact_quotient", "subs",
                "format_py", "_fold_const_into_floordiv"}
    assert {n for n in rewrites if not hasattr(E, n)} == set()
    assert transfer - named == set(), "transfer functions without a rule: %s" % (transfer - named)
    assert rewrites - named == set(), "rewrites without a rule: %s" % (rewrites - named)


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




# ---------------------------------------------------------------------------- proofs of the code
from proofs.code import STATS, prove_code  # noqa: E402
from proofs.coverage import Coverage  # noqa: E402


def test_prove_code_refuses_a_claim_that_holds_whatever_the_code_computes():
    # concatenate's old proof: a0 + a1 + a2 == a0 + a1 + a2 says nothing about the code
    a0, a1, a2 = z3.Ints("a0 a1 a2")
    with pytest.raises(ProofFailure, match="whatever the code computes"):
        prove_code(lambda v: a0 + a1 + a2 == a0 + a1 + a2, [a0 + a1 + a2])
    with pytest.raises(ProofFailure, match="whatever the code computes"):
        prove_code(lambda v: z3.Or(v == 1, v != 1), [z3.IntVal(1)])


def test_prove_code_refuses_contradictory_hypotheses():
    x, = z3.Ints("x")
    with pytest.raises(ProofFailure, match="hypotheses contradict"):
        prove_code(lambda v: v == x, [x], x > 2, x < 1)


def test_prove_code_counts_and_refutes():
    x, = z3.Ints("x")
    before = STATS["code_claims"]
    prove_code(lambda v: v == x + 1, [x + 1])
    assert STATS["code_claims"] == before + 1
    with pytest.raises(ProofFailure, match="counterexample"):
        prove_code(lambda v: v == x + 1, [x + 2])


def test_a_rule_changed_in_the_code_fails_its_proof(monkeypatch):
    """The proofs read the code's output: a wrong transfer function or rewrite fails them
    (a restatement of the rule beside the code would have kept passing)."""
    from symshape.algebra import expr as E
    from symshape.algebra import ranges as RG
    good_add = RG.vr_add
    monkeypatch.setattr(RG, "vr_add", lambda a, b: RG.ValueRange(
        a.lower + b.lower + 1, max(a.upper + b.upper, a.lower + b.lower + 1)))
    assert not proofs.run_one("range.add").ok
    monkeypatch.setattr(RG, "vr_add", good_add)
    good_mod = E.mod

    def off_by_one(a, b):
        got = good_mod(a, b)
        # an int divisor, concrete or symbolic (the proof runs mod on symbolic ints)
        return E.add(got, 1) if not isinstance(b, E.Expr) and b == 3 and type(a) is E.Expr \
            else got
    monkeypatch.setattr(E, "mod", off_by_one)
    assert not proofs.run_one("mod.coeff_reduce").ok


def test_a_min_max_range_wrong_only_at_arity_five_fails_its_proof(monkeypatch):
    """range.min / range.max hold for every arity by induction on the code's fold: an n-ary
    function that drops the arguments after the fourth (right at every arity up to 4, the
    old bound) is no fold of its step and fails, as does a wrong step."""
    from functools import reduce
    from symshape.algebra import ranges as RG

    def first_four(args):
        return reduce(RG.min_step, list(args)[:4])
    monkeypatch.setattr(RG, "vr_min", first_four)
    assert not proofs.run_one("range.min").ok
    monkeypatch.undo()

    def looped(args):
        args = list(args)
        acc = args[0]
        for a in args[1:5]:
            acc = RG.max_step(acc, a)
        return acc
    monkeypatch.setattr(RG, "vr_max", looped)
    assert not proofs.run_one("range.max").ok
    monkeypatch.undo()
    monkeypatch.setattr(RG, "min_step", lambda acc, a: RG.ValueRange(
        min(acc.lower, a.lower) + 1, max(acc.upper, a.upper) + 1))
    assert not proofs.run_one("range.min").ok


def test_a_min_max_encoding_wrong_only_at_arity_five_fails_its_proof(monkeypatch):
    """z3bridge.minmax_encoding holds for every arity by induction on the code's fold: an
    encoder that drops the arguments after the fourth (right at every arity up to 4, and
    the old check went to 8 only) fails, as does a dispatch that slices the list."""
    from functools import reduce
    from symshape.reasoning import z3bridge as ZB

    def first_four(args):
        return reduce(ZB.min_step, list(args)[:4])
    monkeypatch.setattr(ZB, "min_term", first_four)
    assert not proofs.run_one("z3bridge.minmax_encoding").ok
    monkeypatch.undo()
    good = ZB.minmax_term
    monkeypatch.setattr(ZB, "minmax_term", lambda kind, args: good(kind, args[:9]))
    assert not proofs.run_one("z3bridge.minmax_encoding").ok



def _mutate(monkeypatch, module, name, old, new):
    """Replace ``module.name`` by the function its source gives with ``old`` -> ``new``
    (its text kept where ``inspect.getsource`` finds it, for the proofs that read code)."""
    import ast
    import inspect
    import linecache
    import textwrap
    src = textwrap.dedent(inspect.getsource(getattr(module, name)))
    assert src.count(old) == 1
    tree = ast.parse(src.replace(old, new))
    tree.body[0].decorator_list = []    # a second @rule tag would outlive the test
    src = ast.unparse(tree) + "\n"
    where = "<%s mutated>" % name
    linecache.cache[where] = (len(src), None, src.splitlines(True), where)
    scope = dict(vars(module))
    exec(compile(src, where, "exec"), scope)  # noqa: S102
    monkeypatch.setattr(module, name, scope[name])


def _reasoning():
    from symshape.reasoning import z3bridge
    return z3bridge


def _sympy_form():
    from symshape.contract import sympy_form
    return sympy_form


def _symint():
    from symshape.sizes import symint
    return symint


def _expr():
    from symshape.algebra import expr
    return expr


def _decision():
    from symshape.reasoning import decision
    return decision


def _ranges():
    from symshape.algebra import ranges
    return ranges


@pytest.mark.parametrize("module, name, old, new, rule", [
    (_reasoning, "implies", "for p in premises]", "for p in premises[:2]]", "z3bridge.implies"),
    (_reasoning, "implies", "for p in premises]",
     "for p in premises if p is not premises[-1]]", "z3bridge.implies"),
    (_reasoning, "implies", "    g = enc.cond(goal)\n", "    g = enc.cond(goal)\n    hyp = hyp[:2]\n",
     "z3bridge.implies"),
    (_sympy_form, "_atom", "return kind(*args, evaluate=False)",
     "return kind(*args[:3], evaluate=False)", "sympy.bridge"),
    (_symint, "_sym_minmax", "    for a in args:\n", "    for a in args[:3]:\n",
     "symint.operators"),
    (_symint, "_sym_minmax", "        hints.append(p[1])\n",
     "        hints.append(p[1])\n        if len(exprs) > 3:\n            break\n",
     "symint.operators"),
    (_expr, "undominated", "    for x in args:\n", "    for x in list(args)[:4]:\n",
     "fold.minmax_dominance"),
    (_decision, "decide_ranges", "for a in c.args]", "for a in c.args[:2]]", "decide.by_range"),
    (_ranges, "bound", "    for term, coeff in x.terms:\n", "    for term, coeff in x.terms[:3]:\n",
     "range.bound"),
    (_expr, "_exact_quotient", "            rest.remove(atom)\n",
     "            rest.remove(atom)\n            if len(out) > 2:\n                return None\n",
     "floordiv.exact_quotient"),
])
def test_reading_only_some_items_of_a_list_fails_its_proof(monkeypatch, module, name, old, new,
                                                             rule):
    """Proofs run on two or three items cover every number of them because the code reads
    the list whole, each item alike (``proofs/reads.py``): a function that keeps only some
    of them (right for as many as the proof builds) fails."""
    _mutate(monkeypatch, module(), name, old, new)
    r = proofs.run_one(rule)
    assert not r.ok and ("does not cover" in r.message or "early" in r.message), r.message


def test_a_sound_but_inexact_bound_of_one_linear_term_fails_range_bound(monkeypatch):
    """project.exact stands on bound() being exact for one linear term c*s + k: a sum one
    lower than it could be (still sound) fails range.bound."""
    from symshape.algebra import ranges as RG
    good = RG.vr_add

    def widened(a, b):
        r = good(a, b)
        return RG.ValueRange(r.lower - 1, r.upper)
    monkeypatch.setattr(RG, "vr_add", widened)
    r = proofs.run_one("range.bound")
    assert not r.ok and "exact" in r.message, r.message


def test_every_planted_mutant_still_finds_the_code_it_changes():
    """``python -m proofs.mutants`` plants each mutant by replacing its text: a text the
    code no longer holds (moved, re-indented) would plant nothing and pass unnoticed."""
    from proofs.mutants import MUTANTS
    stale = []
    for m in MUTANTS:
        with open(os.path.join(ROOT, m.path)) as f:
            if f.read().count(m.old) != 1:
                stale.append("%s (%s)" % (m.name, m.path))
    assert not stale, "mutants whose text the code no longer holds once: %s" % stale

# every proof runs once, here: each must make claims on the code's own output, and together
# they must reach every way out of every rewrite function (a `return` no proof reaches is a
# rule the code applies without a proof)
_COVERAGE = Coverage()
_RAN: set = set()


@pytest.mark.parametrize("rule", [r.name for r in RULES])
def test_proof(rule):
    with _COVERAGE:
        result = proofs.run_one(rule)
    _RAN.add(rule)
    assert result.ok, "%s (%s): %s" % (rule, BY_NAME[rule].statement, result.message)
    assert result.code_claims > 0, (
        "%s is proven only as mathematics beside the code: build its claim from what the "
        "implementation computes (proofs.code.prove_code)" % rule)


def test_every_return_of_a_rewrite_function_is_reached_by_a_proof():
    missing = [r.name for r in RULES if r.name not in _RAN]
    if missing:                                # run alone: run the proofs here
        with _COVERAGE:
            for name in missing:
                proofs.run_one(name)
    missed = _COVERAGE.missed()
    assert not missed, ("rewrites the code performs that no proof reaches (add a case to the "
                        "rule's proof, or a rule):\n  " + "\n  ".join(missed))


def test_each_unreachable_exemption_still_names_a_return():
    """An exemption outlives its code only as a stale entry: each must still sit just
    before a ``return`` of its rule function."""
    import inspect
    from proofs.coverage import UNREACHABLE, resolve
    for where, guards in UNREACHABLE.items():
        src = [line.strip() for line in inspect.getsourcelines(
            inspect.unwrap(resolve(where)[2]))[0]]
        for guard in guards:
            hits = [i for i, line in enumerate(src[:-1]) if line == guard]
            assert any(src[i + 1].startswith("return") for i in hits), (where, guard)


def _fails_with_counterexample(rule):
    result = proofs.run_one(rule)
    assert not result.ok and "counterexample" in result.message, result.message


def test_a_contract_rule_changed_in_the_code_fails_its_proof(monkeypatch):
    """The exact-contract proofs read the code's output too: a projection one too narrow,
    a split range off by one, a Min / Max folded without reason, a flipped Max equation or
    a fact dropped though the ranges do not imply it each fail their proof."""
    import symshape.algebra.simplify as SIMP
    import symshape.reasoning.solver as SE
    import symshape.reasoning.projection as PJ
    from symshape.algebra import ranges as RG
    from symshape.algebra.ranges import ValueRange
    good_project = PJ.project

    def narrow(goal, facts, ranges, *a, **k):
        got = good_project(goal, facts, ranges, *a, **k)
        return ValueRange(got.lower + 1, got.upper) if got.lower + 1 <= got.upper else got
    monkeypatch.setattr(PJ, "project", narrow)
    _fails_with_counterexample("project.exact")
    monkeypatch.undo()

    good_split = RG._divmod_split

    def off_by_one(x, sym_range):
        got = good_split(x, sym_range)
        return None if got is None else ValueRange(got.lower + 1, got.upper + 1)
    monkeypatch.setattr(RG, "_divmod_split", off_by_one)
    _fails_with_counterexample("range.divmod_split")
    monkeypatch.undo()

    monkeypatch.setattr(SIMP, "dominates_by_facts", lambda env, kind, y, x: True)
    _fails_with_counterexample("fold.minmax_by_facts")
    monkeypatch.undo()

    good_equal = SE.minmax_equal
    from symshape.algebra import expr as E
    from symshape.algebra import relations as R

    def flip(c):                                  # y <= a  ->  y >= a, in every conjunct
        if isinstance(c, R.BoolOp):
            return R.combine(c.op, [flip(a) for a in c.args])
        return R.make(c.op, E.scale(c.expr, -1))
    monkeypatch.setattr(SE, "minmax_equal", lambda e: None if good_equal(e) is None
                        else flip(good_equal(e)))
    _fails_with_counterexample("solve.minmax_equal")
    monkeypatch.undo()

    def drop_all(env):
        env.facts = []
    monkeypatch.setattr(SE, "drop_implied_facts", drop_all)
    _fails_with_counterexample("project.drop_implied")
