"""Mutation testing as a gate: cosmic-ray (a maintained mutation tool) run on the engine's
and the contract's soundness code, with the proofs (and the tests of the published views)
as the test command, and on the model-state and JIT code (``STATE_TARGETS``), with their
fast tests; ``docs/mutation_report.md`` is what it writes.

    pip install -e '.[mutation]'
    python -m proofs.mutation --help          # the targets, their proofs and tests
    python -m proofs.mutation [--root COPY] [--only NAME ...] [--sample-size N --seed S]
    python -m proofs.mutation --resume --rerun-survivors --only NAME ...
    python -m proofs.mutation --root COPY --out DIR2 --label L --only NAME ... --sample-size N --seed S2
                                              # a further, independent draw (NAME@L)
    python -m proofs.mutation --report-only --only          # the report from the record

cosmic-ray mutates the source files *in place* (one mutant at a time, restored after
each): run it on a copy of the checkout (``--root``) with the copy's own editable install
(``--python``: the install maps ``symshape.capture`` / ``.codegen`` to its ``capture/`` and
``codegen/``, another checkout's would import unmutated code) and nothing else there.  Every
run updates ``proofs/mutation_results.json`` (the record of each target's last run: scope,
draw, outcome counts, survivors), from which ``docs/mutation_report.md`` is written; the
sqlite sessions under ``--out`` are build output.  A survivor gets a test or proof that
kills it, then ``--resume --rerun-survivors`` runs it again; an equivalent one gets an
entry in ``EQUIVALENT`` saying why.  Each target
below names a module, the functions in it whose mutants are run (cosmic-ray's
``definition_name``), and the test command that must kill them: ``python -m proofs -x``
on the rules of that code (stopping at the first failing proof), then, where the code
publishes a view, the tests of that view.

Operators left out: ``ReplaceBinaryOperator_*`` to ``/``, ``**``, shifts and bitwise
operators (on ints and infinities they raise a ``TypeError`` at once or turn the result
into a float: killed by any run, they only cost time), and ``RemoveDecorator`` (the
``@rule`` tag has no behaviour; ``tests/proofs/test_rule_tags.py`` catches its removal).
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
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
    timeout: float = 300.0       # seconds one mutant's test command may run (then: killed)


RANGE_PROOFS = ("range.add", "range.scale", "range.mul", "range.pow", "range.floordiv",
                "range.mod", "range.min", "range.max")

TARGETS: List[Target] = [
    Target("ranges", "symshape/algebra/ranges.py",
           ("vr_add", "vr_scale", "vr_mul", "vr_pow", "_ipow", "_fdiv", "vr_floordiv",
            "vr_mod", "vr_min", "vr_max"), RANGE_PROOFS, ("tests/engine/test_range_exactness.py",),
           (("_fdiv", ("range.floordiv",)), ("_ipow", ("range.pow",)))),
    Target("sympy_bridge", "symshape/contract/sympy_form.py",
           ("to_sympy", "_plain", "_atom", "public", "agrees", "assumptions"),
           ("sympy.",), ("tests/contract/test_contract_views.py",)),
    Target("guards", "symshape/contract/writer.py",
           ("_bind", "_dim", "_flush"),
           ("check.emitted", "check.text"),
           ("tests/contract/test_contract_views.py", "tests/contract/test_check_records.py",
            "tests/contract/test_guards_codegen.py", "tests/contract/test_check_render.py")),
    Target("constraint_set", "symshape/contract/constraint_set.py", ("roots",),
           ("check.emitted", "check.text", "contract.exact_range"),
           ("tests/contract/test_contract_views.py", "tests/contract/test_check_records.py",
            "tests/contract/test_guards_codegen.py", "tests/contract/test_check_render.py")),
    Target("exact_ranges", "symshape/contract/exact_ranges.py",
           ("connected_facts", "absorb_connected", "exact_range", "published_ranges",
            "with_root_range", "with_input_ranges", "with_dim_range"),
           ("check.emitted", "check.text", "contract.exact_range"),
           ("tests/contract/test_contract_views.py", "tests/contract/test_check_records.py",
            "tests/contract/test_guards_codegen.py", "tests/contract/test_check_render.py")),
    Target("check_ir", "symshape/contract/render_python.py",
           ("_lit", "test_and_args", "cond_py"), ("check.emitted", "check.text"),
           ("tests/contract/test_check_render.py", "tests/contract/test_contract_views.py",
            "tests/contract/test_check_records.py", "tests/contract/test_guards_codegen.py")),
    Target("simplify", "symshape/algebra/simplify.py",
           ("fold_small_numerator", "fold_minmax"), ("fold.small_numerator",
                                                     "fold.minmax_dominance")),
    # the one Min / Max dominance routine and the one ceiling division (issue 34 item 1)
    Target("expr", "symshape/algebra/expr.py", ("undominated", "_offset_le", "_offset_ge", "ceildiv"),
           ("fold.minmax_dominance", "minmax.offset_dominance", "ceildiv.def"),
           helpers=(("_offset_le", ("minmax.offset_dominance",)),
                    ("_offset_ge", ("minmax.offset_dominance",)))),
]


# --- the engine's decision code and the contract's evaluate / check (issue 34 item 3) -------
# ``ALL`` mutates every function and method of the module.  The tests after the proofs are
# the fast ones that exercise the module (each well under 5 s), the ``test_mutation_kills_*``
# files holding the tests written for the survivors of this gate.
ALL = ("*",)
_DECIDE_TESTS = ("tests/engine/test_mutation_kills_decision.py", "tests/contract/test_contract_decision.py",
                 "tests/contract/test_soundness.py", "tests/engine/test_relations.py", "tests/engine/test_env.py",
                 "tests/engine/test_bounds_property.py",
                 "tests/engine/test_decide_end_to_end.py")
ENGINE_TARGETS: List[Target] = [
    Target("decision", "symshape/reasoning/decision.py", ALL, ("decide.",), _DECIDE_TESTS,
           timeout=120.0),
    Target("solver", "symshape/reasoning/solver.py", ALL,
           ("solve.", "project.drop_implied", "decide.sound", "env."),
           ("tests/engine/test_mutation_kills_solver.py", "tests/engine/test_env.py",
            "tests/engine/test_relations.py", "tests/contract/test_soundness.py",
            "tests/engine/test_data_dependent_congruence.py",
            "tests/engine/test_decide_end_to_end.py"), timeout=120.0),
    Target("expr", "symshape/algebra/expr.py", ALL,
           ("floordiv.", "mod.", "ceildiv.", "minmax.", "fold.minmax_dominance", "subst.",
            "print."), ("tests/engine/test_mutation_kills_expr.py", "tests/engine/test_expr.py"),
           helpers=(("_offset_le", ("minmax.offset_dominance",)),
                    ("_offset_ge", ("minmax.offset_dominance",))), timeout=120.0),
    Target("z3bridge", "symshape/reasoning/z3bridge.py", ALL,
           ("z3bridge.", "decide.sound", "project.exact", "contract.exact_range"),
           ("tests/engine/test_mutation_kills_z3bridge.py", "tests/contract/test_contract_decision.py",
            "tests/contract/test_soundness.py", "tests/engine/test_decide_end_to_end.py"),
           timeout=120.0),
    Target("env", "symshape/reasoning/env.py",
           ("evaluate", "check", "_hint_cond", "add_guard", "_data_dependent", "specialize",
            "specialize_later", "commit_pending", "cancel_pending", "bound", "simplify"),
           ("env.", "decide.sound"), ("tests/engine/test_mutation_kills_env.py",
                                       "tests/engine/test_env.py", "tests/contract/test_soundness.py",
                                       "tests/engine/test_decide_end_to_end.py"),
           timeout=120.0),
    Target("projection", "symshape/reasoning/projection.py", ALL,
           ("project.", "contract.exact_range"),
           ("tests/engine/test_mutation_kills_projection.py", "tests/contract/test_contract_views.py",
            "tests/engine/test_range_exactness.py"), timeout=120.0),
    # the contract's fixes (the analysis behind them) and its published guards
    Target("constraints", "symshape/specs/constraints.py",
           ("relation_box", "_readable", "_relation", "_lost", "_range", "_lo", "_hi",
            "_named_dim", "_why", "specialized_axes", "_quotient_of", "_dim_name"),
           ("contract.",), ("tests/engine/test_mutation_kills_constraints.py",
                            "tests/contract/test_mutation_kills_contract.py",
                            "tests/contract/test_contract_relations.py",
                            "tests/contract/test_contract_readable.py"), timeout=180.0),
    Target("contract", "symshape/contract/guard_text.py", ALL, ("contract.",),
           ("tests/contract/test_mutation_kills_contract_text.py", "tests/contract/test_contract_views.py",
            "tests/contract/test_contract_readable.py", "tests/contract/test_contract_relations.py"),
           timeout=180.0),
]
# --- the model-state and JIT code (issue 39 item 7): no proofs, their fast tests -----------
# Each mutant runs the tests that exercise the module (the ``test_mutation_kills_state`` /
# ``_jit`` files holding the tests written for this gate's survivors first).
_STATE_TESTS = ("tests/capture/test_mutation_kills_state.py", "tests/capture/test_state.py",
                "tests/capture/test_state_reads.py", "tests/capture/test_state_rebind.py",
                "tests/capture/test_state_writes_replayed.py",
                "tests/capture/test_state_unrecorded.py", "tests/capture/test_state_opaque.py",
                "tests/jit/test_state_as_eager.py", "tests/jit/test_jit_state.py",
                "tests/jit/test_state_leaks.py")
STATE_TARGETS: List[Target] = [
    Target(name, path, ALL, (), _STATE_TESTS, timeout=240.0)
    for name, path in (("objstate", "capture/state/objstate.py"),
                       ("stateprog", "capture/state/stateprog.py"),
                       # the state guards' function writer (moved to codegen with the writer)
                       ("guardcode", "codegen/state_guards.py"),
                       ("access", "capture/state/access.py"),
                       ("unrecorded", "capture/state/unrecorded.py"))
] + [
    Target("jit", "codegen/jit.py", ALL, (),
           ("tests/jit/test_mutation_kills_jit.py", "tests/jit/test_jit.py",
            "tests/jit/test_jit_breaks.py", "tests/jit/test_jit_semantics.py",
            "tests/jit/test_jit_speed.py", "tests/jit/test_jit_state.py",
            "tests/jit/test_jit_faults.py"), timeout=240.0),
]
# the earlier ``expr`` target (undominated, the offsets, ceildiv) never ran: the one above
# holds those functions and the rest of the module
TARGETS = [t for t in TARGETS if t.name != "expr"] + ENGINE_TARGETS + STATE_TARGETS


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
        tests = [p for p in t.tests if os.path.exists(os.path.join(root, p))]
        if tests:
            f.write("%s -m pytest -q -x -p no:cacheprovider %s\n" % (python, " ".join(tests)))
    with open(path, "w") as f:
        f.write('[cosmic-ray]\nmodule-path = "%s"\ntimeout = %.1f\nexcluded-modules = []\n'
                'test-command = "bash %s"\n\n[cosmic-ray.distributor]\nname = "local"\n'
                % (t.module, t.timeout, script))


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
            inside = fn in t.functions or (t.functions == ALL and bool(fn))
            if inside and not any(p.match(m.operator_name) for p in excluded):
                kept += 1
                continue
            skipped += 1
            db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                  output="outside the gate"))
    return kept, skipped


def _stable(item) -> tuple:
    """A mutant's place in an order that does not depend on the session (cosmic-ray's job
    ids are random): its position in the file, then its operator and occurrence."""
    m = item.mutations[0]
    return (tuple(m.start_pos), tuple(m.end_pos), m.operator_name, m.occurrence)


def thin(session: str, every: int) -> int:
    """Keep one pending mutant in ``every`` (in the order of their job ids, a fixed
    order), marking the others SKIPPED ("sampled out"): a deterministic sample when the
    whole set does not fit the time.  The number kept."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult
    kept = 0
    with use_db(session, WorkDB.Mode.open) as db:
        items = sorted(db.pending_work_items, key=_stable)
        for k, item in enumerate(items):
            if k % every == 0:
                kept += 1
                continue
            db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                  output="sampled out"))
    return kept


def sample(session: str, size: int, seed: int) -> int:
    """Keep ``size`` pending mutants drawn at random (``random.Random(seed)``, from the
    pending job ids in sorted order, so the draw is the same on every machine), marking
    the others SKIPPED ("sampled out"); the number kept."""
    import random
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult
    with use_db(session, WorkDB.Mode.open) as db:
        done = [w for w, r in db.completed_work_items if r.output != "outside the gate"]
        pending = list(db.pending_work_items)
        # the draw is over every mutant of the gate, run or not, so a smaller draw on a
        # resumed session is the first ``size`` of the larger one (random.sample picks in
        # order): the mutants already run that it leaves out stay in the results
        done = [w for w in done if w.job_id not in set(p.job_id for p in pending)]
        everything = sorted(pending + [w for w in done], key=_stable)
        keep = set(w.job_id for w in
                   random.Random(seed).sample(everything, min(size, len(everything))))
        for item in pending:
            if item.job_id not in keep:
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                      output="sampled out"))
        back = [w.job_id for w, r in db.completed_work_items
                if r.output == "sampled out" and w.job_id in keep]
    if back:                        # a larger draw: its new mutants run on the next exec
        import sqlite3
        con = sqlite3.connect(session)
        with con:
            con.executemany("DELETE FROM work_results WHERE job_id = ?", [(j,) for j in back])
        con.close()
    return len(keep)


def rerun_survivors(session: str) -> int:
    """Forget the results of the surviving mutants (they run again on the next exec, with
    the proofs and tests written since); how many."""
    import sqlite3
    con = sqlite3.connect(session)
    with con:
        n = con.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'").rowcount
    con.close()
    return n


def _scope_path(out: str, t: Target) -> str:
    return os.path.join(out, t.name + ".scope.json")


def run_target(t: Target, out: str, python: str, root: str, resume: bool = False,
               every: int = 1, size: int = 0, seed: int = 0, rerun: bool = False) -> str:
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
        scope = {"made": kept + skipped, "in_scope": kept, "run": kept, "draw": "all"}
        if every > 1:
            scope["run"] = thin(session, every)
            scope["draw"] = "one in %d, in file order" % every
        elif size:
            scope["run"] = sample(session, size, seed)
            scope["draw"] = "random.Random(%d).sample of %d" % (seed, size)
        print("%s: %d mutants kept (%s)" % (t.name, scope["run"], scope["draw"]), flush=True)
        with open(_scope_path(out, t), "w") as f:
            json.dump(scope, f)
    elif size:                      # a smaller draw for a session already under way
        with open(_scope_path(out, t)) as f:
            scope = json.load(f)
        kept = sample(session, size, seed)
        if kept != scope["run"]:
            scope["run"] = kept
            scope["draw"] = "random.Random(%d).sample of %d" % (seed, size)
            with open(_scope_path(out, t), "w") as f:
                json.dump(scope, f)
    if rerun:
        print("%s: %d survivors to run again" % (t.name, rerun_survivors(session)), flush=True)
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


# --- equivalent survivors of the engine targets (issue 34 item 3) -------------------------
_INTERNED = ("Every kind / op string is a literal of the source (OpAtom, BoolOp and the "
             "parser of saved programs build them from literals only), which CPython "
             "interns: `is` and `==` agree on them.")
EQUIVALENT.update({
    ("z3bridge", 'out = z3.If(a < out, a, out) if kind == "Min" else z3.If(a > out, a, out)',
     'out = z3.If(a < out, a, out) if kind is "Min" else z3.If(a > out, a, out)'): _INTERNED,
    ("z3bridge", 'return z3.And(*parts) if c.op == "and" else z3.Or(*parts)',
     'return z3.And(*parts) if c.op is "and" else z3.Or(*parts)'): _INTERNED,
    ("z3bridge", "if ms <= 0:", "if ms == 0:"):
        "remaining_ms() is max(0, ...): never below 0, so `<= 0` is `== 0`.",
    ("z3bridge", "break", "continue"):
        "(in implies) the budget only shrinks (a CPU clock never goes back), so once "
        "configure refuses, it refuses the second solver too: the loop ends the same.",
    ("z3bridge", "return self.remaining_ms() <= 0", "return self.remaining_ms() == 0"):
        "remaining_ms() is max(0, ...): never below 0, so `<= 0` is `== 0`.",
    ("env", "stack = user_stack(2)", "stack = user_stack( 1)"):
        "The extra frame is add_guard's own, in symshape/reasoning/env.py, which user_stack drops "
        "as internal: the same user frames.",
    ("decision", "if f.op == R.LE:", "if f.op is R.LE:"): _INTERNED,
    ("decision", "if c.op == R.LE:", "if c.op is R.LE:"): _INTERNED,
    ("env", 'return all(vals) if c.op == "and" else any(vals)',
     'return all(vals) if c.op is "and" else any(vals)'): _INTERNED,
    ("env", 'return all(vals) if c.op == "and" else any(vals)',
     'return all(vals) if c.op <= "and" else any(vals)'):
        'The ops of an and / or are "and" and "or", and only "and" <= "and".',
    ("env", "if type(c) is bool:", "if type(c) == bool:"): "The same test for a type.",
    ("solver", "if len(term) == 1 and type(term[0]) is Sym and c in (1, -1) and \\",
     "if len(term) == 1 and type(term[0]) == Sym and c in (1, -1) and \\"):
        "The same test for a type.",
    ("solver", "type(atom.args[0]) is Expr:", "type(atom.args[0]) == Expr:"):
        "The same test for a type.",
    ("solver", "if lin is not None and len(lin) == 1:",
     "if lin is not None and len(lin) <= 1:"):
        "A linear Expr has at least one symbol (one without any is made an int): <= 1 is "
        "== 1.",
    ("solver", "if s is None or type(k) is not int or not 0 <= r < k:",
     "if s is None or type(k) is not int or not 0 <= r <= k:"):
        "(in solve_congruence) Mod(s, k) == k never holds, so no guard true at the "
        "examples reaches the solver with r == k (the ranges decide it False first).",
    ("solver", "if holds and len(holds) == len(present):",
     "if holds and len(holds) >= len(present):"):
        "(in residue_outcome) holds lists the residues whose verdict is True, present those "
        "whose verdict is not ABSENT, so holds is never longer than present: >= is ==.",
    ("decision", "known = True if (b.lower == 0 == b.upper) else (False if not (b.lower <= 0 "
     "<= b.upper)", "known = True if (b.lower == 0 >= b.upper) else (False if not (b.lower "
     "<= 0 <= b.upper)"):
        "A range has lower <= upper: lower == 0 >= upper is lower == 0 == upper.",
    ("decision", 'if c.op == "and":', 'if c.op <= "and":'):
        'The ops of an and / or are "and" and "or", and only "and" <= "and".',
    ("solver", "if vr.lower > old.lower or vr.upper < old.upper:",
     "if vr.lower >= old.lower or vr.upper < old.upper:"):
        "Cost only: refine() with a range no narrower than the old one returns at once; "
        "the mutant spends one more of tighten's four rounds reaching the same ranges.",
    ("solver", "type(atom.args[1]) is int and atom.args[1] > 0 and \\",
     "type(atom.args[1]) is int and atom.args[1] > 1 and \\"):
        "A FloorDiv atom never has the divisor 1 (floordiv(x, 1) is x).",
    ("solver", "if c1 * c2 >= 0:", "if c1 * c2 > 0:"):
        "The coefficients of an Expr are never 0: c1 * c2 == 0 cannot happen.",
    ("solver", "if c.op == R.EQ:", "if c.op >= R.EQ:"):
        'The ops are "<=", "!=" and "==", and only "==" >= "==".',
    ("solver", "hi = (vr.upper - rx) // m if not is_inf(vr.upper) else INT_OO",
     "hi = (vr.upper + rx) // m if not is_inf(vr.upper) else INT_OO"):
        "(in solve_two_var) replace() then intersects x's range into its replacement "
        "m*k + rx (rule solve.replacement_range), which cuts k's upper end to "
        "(upper - rx) // m from any larger start: the same ranges.",
    ("solver", "num, den = a.args[0], a.args[-1]", "num, den = a.args[0], a.args[1]"):
        "den is used only for FloorDiv / Mod, which have exactly two arguments.",
    ("solver", "y = atom_expr(t2[0]) if len(t2) == 1 else None",
     "y = atom_expr(t2[0]) if len(t2) == 0 else None"):
        "A term has at least one atom, and for one atom the loop just below builds the "
        "same y.",
    ("env", "self._tightening = True", "self._tightening = False"):
        "A re-entrancy guard (cost only): a nested tighten reaches the same fixpoint, "
        "ranges only ever narrow and each round is idempotent.",
    # the same line where the solver's record ran it (tighten was in solver.py then)
    ("solver", "env._tightening = True", "env._tightening = False"):
        "A re-entrancy guard (cost only): a nested tighten reaches the same fixpoint, "
        "ranges only ever narrow and each round is idempotent.",
    ("projection", "end = probe + 1 if minimize else probe - 1",
     "end = probe + 1 if minimize else probe + 1"): "_BISECT",
    ("projection", "end = end + 1 if minimize else end - 1",
     "end = end + 1 if minimize else end // 1"): "_BISECT",
    ("projection", "end = end + 1 if minimize else end - 1",
     "end = end + 0 if minimize else end - 1"): "_BISECT",
    ("projection", "elif best != end:", "elif best is not end:"):
        "Cost only: for equal ints held as two objects the branch asks t <= end (t >= "
        "end), which the feasible best satisfies, and returns end: the same value.",
})
_BISECT = ("Cost only: the search's invariant is that nothing beyond `end` is feasible; "
           "an `end` one step further out (still infeasible) keeps it, and the bisection "
           "still ends on the exact extreme, one solver call later.")
EQUIVALENT.update({k: _BISECT for k, v in EQUIVALENT.items() if v == "_BISECT"})
EQUIVALENT.update({
    ("constraints", 'if info.kind == "quotient" and info.parent is not None:',
     'if info.kind > "quotient" and info.parent is not None:'):
        '(in _dim_name) the kinds above "quotient" are "unbacked" and "static"; only a '
        'congruence on an unbacked size gives one a parent, itself unbacked and never '
        'named: None either way.',
    ("constraints", 'if info.kind == "named" and info.dim is not None:',
     'if info.kind <= "named" and info.dim is not None:'):
        'Only a "named" symbol carries a Dim (SymInfo.dim is set for that kind alone).',
    ("constraints", "if tinfo.kind == \"quotient\" and _quotient_of(env, t) is s:",
     "if tinfo.kind == \"quotient\" and _quotient_of(env, t) == s:"):
        "Symbols compare by their index, and the environment makes one object per index.",
    ("expr", "if b == 1:", "if b == 0:"):
        "(in floordiv) b >= 1 here (0 raised, negatives turned round above); for b == 1 "
        "the general path (gcd 1, every coefficient split by 1) returns a itself: "
        "checked on 3000 random expressions and by floordiv.by_one.",
    ("expr", "g = gcd(g, a.const % b)", "g = gcd(g, a.const + b)"):
        "g divides b here (it starts at b), so gcd(g, c % b) == gcd(g, c) == gcd(g, c + b).",
    ("expr", 'if type(inner) is OpAtom and inner.kind == "Mod" and type(inner.args[1]) is int \\',
     'if type(inner) == OpAtom and inner.kind == "Mod" and type(inner.args[1]) is int \\'):
        "The same test for a type.",
    ("expr", "if type(b) is int:", "if type(b) == int:"): "The same test for a type.",
    ("expr", "return scale(b, a) if type(b) is not int else a * b",
     "return scale(b, a) if type(b) != int else a * b"): "The same test for a type.",
    ("expr", "and inner.args[1] > 0:  # (x//c)//b == x//(b*c) for b, c > 0",
     "and inner.args[1] >= 0:  # (x//c)//b == x//(b*c) for b, c > 0"):
        "A FloorDiv atom never has the constant divisor 0 (floordiv raises first).",
    ("expr", 'if type(inner) is OpAtom and inner.kind == "FloorDiv" and type(inner.args[1]) '
     'is int \\', 'if type(inner) is OpAtom and inner.kind <= "FloorDiv" and '
     'type(inner.args[1]) is int \\'):
        'The kinds are "FloorDiv", "Mod", "Min", "Max", and only "FloorDiv" <= "FloorDiv".',
    ("expr", "if type(b) is int and b > 0:", "if type(b) is int and b >= 0:"):
        "(in ceildiv) for b == 0 both branches raise the same ZeroDivisionError (floordiv "
        "by 0).",
    ("expr", "if len(b.terms) != 1 or b.const != 0:", "if len(b.terms) > 1 or b.const != 0:"):
        "An Expr has at least one term (one without any is made an int), so != 1 is > 1.",
    ("expr", 'out += (" - %d" % -x.const) if x.const < 0 else (" + %d" % x.const)',
     'out += (" - %d" % -x.const) if x.const <= 0 else (" + %d" % x.const)'):
        "(in format_py) reached only under `if x.const`: the constant is never 0 here.",
    ("contract", "atoms[0][0].kind == atoms[1][0].kind and atoms[0][1] == -atoms[1][1]:",
     "atoms[0][0].kind <= atoms[1][0].kind and atoms[0][1] == -atoms[1][1]:"):
        "An Expr's terms are sorted by atom key, Min (order 3) before Max (order 4): with "
        'two kinds atoms[0] is the Min and "Min" <= "Max" is false, so `<=` holds exactly '
        "for equal kinds.",
    ("contract", "if not isinstance(c, R.Rel) or type(c.expr) is not Expr:",
     "if not isinstance(c, R.Rel) or type(c.expr) != Expr:"): "The same test for a type.",
    ("contract", "stand_in = Sym(10 ** 9 + len(axes))     # named by the axis text, never "
     "emitted", "stand_in = Sym( 11 ** 9 + len(axes))     # named by the axis text, never "
     "emitted"):
        "Any index no real symbol has (they count from 0) names the stand-in equally; it is "
        "never emitted.",
})


# the model state and the JIT (issue 39 item 7)
EQUIVALENT.update({
    ("stateprog", 'if e.op in ("setattr", "setitem") and type(e.args[-1]) in numbers:',
     'if e.op in ("setattr", "setitem") or type(e.args[-1]) in numbers:'):
        "Cost only: a path read as a number and written with something else (an array, a "
        "string) is traced a second time with the read as a Tracked number, which "
        "materializes on any use but arithmetic (the plain number and an == guard, what "
        "the first trace recorded), and arithmetic would have written a number: the same "
        "program, one trace more.",
    ("access", 'v = getattr(v, s.key) if s.kind == "attr" else v() if s.kind == "call" else \\',
     'v = getattr(v, s.key) if s.kind <= "attr" else v() if s.kind == "call" else \\'):
        'The step kinds are "attr", "item" and "call": only "attr" is <= "attr".',
    ("objstate", 'if on_dict and op != "clear":', 'if on_dict and op >= "clear":'):
        "Every dict write but clear is >= \"clear\" (setitem, delitem, pop, setdefault, "
        "update): only clear changes branch, and after clear the dict is empty, so a later "
        "read of it is of its layout (its path is in reshaped: this trace's) or of a key "
        "the trace wrote again (in written either way).",
    ("stateprog", 'if r.kind == "value" and type(r.value) is TracedArray:',
     'if r.kind <= "value" and type(r.value) is TracedArray:'):
        "Every read kind (attrs, has, hasattr, items, keys, len, value) is <= \"value\", "
        "and only a value read holds a traced array.",
    ("guardcode", 'elif r.kind == "cell":', 'elif r.kind <= "cell":'):
        "Root kinds reaching it are cell and self (arg and global are taken before): only "
        "\"cell\" is <= \"cell\".",
    ("guardcode", 'if r.kind == "arg":', 'if r.kind <= "arg":'):
        "The root kinds are arg, cell, global and self: only \"arg\" is <= \"arg\".",
    ("guardcode",
     'body = w.lines + ["return (%s%s)" % (", ".join(arrays), "," if len(arrays) == 1 else "")]',
     'body = w.lines + ["return (%s%s)" % (", ".join(arrays), "," if len(arrays) >= 1 else "")]'):
        "A trailing comma in a tuple of two or more items is the same tuple.",
    ("unrecorded", 'elif w.kind == "opaque":', 'elif w.kind is "opaque":'):
        "A watch's kind is one of the string literals _add is called with (interned): "
        "is and == agree.",
    ("unrecorded", 'if w.kind == "dict" and w.recorded is not None and \\',
     'if w.kind <= "dict" and w.recorded is not None and \\'):
        "Only a dict watch has recorded set (watch_dict passes the recorder's written "
        "set, every other watch None).",
    ("jit", "if t is list or t is tuple:", "if t == list or t is tuple:"):
        "Classes compare by identity.",
    ("jit", 'root._name, self._name.split(" ", 1)[-1])',
     'root._name, self._name.split(" ", 1)[1])'):
        "Reached for a segment only, whose name is always the function's and \"(lines a-b)"
        "\": split(\" \", 1) gives two parts, so [1] is [-1].",
    ("jit", 'where = "" if root is self else " (in its %s)" % self._name.split(" ", 1)[-1][1:-1]',
     'where = "" if root is self else " (in its %s)" + self._name.split(" ", 1)[-1][1:-1]'):
        "Dead branch: only the root function warns. A segment never falls back itself: a "
        "break in it splits the root (_break_at returns before warning), any other failure "
        "runs its statements eagerly (_segment_eagerly), and its statements hold no try / "
        "with (the root's split runs those as Python), so _protect finds nothing.",
    ("jit", 'where = "" if root is self else " (in its %s)" % self._name.split(" ", 1)[-1][1:-1]',
     'where = "" if root is self else " (in its %s)" % self._name.split(" ", 1)[- 0][1:-1]'):
        "Dead branch: only the root function warns (see the mutant of the same line above).",
    ("jit", 'where = "" if root is self else " (in its %s)" % self._name.split(" ", 1)[-1][1:-1]',
     'where = "" if root is self else " (in its %s)" % self._name.split(" ", 1)[~1][1:-1]'):
        "Dead branch: only the root function warns (see the mutants of the same line above).",
})

# the model state and the JIT, the second draw (seed 41)
EQUIVALENT.update({
    ("objstate", 'if e[0] == "neg":', 'if e[0] is "neg":'):
        "Every scalar expression's tag is a string literal of the source (Tracked.__neg__, "
        "_sizes_as_slots, and statesave's loader rebuilds each tuple from literals), which "
        "CPython interns: `is` and `==` agree on them.",
    ("unrecorded", 'elif kind == "opaque" and x.argval == name and x.opname in _NAME_OPS:',
     'elif kind is "opaque" and x.argval == name and x.opname in _NAME_OPS:'):
        "(in lines_using) kind is the watch's kind (its one caller passes w.kind), one of "
        "the string literals _add is called with (interned): is and == agree.",
    ("unrecorded", 'if w.kind == "container":', 'if w.kind is "container":'):
        "(in _snapshot) a watch's kind is one of the string literals _add is called with "
        "(interned): is and == agree.",
    ("objstate", "elif type(other) is SymInt:", "elif type(other) == SymInt:"):
        "The same test for a type.",
    ("access", 'if r.kind == "global":', 'if r.kind >= "global":', "set_root"):
        "(in Scope.set_root) the root kinds are arg, cell, global and self, and set_root is "
        "called for global and cell roots only (a setroot write diffs the globals and "
        "cells; verify rebinds the roots but the object's own, Root('self', 'self')): for "
        "those `>=` is `==`.",
    ("jit", "if type(v) is tuple or type(v) is list:", "if type(v) is tuple or type(v) == list:"):
        "The same test for a type.",
})

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
CONTEXTS = {"after-relation": "self.checks.append(RelationCheck(axis, var, e))",
            # Scope.set_root's test of the root kind (Scope.root has the same line)
            "set_root": "def set_root(self, r: Root, value) -> None:"}


def _context(diff: str, name: str) -> bool:
    """Whether the line just before the mutated one in ``diff`` is the named context."""
    lines = diff.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("-") and not l.startswith("---"):
            return i > 0 and CONTEXTS[name] in lines[i - 1]
    return False


#: the record of every target's last run (counts, scope, survivors): the report is written
#: from it, so a run of some targets keeps the others' results (the sessions are build
#: output, this file is committed)
RESULTS = os.path.join(ROOT, "proofs", "mutation_results.json")

#: outcomes that count as killed: a failing test, a mutant that does not even import
#: (incompetent), a mutant whose test command runs past the target's timeout (it loops)
KILLED = ("killed", "incompetent", "timeout")


def record(results: List[Outcome], scope: dict) -> dict:
    """One target's entry of ``RESULTS``: its scope, the outcome counts, the survivors."""
    return {"scope": scope,
            "counts": dict(collections.Counter(r.outcome for r in results)),
            "survivors": [r._asdict() for r in results if r.outcome == "survived"]}


def load_results(path: str = RESULTS) -> Dict[str, dict]:
    """``RESULTS`` (empty when there is none yet)."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def _draw_order(records: Dict[str, dict]) -> List[str]:
    """The record's keys in the report's order: each target's run, then its further draws
    (``NAME@LABEL``, by label), then the records of targets gone since."""
    names = [t.name for t in TARGETS]
    out = []
    for name in names:
        out += [name] if name in records else []
        out += sorted(k for k in records if k.startswith(name + "@"))
    return out + sorted(k for k in records if k not in out)


def _counts(rec: dict) -> Tuple[collections.Counter, List["Outcome"], List["Outcome"]]:
    """(outcome counts, survivors, the equivalent ones) of one record."""
    survivors = [Outcome(**d) for d in rec["survivors"]]
    return (collections.Counter(rec["counts"]), survivors,
            [r for r in survivors if _equivalent(r)])


def _same_mutant(r: "Outcome") -> tuple:
    """What tells one survivor from another across draws (a moved file changes the
    diff's path and line numbers, not these): its function, operator and changed line."""
    return (r.target, r.function, r.operator) + _changed(r.diff)


def _rate(killed: int, total: int) -> str:
    return "%.1f%%" % (100.0 * killed / total) if total else "-"


def _both_draws(name: str, module: str, recs: List[dict]) -> Tuple[str, int, int]:
    """The row of a target's draws taken together, each mutant once: a further draw's
    ``scope["overlap"]`` counts its mutants that an earlier draw of the target also ran
    (with the same outcome), a survivor is counted once (``_same_mutant``); (row, killed,
    non-equivalent)."""
    run = overlap = 0
    survivors: Dict[tuple, "Outcome"] = {}
    for rec in recs:
        c, surv, _ = _counts(rec)
        run += sum(c.values())
        overlap += rec.get("scope", {}).get("overlap", 0)
        for r in surv:
            survivors.setdefault(_same_mutant(r), r)
    run -= overlap
    eq = sum(1 for r in survivors.values() if _equivalent(r))
    killed, total = run - len(survivors), run - eq
    row = "| %s | %s | - | %d (the %d draws, each mutant once) | %d | %d (%d) | - | - | %s |" % (
        name + " (all draws)", module, run, len(recs), killed, len(survivors), eq,
        _rate(killed, total))
    return row, killed, total


def report(records: Dict[str, dict], path: str, note: str = "") -> Tuple[int, int]:
    """Write the markdown report of every target in ``records`` (a target drawn more than
    once, ``NAME@LABEL``: a row per draw and one of them all, which the totals count);
    (killed, non-equivalent mutants run)."""
    rows = ["| target | module | mutants in scope | run (draw) | killed | survived "
            "(equivalent) | incompetent | timeout | kill rate |",
            "|---|---|---|---|---|---|---|---|---|"]
    modules = {t.name: t.module for t in TARGETS}
    all_killed = all_total = 0
    sections: List[str] = []
    later: List[str] = []         # survivors of a session gone since, killed by a new test
    listed: set = set()           # survivors already listed (a mutant in two draws)
    order = _draw_order(records)
    for name in order:
        rec = records[name]
        base, _, label = name.partition("@")
        module = modules.get(base, rec.get("module", "?"))
        c, survivors, eq = _counts(rec)
        run = sum(c.values())
        killed = sum(c[k] for k in KILLED)
        total = run - len(eq)
        draws = [k for k in order if k.partition("@")[0] == base]
        if len(draws) == 1:
            all_killed += killed
            all_total += total
        scope = rec.get("scope", {})
        rows.append("| %s | %s | %s | %d (%s) | %d | %d (%d) | %d | %d | %s |" % (
            name, module, scope.get("in_scope", "?"), run, scope.get("draw", "?"),
            c["killed"], c["survived"], len(eq), c["incompetent"], c["timeout"],
            _rate(killed, total)))
        if len(draws) > 1 and name == draws[-1]:
            row, k, n = _both_draws(base, module, [records[d] for d in draws])
            rows.append(row)
            all_killed += k
            all_total += n
        for r in survivors:
            if _same_mutant(r) in listed:
                continue
            listed.add(_same_mutant(r))
            why = _equivalent(r)
            sections += ["### %s `%s` line %d: %s%s%s" % (
                r.target, r.function, r.line, r.operator,
                " (draw %s)" % label if label else "", " (equivalent)" if why else ""), ""]
            if why:
                sections += [why, ""]
            sections += ["```diff", r.diff.strip(), "```", ""]
        for d in rec.get("killed_later", ()):
            later += ["### %s `%s` line %d: %s" % (name, d["function"], d["line"],
                                                    d["operator"]), "",
                      "Killed by `%s` (the mutant applied to today's code)." % d["by"], "",
                      "```diff", d["diff"].strip(), "```", ""]
    rate = 100.0 * all_killed / all_total if all_total else 100.0
    lines = ["# Mutation report", "",
             "cosmic-ray on the engine's and the contract's soundness code and on the "
             "model-state and JIT code, the proofs and the fast tests of each module as the "
             "test command (`python -m proofs.mutation "
             "--help` lists the targets, the functions mutated, the proofs run and the "
             "sampling; the module docstring names the operators left out).  A mutant counts "
             "as killed when a proof or test fails, when it does not import (incompetent) or "
             "when its tests run past the target's timeout.  Written from "
             "`proofs/mutation_results.json` on %s." % datetime.date.today().isoformat(), ""]
    if note:
        lines += [note, ""]
    lines += rows
    lines += ["", "**Kill rate: %d of %d non-equivalent mutants (%.1f%%)**; %d survivors "
              "judged equivalent." % (all_killed, all_total, rate,
                                      sum(1 for l in sections if l.endswith("(equivalent)"))),
              "", "## Surviving mutants", ""]
    lines += sections or ["None."]
    if later:
        lines += ["", "## Survivors of an earlier session killed since", ""] + later
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return all_killed, all_total


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
    if not t.proofs:                # a target gated by its tests alone (the state, the JIT)
        return 0
    fn = mutated_function(os.path.join(root, t.module), pristine)
    own = [r.name for r in RULES if fn and r.where.split(":")[1].split(".")[-1] == fn]
    own += list(dict(t.helpers).get(fn, ()))
    for r in proofs.run(own or list(t.proofs), stop_on_failure=True):
        if not r.ok:
            print("FAIL %s: %s" % (r.rule, (r.message or "")[:300]))
            return 1
    return 0


def _targets_help() -> str:
    """The targets, for ``--help``: name, module, functions mutated, proofs run."""
    lines = ["targets (--only NAME):"]
    for t in TARGETS:
        fns = "every function" if t.functions == ALL else ", ".join(t.functions)
        lines.append("  %-13s %s: %s; proofs %s; timeout %ds"
                     % (t.name, t.module, fns, " ".join(t.proofs), t.timeout))
    lines += ["", "sampling: --sample N keeps one mutant in N; --sample-size N --seed S draws "
              "N at random per target (the draw is recorded in the report).  Example:",
              "  nice -n 10 python -m proofs.mutation --root /tmp/copy --only decision "
              "--sample-size 80 --seed 34"]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, epilog=_targets_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "mutation"))
    ap.add_argument("--only", nargs="*", default=None, help="target names")
    ap.add_argument("--root", default=ROOT, help="the checkout mutated in place")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--report", default=os.path.join(ROOT, "docs", "mutation_report.md"))
    ap.add_argument("--note", default="", help="a paragraph for the report (the scope run)")
    ap.add_argument("--results", default=RESULTS,
                    help="the record of every target's last run, updated by this run")
    ap.add_argument("--report-only", action="store_true",
                    help="write the report from the sessions already in --out (with "
                         "--only and no name: from --results alone)")
    ap.add_argument("--resume", action="store_true",
                    help="go on with the sessions already in --out")
    ap.add_argument("--sample", type=int, default=1,
                    help="run one mutant in N, in the order of their place in the file")
    ap.add_argument("--sample-size", type=int, default=0,
                    help="run N mutants of each target drawn at random (with --seed)")
    ap.add_argument("--seed", type=int, default=0, help="the seed of --sample-size's draw")
    ap.add_argument("--rerun-survivors", action="store_true",
                    help="with --resume: run the surviving mutants again (after adding the "
                         "tests or proofs that should kill them)")
    ap.add_argument("--label", default="",
                    help="record this run as a further draw of each target (NAME@LABEL in "
                         "--results, beside the target's own run; give it its own --out): "
                         "the report shows a row per draw and one of the draws together")
    ap.add_argument("--gate", help=argparse.SUPPRESS)       # the test command of a mutant
    ap.add_argument("--pristine", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.gate:
        return gate(args.gate, args.pristine, args.root)
    args.out = os.path.abspath(args.out)      # cosmic-ray runs in --root
    args.root = os.path.abspath(args.root)
    os.makedirs(args.out, exist_ok=True)
    records = load_results(args.results)
    for t in TARGETS:
        if args.only is not None and t.name not in args.only:
            continue
        session = os.path.join(args.out, t.name + ".sqlite")
        if not args.report_only:
            session = run_target(t, args.out, args.python, args.root, args.resume,
                                 args.sample, args.sample_size, args.seed,
                                 args.rerun_survivors)
        if os.path.exists(session):
            scope = {}
            if os.path.exists(_scope_path(args.out, t)):
                with open(_scope_path(args.out, t)) as f:
                    scope = json.load(f)
            key = "%s@%s" % (t.name, args.label) if args.label else t.name
            records[key] = record(outcomes(session, t.name), scope)
    with open(args.results, "w") as f:
        json.dump(records, f, indent=1, sort_keys=True)
        f.write("\n")
    killed, total = report(records, args.report, args.note)
    print("killed %d of %d non-equivalent mutants; report: %s" % (killed, total, args.report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
