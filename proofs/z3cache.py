"""Z3 answers cached by the content of the query: a proof is still built in full -- the
code run on its symbolic inputs, every claim and hypothesis encoded -- and only the solver's
answer to a query already answered is read back.

The key is a SHA-256 of the solver's assertions (``Solver.sexpr()``, declarations
included) and its resource limit, so a changed rule, claim or code output is a new query;
``sat`` and ``unsat`` are cached, ``unknown`` never.  Answers live in one append-only file,
``.proofs-cache/z3-answers`` at the top of the repository (``SYMSHAPE_PROOF_CACHE`` names
another file; ``off`` disables the cache).  A caller that needs a model after a cached
``sat`` (a counterexample to print) asks ``model(s)``, which runs the solver.
"""
from __future__ import annotations

import hashlib
import os
from typing import Dict, Optional

import z3

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ANSWERS = {"sat": z3.sat, "unsat": z3.unsat}
_loaded: Dict[str, str] = {}
_state = {"path": None, "ready": False, "hits": 0, "misses": 0}


def _path() -> Optional[str]:
    where = os.environ.get("SYMSHAPE_PROOF_CACHE", "")
    if where == "off":
        return None
    return where or os.path.join(ROOT, ".proofs-cache", "z3-answers")


def _load() -> Optional[str]:
    path = _path()
    if _state["ready"] and _state["path"] == path:
        return path
    _loaded.clear()
    _state.update(path=path, ready=True)
    if path is not None and os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[1] in _ANSWERS:
                    _loaded[parts[0]] = parts[1]
    return path


def _key(s: z3.Solver, rlimit) -> str:
    text = "%s\n;rlimit %s\n" % (s.sexpr(), rlimit)
    return hashlib.sha256(text.encode()).hexdigest()


def check(s: z3.Solver, rlimit=None) -> z3.CheckSatResult:
    """``s.check()``, or the answer the same query got before (see the module
    docstring); ``rlimit`` is the limit ``s`` runs under (part of the key)."""
    path = _load()
    if path is None:
        return s.check()
    key = _key(s, rlimit)
    got = _loaded.get(key)
    if got is not None:
        _state["hits"] += 1
        return _ANSWERS[got]
    _state["misses"] += 1
    r = s.check()
    if r in (z3.sat, z3.unsat):
        _loaded[key] = str(r)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a") as f:          # one short line: appends do not interleave
            f.write("%s %s\n" % (key, r))
    return r


def model(s: z3.Solver) -> z3.ModelRef:
    """The model of a satisfiable ``s`` (solving it again if its answer came from the
    cache)."""
    s.check()
    return s.model()


def stats() -> Dict[str, int]:
    """Queries answered from the cache and solved in this process."""
    return {"hits": _state["hits"], "misses": _state["misses"]}
