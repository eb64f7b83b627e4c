"""Mutation testing as a gate: cosmic-ray (a maintained mutation tool) run on the engine's
and the contract's soundness code, with the proofs (and the tests of the published views)
as the test command; ``docs/mutation_report.md`` is what it writes.

    pip install -e '.[mutation]'
    python -m proofs.mutation [--out DIR] [--only NAME ...] [--report docs/mutation_report.md]

cosmic-ray mutates the source files *in place* (one mutant at a time, restored after
each): run it on a clean checkout and nothing else in that tree meanwhile.  Each target
below names a module, the functions in it whose mutants are run (cosmic-ray's
``definition_name``), and the test command that must kill them: ``python -m proofs -x``
on the rules of that code (stopping at the first failing proof), then, where the code
publishes a view, the tests of that view.

Operators left out: ``ReplaceBinaryOperator_*`` to ``/``, ``**``, shifts and bitwise
operators (on ints and infinities they raise a ``TypeError`` at once or turn the result
into a float: killed by any run, they only cost time), and ``RemoveDecorator`` (the
``@rule`` tag has no behaviour; ``tests/test_rule_tags.py`` catches its removal).
"""
from __future__ import annotations

import argparse
import collections
import datetime
import os
import re
import subprocess
import sys
from typing import Dict, List, NamedTuple, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EXCLUDED_OPERATORS = (r"core/ReplaceBinaryOperator_\w+_(Div|Pow|LShift|RShift|BitOr|BitAnd|"
                      r"BitXor)$", r"core/RemoveDecorator$")


class Target(NamedTuple):
    name: str
    module: str                  # path relative to the root
    functions: Tuple[str, ...]   # definition names whose mutants run
    proofs: Tuple[str, ...]      # rules given to ``python -m proofs -x``
    tests: Tuple[str, ...] = ()  # pytest files run after the proofs
    helpers: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()   # helper -> the rules it serves


RANGE_PROOFS = ("range.add", "range.scale", "range.mul", "range.pow", "range.floordiv",
                "range.mod", "range.min", "range.max")

TARGETS: List[Target] = [
    Target("ranges", "symshape/ranges.py",
           ("vr_add", "vr_scale", "vr_mul", "vr_pow", "_ipow", "_fdiv", "vr_floordiv",
            "vr_mod", "vr_min", "vr_max"), RANGE_PROOFS, ("tests/test_range_exactness.py",),
           (("_fdiv", ("range.floordiv",)), ("_ipow", ("range.pow",)))),
    Target("sympy_bridge", "symshape/contract/sympy_form.py",
           ("to_sympy", "_plain", "_atom", "public", "agrees", "assumptions"),
           ("sympy.",), ("tests/test_contract_views.py",)),
    Target("guards", "symshape/contract/writer.py",
           ("_bind", "_dim", "_flush"),
           ("check.emitted", "check.text"),
           ("tests/test_contract_views.py", "tests/test_check_records.py",
            "tests/test_guards_codegen.py", "tests/test_check_render.py")),
    Target("constraint_set", "symshape/contract/constraint_set.py", ("roots",),
           ("check.emitted", "check.text", "contract.exact_range"),
           ("tests/test_contract_views.py", "tests/test_check_records.py",
            "tests/test_guards_codegen.py", "tests/test_check_render.py")),
    Target("exact_ranges", "symshape/contract/exact_ranges.py",
           ("connected_facts", "exact_range", "published_ranges"),
           ("check.emitted", "check.text", "contract.exact_range"),
           ("tests/test_contract_views.py", "tests/test_check_records.py",
            "tests/test_guards_codegen.py", "tests/test_check_render.py")),
    Target("check_ir", "symshape/contract/render_python.py",
           ("_lit", "test_and_args", "cond_py"), ("check.emitted", "check.text"),
           ("tests/test_check_render.py", "tests/test_contract_views.py",
            "tests/test_check_records.py", "tests/test_guards_codegen.py")),
    Target("simplify", "symshape/simplify.py",
           ("fold_small_numerator", "fold_minmax"), ("fold.small_numerator",
                                                     "fold.minmax_dominance")),
    # the one Min / Max dominance routine and the one ceiling division (issue 34 item 1)
    Target("expr", "symshape/expr.py", ("undominated", "_offset_le", "_offset_ge", "ceildiv"),
           ("fold.minmax_dominance", "minmax.offset_dominance", "ceildiv.def"),
           helpers=(("_offset_le", ("minmax.offset_dominance",)),
                    ("_offset_ge", ("minmax.offset_dominance",)))),
]


def _config(t: Target, python: str, path: str, root: str) -> None:
    """The session's config, its test command a script beside it (cosmic-ray runs the
    command without a shell): ``gate`` below, then the view tests."""
    script = path[:-len(".toml")] + "_gate.sh"
    pristine = path[:-len(".toml")] + ".orig.py"
    with open(os.path.join(root, t.module)) as f, open(pristine, "w") as g:
        g.write(f.read())
    with open(script, "w") as f:
        f.write("set -e\n%s -m proofs.mutation --gate %s --pristine %s --root %s\n"
                % (python, t.name, pristine, root))
        if t.tests:
            f.write("%s -m pytest -q -x -p no:cacheprovider %s\n" % (python, " ".join(t.tests)))
    with open(path, "w") as f:
        f.write('[cosmic-ray]\nmodule-path = "%s"\ntimeout = 300.0\nexcluded-modules = []\n'
                'test-command = "bash %s"\n\n[cosmic-ray.distributor]\nname = "local"\n'
                % (t.module, script))


def _select(session: str, t: Target) -> Tuple[int, int]:
    """Skip every mutant outside the target's functions or of an excluded operator
    (cosmic-ray's own SKIPPED outcome); (kept, skipped)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult
    excluded = [re.compile(p) for p in EXCLUDED_OPERATORS]
    kept = skipped = 0
    with use_db(session, WorkDB.Mode.open) as db:
        for item in list(db.pending_work_items):
            m = item.mutations[0]
            fn = (m.definition_name or "").split(".")[-1]
            if fn in t.functions and not any(p.match(m.operator_name) for p in excluded):
                kept += 1
                continue
            skipped += 1
            db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                  output="outside the gate"))
    return kept, skipped


def thin(session: str, every: int) -> int:
    """Keep one pending mutant in ``every`` (in the order of their job ids, a fixed
    order), marking the others SKIPPED ("sampled out"): a deterministic sample when the
    whole set does not fit the time.  The number kept."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult
    kept = 0
    with use_db(session, WorkDB.Mode.open) as db:
        items = sorted(db.pending_work_items, key=lambda w: w.job_id)
        for k, item in enumerate(items):
            if k % every == 0:
                kept += 1
                continue
            db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                  output="sampled out"))
    return kept


def run_target(t: Target, out: str, python: str, root: str, resume: bool = False,
               sample: int = 1) -> str:
    """Init, select and execute one target's session (in ``root``; ``resume``: go on with
    the session already there); its sqlite path."""
    cfg = os.path.join(out, t.name + ".toml")
    session = os.path.join(out, t.name + ".sqlite")
    _config(t, python, cfg, root)
    cr = [python, "-m", "cosmic_ray.cli"]
    if not (resume and os.path.exists(session)):
        if os.path.exists(session):
            os.remove(session)
        subprocess.run(cr + ["init", cfg, session], cwd=root, check=True)
        kept, skipped = _select(session, t)
        print("%s: %d mutants to run (%d outside the gate)" % (t.name, kept, skipped),
              flush=True)
    if sample > 1:
        print("%s: %d pending mutants kept (one in %d)" % (t.name, thin(session, sample),
                                                            sample), flush=True)
    subprocess.run(cr + ["exec", cfg, session], cwd=root, check=True)
    return session


class Outcome(NamedTuple):
    target: str
    function: str
    operator: str
    line: int
    outcome: str          # killed / survived / incompetent / timeout
    diff: str


def outcomes(session: str, target: str) -> List[Outcome]:
    """The run mutants of a session (skipped ones left out)."""
    from cosmic_ray.work_db import WorkDB, use_db
    out = []
    with use_db(session, WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == "skipped":
                continue
            m = item.mutations[0]
            kind = result.test_outcome or result.worker_outcome
            out.append(Outcome(target, m.definition_name or "", m.operator_name,
                               m.start_pos[0], str(getattr(kind, "value", kind)),
                               result.diff or ""))
    return out


_SPELLING = ("The fully unevaluated fallback (`_plain`, or the divisor's power) is the "
             "same number at every point; the mutant changes only its spelling, which the "
             "rule leaves open.")

#: survivors judged equivalent (the mutant computes the same function, or the same value
#: under the rule's meaning), by (target, the line removed, the line added): why
EQUIVALENT: Dict[Tuple[str, str, str], str] = {
    ("check_ir", "if t is IntValue:", "if t == IntValue:"): "Classes compare by identity.",
    ("check_ir", "if t is GuardCheck:", "if t == GuardCheck:"): "Classes compare by identity.",
    ("check_ir", "if not isinstance(rec.label, str) and type(rec.rest) is int and not (",
     "if not isinstance(rec.label, str) and type(rec.rest) == int and not ("):
        "Classes compare by identity.",
    ("guards", "s = unbound[0]", "s = unbound[ -1]"):
        "The list has exactly one element here.",
    ("guards", "for f in self.facts:", "for f in []:"):
        "(in roots) every symbol of a guard is bound by an input (CheckWriter._fact "
        "refuses any other), so the inputs already listed it.",
    ("ranges", "if n % 2 == 0:", "if n % 2 <= 0:"):
        "n % 2 is 0 or 1: `<= 0` is `== 0`.",
    ("ranges", "if b.is_singleton and b.lower > 0 and not is_inf(a.lower) and not is_inf(a.upper):",
     "if b.is_singleton and b.lower > 1 and not is_inf(a.lower) and not is_inf(a.upper):"):
        "For m == 1 the general positive-divisor branch gives the same [0, 0].",
    ("ranges", "return INT_OO if (a > 0) == (b > 0) else NEG_INT_OO",
     "return INT_OO if (a > 0) is (b > 0) else NEG_INT_OO"):
        "Two bools: `is` and `==` agree.",
    ("ranges", "return INT_OO if (a > 0) == (b > 0) else NEG_INT_OO",
     "return INT_OO if (a >= 0) == (b > 0) else NEG_INT_OO"):
        "a is infinite on this line: a >= 0 exactly when a > 0.",
    ("guards", "progress = True", "progress = False", "after-relation"):
        "(in _flush, after a relation check) a pass that only checks relations binds "
        "nothing new, so a further pass could not progress either: the same checks, in "
        "the same order.",
    ("guards", "if len(unbound) == 1 and lin is not None and lin.get(unbound[0]) is not None:",
     "if len(unbound) == 1 and lin is not None and lin.get(unbound[0]) is None:"):
        "(in _dim) an unbound symbol of a linear size always has a coefficient, so the "
        "mutant sends every such size to pending, and the _flush right after binds it "
        "exactly as _dim would have: the same records in the same order.",
    ("guards", "if len(unbound) == 1 and lin is not None and lin.get(unbound[0]) is not None:",
     "if len(unbound) <= 1 and lin is not None and lin.get(unbound[0]) is not None:"):
        "No unbound symbol was handled just above (`if not unbound`): <= 1 is == 1 here.",
    ("check_ir", "if t is KeysCheck:", "if t == KeysCheck:"): "Classes compare by identity.",
    ("check_ir", "if t is ConfiguredCheck:", "if t == ConfiguredCheck:"):
        "Classes compare by identity.",
    ("ranges", "return x if (x > 0 or n % 2) else INT_OO",
     "return x if (x == 0 or n % 2) else INT_OO"):
        "x is an infinity on this line: never 0; for even n, int_oo**n and (-int_oo)**n "
        "are int_oo either way.",
    ("ranges", "return 0 if (a >= 0) == (b > 0) else -1",
     "return 0 if (a >= 0) == (b > 1) else -1"):
        "b is infinite on this line: b > 1 exactly when b > 0.",
    ("ranges", "return INT_OO if (a > 0) == (b > 0) else NEG_INT_OO",
     "return INT_OO if (a > 0) == (b > 1) else NEG_INT_OO"):
        "b is infinite on this line: b > 1 exactly when b > 0.",
    ("ranges", "if b.lower < 0:", "if b.lower != 0:"):
        "Reached only for a divisor range holding 0 (b.lower <= 0): != 0 is < 0 there.",
    ("sympy_bridge", "factors = [symbol(a, ranges) if type(a) is Sym else _atom(a, ranges, True)",
     "factors = [symbol(a, ranges) if type(a) == Sym else _atom(a, ranges, True)"):
        "The same test for a type.",
    ("sympy_bridge", "elif not is_inf(hi) and hi <= 0:", "elif not is_inf(hi) and hi == 0:"):
        "After `hi <= -1` failed, a finite hi is >= 0: `<= 0` is `== 0`.",
    ("sympy_bridge", "return terms[0] if len(terms) == 1 else sympy.Add(*terms, evaluate=False)",
     "return terms[0] if len(terms) == 0 else sympy.Add(*terms, evaluate=False)"): _SPELLING,
    ("sympy_bridge", "if c != 1 or not factors:", "if c != 0 or not factors:"): _SPELLING,
    ("sympy_bridge", 'terms = [sympy.Integer(x.const)] if x.const or not x.terms else []',
     'terms = [sympy.Integer(x.const)] if x.const or  x.terms else []'): _SPELLING,
    ("sympy_bridge", 'return terms[0] if len(terms) == 1 else sympy.Add(*terms, evaluate=False)',
     'return terms[0] if len(terms) == 1 else sympy.Add(*terms, evaluate=True)'): _SPELLING,
    ("sympy_bridge", 'quotient = sympy.Mul(args[0], sympy.Pow(args[1], -1, evaluate=not plain),',
     'quotient = sympy.Mul(args[0], sympy.Pow(args[1], -1, evaluate= plain),'): _SPELLING,
    ("sympy_bridge", 'if c != 1 or not factors:',
     'if c != 1 or  factors:'): _SPELLING,
    ("sympy_bridge", 'return terms[0] if len(terms) == 1 else sympy.Add(*terms, evaluate=False)',
     'return terms[ -1] if len(terms) == 1 else sympy.Add(*terms, evaluate=False)'): _SPELLING,
    ("sympy_bridge", 'factors.insert(0, sympy.Integer(c))',
     'factors.insert( -1, sympy.Integer(c))'): _SPELLING,
    ("sympy_bridge", 'terms.append(factors[0] if len(factors) == 1 else',
     'terms.append(factors[ -1] if len(factors) == 1 else'): _SPELLING,
    ("sympy_bridge", 'sympy.Mul(*factors, evaluate=False))',
     'sympy.Mul(*factors, evaluate=True))'): _SPELLING,
    ("sympy_bridge", 'kind = sympy.Min if a.kind == "Min" else sympy.Max',
     'kind = sympy.Min if a.kind >= "Min" else sympy.Max'):
        'The kinds left are "Min" and "Max" and only "Min" >= "Min".',
    ("ranges", "if a.lower // m == a.upper // m:       # no wrap-around inside the range",
     "if a.lower // m >= a.upper // m:       # no wrap-around inside the range"):
        "a.lower <= a.upper, so a.lower // m <= a.upper // m: `>=` holds exactly when `==` "
        "does.",
    ("sympy_bridge", 'if a.kind == "Mod":', 'if a.kind >= "Mod":'):
        'The kinds left are "Mod", "Min", "Max" and only "Mod" >= "Mod".',
    ("sympy_bridge", 'if a.kind == "Mod":', 'if a.kind is "Mod":'):
        "The kinds are interned string literals: `is` and `==` agree on them.",
    ("sympy_bridge", 'kind = sympy.Min if a.kind == "Min" else sympy.Max',
     'kind = sympy.Min if a.kind is "Min" else sympy.Max'):
        "The kinds are interned string literals: `is` and `==` agree on them.",
    ("sympy_bridge", "if type(x) is int:", "if type(x) == int:"):
        "The same test for a type.",
    ("sympy_bridge", "return kind(*args, evaluate=False)", "return kind(*args, evaluate=True)"):
        "Equivalent under the rule (sympy.public): sympy's Min / Max evaluation keeps the "
        "value, and a wrong one would be caught on the corner points and replaced by the "
        "unevaluated form; only the spelling of the published value may change.",
    ("sympy_bridge", "terms.append(factors[0] if len(factors) == 1 else",
     "terms.append(factors[0] if len(factors) < 1 else"):
        "A one-factor Mul(x, evaluate=False) is x itself in sympy.",
}


def _changed(diff: str) -> Tuple[str, str]:
    """The line a one-line mutant removes and the line it adds (stripped)."""
    old = next((l[1:].strip() for l in diff.splitlines()
                if l.startswith("-") and not l.startswith("---")), "")
    new = next((l[1:].strip() for l in diff.splitlines()
                if l.startswith("+") and not l.startswith("+++")), "")
    return old, new


def _equivalent(r: "Outcome"):
    """Why the survivor ``r`` is equivalent, or None.  An entry whose key has a fourth
    part holds only for the mutant whose diff shows that text (a line changed in two
    places, only one of them equivalent)."""
    key = (r.target,) + _changed(r.diff)
    if key in EQUIVALENT:
        return EQUIVALENT[key]
    for k, why in EQUIVALENT.items():
        if len(k) == 4 and k[:3] == key and _context(r.diff, k[3]):
            return why
    return None


#: the text around a mutated line that tells apart the places a 4-part key names
CONTEXTS = {"after-relation": "self.checks.append(RelationCheck(axis, var, e))"}


def _context(diff: str, name: str) -> bool:
    """Whether the line just before the mutated one in ``diff`` is the named context."""
    lines = diff.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("-") and not l.startswith("---"):
            return i > 0 and CONTEXTS[name] in lines[i - 1]
    return False


def report(results: List[Outcome], path: str, note: str = "") -> Tuple[int, int]:
    """Write the markdown report; (killed, non-equivalent mutants run)."""
    by = collections.defaultdict(collections.Counter)
    for r in results:
        by[r.target][r.outcome] += 1
    survivors = [r for r in results if r.outcome == "survived"]
    equivalent = [r for r in survivors if _equivalent(r)]
    killed = sum(1 for r in results if r.outcome in ("killed", "incompetent"))
    total = len(results) - len(equivalent)
    lines = ["# Mutation report", "",
             "cosmic-ray on the engine's and the contract's soundness code, the proofs as "
             "the test command (`python -m proofs.mutation`; see its docstring for the "
             "targets, the functions mutated and the operators left out).  Generated %s."
             % datetime.date.today().isoformat(), ""]
    if note:
        lines += [note, ""]
    lines += ["| target | mutants run | killed | survived (equivalent) | incompetent | timeout |",
              "|---|---|---|---|---|---|"]
    for tgt, c in by.items():
        eq = sum(1 for r in equivalent if r.target == tgt)
        lines.append("| %s | %d | %d | %d (%d) | %d | %d |" % (
            tgt, sum(c.values()), c["killed"], c["survived"], eq, c["incompetent"],
            c["timeout"]))
    rate = 100.0 * killed / total if total else 100.0
    lines += ["", "**Kill rate: %d of %d non-equivalent mutants (%.1f%%)**; %d survivors "
              "judged equivalent." % (killed, total, rate, len(equivalent)), ""]
    lines += ["## Surviving mutants", ""]
    if not survivors:
        lines.append("None.")
    for r in survivors:
        why = _equivalent(r)
        lines += ["### %s `%s` line %d: %s%s" % (r.target, r.function, r.line, r.operator,
                                                 " (equivalent)" if why else ""), ""]
        if why:
            lines += [why, ""]
        lines += ["```diff", r.diff.strip(), "```", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return killed, total


def mutated_function(module_path: str, pristine: str):
    """The name of the function enclosing the first line where ``module_path`` differs
    from ``pristine`` (None when none does, or the change is outside any function)."""
    import ast
    with open(module_path) as f:
        now = f.read().splitlines()
    with open(pristine) as f:
        before = f.read().splitlines()
    line = next((i + 1 for i, (a, b) in enumerate(zip(now, before)) if a != b), None)
    if line is None:
        return None
    best = None
    for node in ast.walk(ast.parse("\n".join(now))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= line <= node.end_lineno:
            if best is None or node.lineno > best.lineno:
                best = node
    return best.name if best is not None else None


def gate(name: str, pristine: str, root: str) -> int:
    """The test command of a mutant of target ``name``: the proofs of the rules tagged on
    the mutated function (a function without a rule of its own, a helper: all the
    target's proofs), stopping at the first failure; exit status 1 when one fails."""
    import proofs
    from symshape.rules import RULES
    t = next(t for t in TARGETS if t.name == name)
    fn = mutated_function(os.path.join(root, t.module), pristine)
    own = [r.name for r in RULES if fn and r.where.split(":")[1].split(".")[-1] == fn]
    own += list(dict(t.helpers).get(fn, ()))
    for r in proofs.run(own or list(t.proofs), stop_on_failure=True):
        if not r.ok:
            print("FAIL %s: %s" % (r.rule, (r.message or "")[:300]))
            return 1
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "mutation"))
    ap.add_argument("--only", nargs="*", default=None, help="target names")
    ap.add_argument("--root", default=ROOT, help="the checkout mutated in place")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--report", default=os.path.join(ROOT, "docs", "mutation_report.md"))
    ap.add_argument("--note", default="", help="a paragraph for the report (the scope run)")
    ap.add_argument("--report-only", action="store_true",
                    help="write the report from the sessions already in --out")
    ap.add_argument("--resume", action="store_true",
                    help="go on with the sessions already in --out")
    ap.add_argument("--sample", type=int, default=1,
                    help="run one pending mutant in N (a fixed sample)")
    ap.add_argument("--gate", help=argparse.SUPPRESS)       # the test command of a mutant
    ap.add_argument("--pristine", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.gate:
        return gate(args.gate, args.pristine, args.root)
    os.makedirs(args.out, exist_ok=True)
    results: List[Outcome] = []
    for t in TARGETS:
        if args.only and t.name not in args.only:
            continue
        session = os.path.join(args.out, t.name + ".sqlite")
        if not args.report_only:
            session = run_target(t, args.out, args.python, args.root, args.resume,
                                 args.sample)
        if os.path.exists(session):
            results += outcomes(session, t.name)
    killed, total = report(results, args.report, args.note)
    print("killed %d of %d non-equivalent mutants; report: %s" % (killed, total, args.report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
