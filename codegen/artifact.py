"""Standalone artifacts: a compiled program as one Python module that needs only NumPy.

``compiled.save(dir)`` writes ``dir/<name>.py`` (and ``dir/<name>_constants.npz`` when the
program has array constants).  The module embeds the run-time helpers the generated code
calls (``symshape/runtime.py``: input-check errors; ``codegen/rt.py``: buffers, blocks,
threads), defines the checked function ``<name>`` (also bound to ``forward``), and runs
wherever NumPy is installed, symshape or not; when symshape is importable, check failures
raise its ``UserError``, else the module's own ``UserError``.
"""
from __future__ import annotations

import os
import pickle
from typing import Any, Dict, List

import numpy as np

from symshape.errors import UserError
from symshape import runtime as _runtime
from symshape.capture.program import signature_checked
from symshape.version import __version__
from . import rt as _rtmod

_SKIP = {"np", "_ndarray", "_rt", "_cg", "_SETS", "_P", "__builtins__"}


def attach(cp, backend: str, ep=None):
    """The callable users get from ``ep.compile``: the checked function, with extras (a
    call that does not fit ``ep``'s signature is a UserError naming it, as in module())."""
    fn = cp.full if ep is None else signature_checked(cp.full, ep.call_signature, ep.name)
    fn.source = cp.source
    fn.backend = backend
    fn.save = lambda path: save(cp, path)
    fn.clear_buffers = lambda: clear_buffers(cp)
    fn.compiled = cp
    return fn


def clear_buffers(cp) -> None:
    """Drop the scratch buffers and output pools the program keeps between calls."""
    cp.ns["_SETS"].clear()
    for pool in cp.ns.get("_P", ()):
        pool.clear()


def _module_source(path: str) -> str:
    with open(path) as fh:
        src = fh.read()
    return src.replace("from __future__ import annotations\n", "")


def _embed(name: str, src: str) -> str:
    if "'''" in src or "\\" in src:
        return "%s = %r\n" % (name, src)
    return "%s = '''%s'''\n" % (name, src)


def _literal(v: Any):
    """Python source evaluating to ``v`` (with ``np`` in scope), or None."""
    t = type(v)
    if v is None or t in (bool, int, str) or v is Ellipsis:
        return repr(v)
    if t is float or t is complex:
        return repr(v) if v == v and abs(v) != float("inf") else "%s(%r)" % (
            t.__name__, repr(v))
    if isinstance(v, np.dtype) and v.names is None and v.kind not in "OV":
        return "np.dtype(%r)" % v.str
    if isinstance(v, np.generic) and v.dtype.kind in "biufc":
        return "np.dtype(%r).type(%s)" % (v.dtype.str, _literal(v.item()))
    if t is slice:
        parts = [_literal(x) for x in (v.start, v.stop, v.step)]
        return None if None in parts else "slice(%s)" % ", ".join(parts)
    if t in (tuple, list):
        parts = [_literal(x) for x in v]
        if None in parts:
            return None
        if t is tuple:
            return "(%s%s)" % (", ".join(parts), "," if len(parts) == 1 else "")
        return "[%s]" % ", ".join(parts)
    return None


def save(cp, path: str) -> str:
    """Write the standalone module of a compiled program into directory ``path``."""
    os.makedirs(path, exist_ok=True)
    name = cp.name
    arrays: Dict[str, np.ndarray] = {}
    lines: List[str] = []
    sp = cp.ns.get("_SP")
    if sp is not None and sp.effects:
        raise UserError("a standalone artifact cannot replay the program's writes to Python "
                        "state (%s); save the program with ss.save and load it with ss.load "
                        "instead" % "; ".join(w[len("write: "):] for w in sp.describe()
                                              if w.startswith("write"))[:200])
    for k, v in cp.ns.items():
        if k == "_SP":
            continue        # the state as it is now: fixed in the artifact (below)
        if k in _SKIP or callable(v) and not isinstance(v, (np.dtype, np.ndarray, type)):
            continue
        if isinstance(v, np.ndarray):
            if v.dtype.kind == "O":
                lines.append("%s = _pickle.loads(%r)" % (k, pickle.dumps(v)))
            else:
                arrays[k] = v
            continue
        if k.startswith("_TUNE"):
            lines.append("%s = _cg.new_tune()" % k)     # measured afresh where it runs
            continue
        lit = _literal(v)
        if lit is None:
            lines.append("%s = _pickle.loads(%r)" % (k, pickle.dumps(v)))
        else:
            lines.append("%s = %s" % (k, lit))
    out = ['"""%s: compiled by symshape %s (backend numpy).\n\n'
           "Standalone: needs only NumPy.  ``%s(...)`` checks its inputs against the\n"
           "program's constraints, then runs the generated code.\n\"\"\"" % (
               name, __version__, name),
           "import os as _os",
           "import pickle as _pickle",
           "import types as _types",
           "",
           "import numpy as np",
           "",
           _embed("_RUNTIME_SRC", _module_source(_runtime.__file__)),
           _embed("_CG_SRC", _module_source(_rtmod.__file__)),
           "",
           "def _namespace(label, src):",
           "    mod = _types.ModuleType(label)",
           "    exec(compile(src, '<%s>' % label, 'exec'), mod.__dict__)",
           "    return mod",
           "",
           "",
           "_rt = _namespace('symshape_runtime', _RUNTIME_SRC)",
           "_cg = _namespace('symshape_rt', _CG_SRC)",
           "UserError = _rt.UserError",
           "_ndarray = np.ndarray",
           "_SETS = []",
           "_P = [[] for _ in range(%d)]" % len(cp.ns.get("_P", ())),
           ]
    if arrays:
        fname = "%s_constants.npz" % name
        np.savez(os.path.join(path, fname), **arrays)
        out.append("_HERE = _os.path.dirname(_os.path.abspath(__file__))")
        out.append("with np.load(_os.path.join(_HERE, %r)) as _npz:" % fname)
        for k in arrays:
            out.append("    %s = _npz[%r]" % (k, k))
    out.extend(lines)
    if sp is not None:
        # no Python objects travel with an artifact: its state arrays are the ones saved
        names = [n.name for n in sp.nodes]
        out += ["", "",
                "class _FixedState:",
                "    \"\"\"The state arrays as saved (the exporting process's objects do not "
                "travel).\"\"\"",
                "",
                "    def __init__(self, arrays):",
                "        self.arrays = arrays",
                "",
                "    def begin(self, args):",
                "        return self",
                "",
                "",
                "_SP = _FixedState((%s%s))" % (", ".join(names), "," if len(names) == 1 else "")]
    out.append("")
    out.append("")
    out.append(cp.source.rstrip("\n"))
    out.append("")
    out.append("")
    out.append("forward = %s" % name)
    out.append("")
    file = os.path.join(path, "%s.py" % name)
    with open(file, "w") as fh:
        fh.write("\n".join(out))
    return file


def load(file: str):
    """Import a saved artifact module from its path (for tests and tools)."""
    import importlib.util
    modname = os.path.splitext(os.path.basename(file))[0]
    spec = importlib.util.spec_from_file_location(modname, file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
