"""Each proof in a process of its own (``python -m proofs``, the default where ``os.fork``
exists; ``--in-process`` runs them in one): the same proofs, run
from a parent that has loaded them and run none.

Z3 grows slower in a process that has already built and solved many terms: its solver
checks and the printing of a query (the cache key, ``proofs/z3cache.py``) took about
twice as long after the ``floordiv`` and ``range`` proofs as in a fresh process, for the
same query, and the slowdown stays after every term is released (the context's tables
keep their size).  A full run therefore cost much more CPU than its proofs did one by
one.  ``run_isolated`` forks a child per proof from the clean parent; the child runs
``proofs.run_one`` and sends back its ``Result``, and the parent reads the child's CPU
time (user + system, from the operating system) and the Z3 cache counts.  Only where
``os.fork`` exists; elsewhere the proofs run in this process (``proofs.run``).
"""
from __future__ import annotations

import os
import pickle
from typing import Iterable, List

from . import Result, load, run, run_one
from . import z3cache


def _child(rule: str, w: int) -> None:
    """Run ``rule`` and write (result, cache counts) to the pipe ``w``; never returns."""
    code = 0
    try:
        res = run_one(rule)
        data = pickle.dumps((res, z3cache.stats()))
        with os.fdopen(w, "wb") as f:
            f.write(data)
    except BaseException:           # the parent reports a child that sent nothing
        code = 1
    finally:
        os._exit(code)


def _one(rule: str) -> Result:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                    # the child
        os.close(r)
        _child(rule, w)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status, usage = os.wait4(pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    if not data:
        return Result(rule, False, 0.0, "the proof's process ended without a result "
                      "(status %d)" % status, 0, cpu)
    res, counts = pickle.loads(data)
    COUNTS["hits"] += counts["hits"]
    COUNTS["misses"] += counts["misses"]
    return res._replace(cpu=cpu)


#: the Z3 cache counts the children reported (``z3cache.stats`` of this process stays 0)
COUNTS = {"hits": 0, "misses": 0}


def run_isolated(selected: Iterable[str] = (), stop_on_failure: bool = False) -> List[Result]:
    """``proofs.run`` with each proof in a forked process of its own (see the module
    docstring); each ``Result.cpu`` is its process's whole CPU time."""
    if not hasattr(os, "fork"):
        return run(selected, stop_on_failure)
    from symshape.rules import RULES
    proofs = load()
    sel = list(selected)
    names = [r.name for r in RULES if r.name in proofs]
    if sel:
        names = [n for n in names if any(n == s or n.startswith(s) for s in sel)]
    out = []
    for n in names:
        out.append(_one(n))
        if stop_on_failure and not out[-1].ok:
            break
    return out
