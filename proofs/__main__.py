"""``python -m proofs [-v] [-x] [NAME ...]``: run the proofs, one line per failure, then
``proofs: N proven, M failed``; exit status 1 when anything failed.  ``-x`` stops at the
first failure (the mutation gate's test command: a killed mutant costs one proof).
Each proof runs in a process of its own where ``os.fork`` exists (``proofs/isolated.py``:
Z3 slows down in a process that has solved much already; a cold full run cost 125 s of CPU
in one process, 101.5 s forked, parent and children counted); ``--in-process`` runs them
all in this process (``--fork`` is accepted and is the default).  ``--classes`` prints, without running
anything, how many proofs quantify over every input of their rule's domain, every input up to a bound, or samples (``proofs/classes.py``), and
each proof's declaration; a full run prints the counts too.  ``--docs`` writes the counts
and the rule count into ``docs/contracts.md`` (the text a test compares with the generated
one).  ``--rule NAME ...`` prints each named rule's catalogue row, the function that applies
it (tagged ``@rule(NAME)``), its proof and what the proof quantifies over.

A rule of ``symshape/rules.py`` without a proof, and a proof naming no rule, count as
failures (only when every proof is run)."""
from __future__ import annotations

import os
import sys
import time

from . import OVER, class_counts, classes_sentence, load, rules_phrase, run, view
from .classes import KINDS


def print_classes(each: bool) -> int:
    """The class counts (and, ``each``, every proof's declaration); 1 when a proof
    declares none."""
    counts = class_counts()
    if each:
        for name in sorted(load()):
            over = OVER.get(name)
            print("%-30s %-12s %s" % (name, over.kind if over else "-",
                                      over.what if over else "declares nothing"))
    print("proof classes: " + ", ".join("%d %s" % (counts[k], k) for k in KINDS)
          + (", %d undeclared" % counts["undeclared"] if counts["undeclared"] else ""))
    if each:
        print(classes_sentence())
    return 1 if counts["undeclared"] else 0


def write_docs() -> int:
    """Replace the class-count sentence of ``docs/contracts.md`` by the generated one."""
    import os
    import re
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "docs", "contracts.md")
    with open(path) as f:
        text = f.read()
    new, n = re.subn(r"^Of the \d+ proofs, .*$", classes_sentence(), text, count=1,
                     flags=re.M)
    if n != 1:
        print("docs/contracts.md has no class-count sentence to replace")
        return 1
    new, n = re.subn(r"`python -m proofs`,\s+\d+\s+rules;", rules_phrase(), new, count=1)
    if n != 1:
        print("docs/contracts.md has no rule count to replace")
        return 1
    with open(path, "w") as f:
        f.write(new)
    print(classes_sentence())
    return 0


def print_rules(names) -> int:
    """Each named rule's row, implementation, proof and class; 1 for an unknown name."""
    status = 0
    for name in names:
        try:
            v = view(name)
        except KeyError:
            print("%s: no such rule in symshape/rules.py" % name)
            status = 1
            continue
        print("%s\n  rule:           %s\n  implementation: %s\n  proof:          %s\n"
              "  quantifies:     %s" % (v.name, v.statement, v.implementation, v.proof,
                                        "%s: %s" % v.over if v.over else "nothing declared"))
    return status


def main(argv) -> int:
    if "--rule" in argv:
        return print_rules([a for a in argv if a != "--rule"])
    if "--docs" in argv:
        return write_docs()
    if "--classes" in argv:
        return print_classes("-v" in argv)
    verbose = "-v" in argv
    first = "-x" in argv
    fork = hasattr(os, "fork") and "--in-process" not in argv
    selected = [a for a in argv if a not in ("-v", "-x", "--fork", "--in-process")]
    t0, c0 = time.perf_counter(), time.process_time()
    if fork:        # each proof in a process of its own (proofs/isolated.py)
        from .isolated import run_isolated
        results = run_isolated(selected, stop_on_failure=first)
    else:
        results = run(selected, stop_on_failure=first)
    failed = 0
    proven = 0
    on_code = 0
    for r in results:
        if r.ok:
            proven += 1
            on_code += r.code_claims > 0
            if verbose:
                print("ok    %-28s %6.2fs CPU  %3d claims on the code's output"
                      % (r.rule, r.cpu, r.code_claims))
        else:
            failed += 1
            msg = " ".join((r.message or "").split())      # one line per failure
            print("FAIL  %s: %s" % (r.rule, msg))
    if not selected and not first:
        from symshape.rules import BY_NAME
        proofs = load()
        for name in BY_NAME:
            if name not in proofs:
                failed += 1
                print("FAIL  %s: the rule has no proof" % name)
        for name in proofs:
            if name not in BY_NAME:
                failed += 1
                print("FAIL  %s: a proof of a rule that symshape/rules.py does not list" % name)
        failed += print_classes(False)
    if verbose:
        from .z3cache import stats
        counts = stats()
        cpu = time.process_time() - c0
        if fork:    # the children's CPU and cache counts (each proof's own process)
            from .isolated import COUNTS
            counts = COUNTS
            cpu += sum(r.cpu for r in results)
        print("(%.1fs, %.1fs CPU; Z3 answers: %d from the cache, %d solved)"
              % (time.perf_counter() - t0, cpu, counts["hits"], counts["misses"]))
    print("proofs: %d proven (%d on the code's own output), %d failed"
          % (proven, on_code, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
