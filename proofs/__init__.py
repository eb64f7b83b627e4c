"""Z3 proofs of the rules in ``symshape/rules.py``: one proof per rule.

A proof is a function registered with ``@proves("<rule name>")``.  It returns normally when
the rule holds and raises ``ProofFailure`` (with a counterexample when Z3 found one)
otherwise.  Proofs are universally quantified statements over Z3 integers (see
``proofs/pyint.py`` for Python's ``//`` and ``%`` and the ``prove`` driver); each also
builds its claim from the engine's own output (``proofs/code.py``: the function run on
symbolic inputs, its result translated to Z3), so a change to the code changes what is
proven; ``prove_code`` refuses vacuous proofs (contradictory hypotheses, or a claim that
holds whatever the code computes).

    python -m proofs            run every proof
    python -m proofs NAME...    run the named ones (a prefix like ``range.`` selects a family)

Each proof declares what it quantifies over (``over=``, ``proofs/classes.py``): every input
of its rule's domain, every input up to a stated bound, or samples; ``python -m proofs``
prints the count of each class, and ``tests/proofs/test_proof_classes.py`` fails when a
proof declared "every input" enumerates samples.
"""
from __future__ import annotations

import importlib
import time
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional

from .classes import BOUNDED, EVERY, SAMPLES, Over, bounded, every, samples
from .pyint import ProofFailure

MODULES = ("proofs.expr_rules", "proofs.range_rules", "proofs.solver_rules",
           "proofs.op_rules", "proofs.check_rules")
MODULES += ("proofs.contract_rules", "proofs.decide_rules", "proofs.op_shape_rules",
            "proofs.op_shape_calls", "proofs.expr_every")
MODULES += ("proofs.divmod_every", "proofs.simplify_every")
MODULES += ("proofs.slice_every", "proofs.arange_every", "proofs.bound_every")
MODULES += ("proofs.shape_every", "proofs.contract_every")
MODULES += ("proofs.decide_every", "proofs.solve_every")
MODULES += ("proofs.histogram_every", "proofs.reshape_every", "proofs.minmax_rules")
MODULES += ("proofs.decide_specs_every", "proofs.implies_every")
MODULES += ("proofs.sympy_every", "proofs.symint_every", "proofs.subs_every")
MODULES += ("proofs.minmax_every", "proofs.boundall_every", "proofs.monomial_every")
MODULES += ("proofs.readable_every",)
MODULES += ("proofs.pysource_every",)
MODULES += ("proofs.contract_folds", "proofs.bounds_folds", "proofs.project_every")
MODULES += ("proofs.drop_every", "proofs.factsum_every", "proofs.residue_every")
MODULES += ("proofs.minmax_equal_every",)
MODULES += ("proofs.related_every", "proofs.factorpairs_every")
MODULES += ("proofs.broadcast_every", "proofs.linalg_every", "proofs.contract_axes_every")
MODULES += ("proofs.axes_every", "proofs.take_every", "proofs.basic_index_every",
            "proofs.take_along_every")
MODULES += ("proofs.atleast_every", "proofs.concatenate_every", "proofs.stack_every")
MODULES += ("proofs.pad_tile_every", "proofs.split_every")
MODULES += ("proofs.keep_every",)
MODULES += ("proofs.reduce_every", "proofs.diff_every", "proofs.expand_squeeze_every")
MODULES += ("proofs.stats_axes_every",)

#: rule name -> proof function
PROOFS: Dict[str, Callable[[], None]] = {}
#: rule name -> what its proof quantifies over (``proofs/classes.py``)
OVER: Dict[str, Over] = {}


def proves(rule: str, over: Optional[Over] = None
           ) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Register the decorated function as the proof of ``rule`` (a name in
    ``symshape.rules``); ``over`` declares what it quantifies over (``every(domain)``,
    ``bounded(bound)`` or ``samples(which)``; a proof without one is reported as a
    failure by ``python -m proofs``)."""
    def deco(fn: Callable[[], None]) -> Callable[[], None]:
        if rule in PROOFS:
            raise RuntimeError("rule %r has two proofs: %s and %s"
                               % (rule, PROOFS[rule].__qualname__, fn.__qualname__))
        PROOFS[rule] = fn
        if over is not None:
            OVER[rule] = over
        fn.rule = rule  # type: ignore[attr-defined]
        fn.over = over  # type: ignore[attr-defined]
        return fn
    return deco


def class_counts() -> Dict[str, int]:
    """How many proofs quantify over every input, up to a bound, over samples (and how
    many declare nothing: ``undeclared``)."""
    load()
    out = {EVERY: 0, BOUNDED: 0, SAMPLES: 0, "undeclared": 0}
    for name in PROOFS:
        out[OVER[name].kind if name in OVER else "undeclared"] += 1
    return out


def load() -> Dict[str, Callable[[], None]]:
    """Import every proof module; the registry, rule name -> proof."""
    for m in MODULES:
        importlib.import_module(m)
    return PROOFS


class Result(NamedTuple):
    rule: str
    ok: bool
    seconds: float
    message: Optional[str]
    #: claims proven about the code's own output (``proofs.code.prove_code``); 0 means the
    #: proof only states mathematics and is not tied to what the implementation computes
    code_claims: int = 0
    #: CPU seconds of this process the proof took (Z3 included; the wall clock of a
    #: shared machine says little)
    cpu: float = 0.0


def classes_sentence() -> str:
    """The class counts as the sentence ``docs/contracts.md`` carries (generated: a test
    fails when the document's copy differs)."""
    c = class_counts()
    return ("Of the %d proofs, %d quantify over every input of their rule's domain, %d over "
            "every input up to a stated bound and %d over samples (`python -m proofs "
            "--classes -v` lists each proof's declaration)."
            % (sum(c.values()), c[EVERY], c[BOUNDED], c[SAMPLES]))


def rules_phrase() -> str:
    """The rule count as ``docs/contracts.md`` writes it (``python -m proofs, N rules;``):
    generated from ``symshape.rules.RULES``, a test fails when the document's copy differs."""
    from symshape.rules import RULES
    return "`python -m proofs`, %d rules;" % len(RULES)


class RuleView(NamedTuple):
    """One rule reached from its name: its catalogue row, the function that applies it and
    the proof that proves it (each as ``module:qualname (file:line)``), and the proof's
    class."""
    name: str
    statement: str
    implementation: str
    proof: str
    over: Optional[Over]


def _located(fn: Callable) -> str:
    import inspect
    import os
    fn = inspect.unwrap(fn)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.relpath(inspect.getsourcefile(fn) or "?", root)
    return "%s:%s (%s:%d)" % (fn.__module__, fn.__qualname__, path,
                              inspect.getsourcelines(fn)[1])


def view(rule: str) -> RuleView:
    """The catalogue row, implementation and proof of ``rule`` (``python -m proofs --rule
    NAME`` prints it); KeyError for a name the catalogue does not list."""
    from symshape.rules import BY_NAME
    from .coverage import resolve
    row = BY_NAME[rule]
    impl = _located(resolve(row.where)[2])
    proof = load().get(rule)
    return RuleView(rule, row.statement, impl, _located(proof) if proof else "none",
                    OVER.get(rule))


def run_one(rule: str) -> Result:
    from .code import STATS, restart_names as restart_free
    from .pyint import restart_names
    fn = load()[rule]
    STATS["code_claims"] = 0
    restart_names()         # the same names, so the same Z3 queries, in any order
    restart_free()
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        fn()
    except ProofFailure as e:
        return Result(rule, False, time.perf_counter() - t0, str(e))
    except Exception as e:  # a crash in a proof is a failure too, never a pass
        return Result(rule, False, time.perf_counter() - t0,
                      "%s: %s" % (type(e).__name__, e))
    return Result(rule, True, time.perf_counter() - t0, None, STATS["code_claims"],
                  time.process_time() - c0)


def run(selected: Iterable[str] = (), stop_on_failure: bool = False) -> List[Result]:
    """Run the proofs whose rule names equal or start with one of ``selected`` (all when
    empty), in the order of ``symshape.rules.RULES`` (``stop_on_failure``: up to the
    first that fails).  A proof whose name is not a rule is not run (``python -m proofs``
    reports it as a failure)."""
    from symshape.rules import RULES
    proofs = load()
    sel = list(selected)
    names = [r.name for r in RULES if r.name in proofs]    # a proof naming no rule: not run
    if sel:
        names = [n for n in names if any(n == s or n.startswith(s) for s in sel)]
    out = []
    for n in names:
        out.append(run_one(n))
        if stop_on_failure and not out[-1].ok:
            break
    return out


__all__ = ["BOUNDED", "EVERY", "OVER", "PROOFS", "ProofFailure", "Result", "SAMPLES", "bounded",
           "class_counts", "classes_sentence", "every", "load", "proves", "rules_phrase", "run",
           "run_one", "samples", "view", "RuleView"]
