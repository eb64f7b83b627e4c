"""``ss.save`` / ``dumps``: an ExportedProgram written as its program document (JSON text,
arrays inline or in an archive beside it)."""
from __future__ import annotations

import base64
import hashlib
import inspect
import io
import json
import math
import os
import stat
from typing import Any, Dict, Optional

import numpy as np

from symshape import named_results

from symshape.algebra import relations as R
from symshape.errors import UserError
from symshape.algebra.expr import Expr, format_py
from symshape.contract.constraint_set import ConstraintSet
from symshape.contract import saved
from symshape.sizes.symfloat import FloatExpr

from .. import archive, layout
from ..ops import families
from ..ir import ArrRef, CondExpr, Graph, IndexAttr, Node, Subgraph
from ..state import statesave
from ..program import ExportedProgram
from ..custom import lookup
from .formats import DTYPES, FORMAT, TEXT_VERSION, VERSION, configured_label, generator_kind, short_value

families()          # every op's handler and op-table row, before any use

# =========================================================================== saving
class _Enc:
    def __init__(self, entries: Optional[list] = None) -> None:
        self.where = "program"
        # (placed array, its description) for an archive (None: arrays go inline, base64)
        self.entries = entries

    def fail(self, msg: str):
        raise UserError("ss.save: cannot save the program: %s: %s" % (self.where, msg))

    # values ------------------------------------------------------------------
    def value(self, v):
        t = type(v)
        if v is None or t is bool or t is int or t is str:
            return v
        if t is float:
            return v if math.isfinite(v) else {"float": repr(v)}
        if t is complex:
            return {"complex": [self.value(v.real), self.value(v.imag)]}
        if t is tuple:
            return {"tuple": [self.value(x) for x in v]}
        if t is list:
            return {"list": [self.value(x) for x in v]}
        if t is Expr:
            return {"expr": format_py(v)}
        if t is Node:
            return {"node": v.name}
        if t is slice:
            return {"slice": [self.value(v.start), self.value(v.stop), self.value(v.step)]}
        if t is IndexAttr:
            return {"index": [self.index_item(x) for x in v.items]}
        if v is Ellipsis:
            return {"ellipsis": True}
        if isinstance(v, np.dtype):
            return {"dtype": self.dtype(v)}
        if isinstance(v, np.generic):
            return {"scalar": [self.dtype(v.dtype), self.value(v.item())]}
        if t is Subgraph:
            return {"subgraph": self.subgraph(v)}
        if t is CondExpr:
            return {"cond_expr": self.cond(v.cond)}
        if t is FloatExpr:
            return {"float_expr": [v.op, [self.value(a) for a in v.args]]}
        if t is np.ufunc and getattr(np, v.__name__, None) is v:
            return {"ufunc": v.__name__}         # np.add.at(x, idx, 1): NumPy's own ufunc
        if isinstance(v, (np.random.Generator, np.random.RandomState)):
            # a generator held as model state: its kind, never its state (a loaded program
            # draws from a generator the caller gives ss.load, or a fresh one)
            return {"generator": generator_kind(v)}
        self.fail("a value of type %s cannot be saved (%r)" % (t.__name__, v))

    def index_item(self, x):
        if isinstance(x, ArrRef):
            return {"arr": x.i}
        return self.value(x)

    def dtype(self, dt) -> str:
        dt = np.dtype(dt)
        if dt.name not in DTYPES:
            self.fail("dtype %s is not one of the plain numeric / bool dtypes a saved program "
                      "may use" % dt)
        return dt.name

    def cond(self, c):
        if isinstance(c, R.BoolOp):
            return {"bool": c.op, "args": [self.cond(a) for a in c.args]}
        if isinstance(c, R.Rel):
            return {"rel": c.op, "expr": format_py(c.expr)}
        if type(c) is bool:
            return c
        self.fail("unexpected condition %r" % (c,))

    def frame(self, f):
        if f is None:
            return None
        return {"file": f.filename, "line": f.lineno, "function": f.function, "code": f.code}

    def array(self, arr: np.ndarray):
        arr = np.asarray(arr)
        name = self.dtype(arr.dtype)
        cover = layout.covering(arr) if layout.needs_layout(arr) else None
        out = {"dtype": name, "shape": list(arr.shape)}
        if cover is not None:
            # the view's own layout (capture/layout.py): bit-identical results after load
            data, strides, align = cover
            extra = {"strides": strides, "align": align}
        else:
            data, align, extra = layout.plain(arr), 0, {}
        if self.entries is None:
            out["data"] = base64.b64encode(data).decode("ascii")
        else:
            raw = data.reshape(-1).view(np.uint8)
            self.entries.append((archive.Placed(raw, align), out))
            # offset and checksum are filled in once every array is placed (save)
            out.update(offset=None, nbytes=int(raw.nbytes), checksum=None)
        out.update(extra)
        return out

    # graphs ------------------------------------------------------------------
    def node(self, n: Node):
        self.where = "node %s (%s)" % (n.name, n.op)
        out: Dict[str, Any] = {"name": n.name, "op": n.op}
        out["inputs"] = [self.value(x) for x in n.inputs]
        attrs = {}
        for k, v in n.attrs.items():
            if not isinstance(k, str):
                self.fail("attribute name %r is not a str" % (k,))
            if k == "fn" and "::" in n.op:
                op = lookup(n.op)
                entry = {"custom_op": n.op}
                if op is not None and op.mutates_args:
                    entry["mutates_args"] = list(op.mutates_args)
                attrs[k] = entry
                continue
            attrs[k] = self.value(v)
        out["attrs"] = attrs
        out["dtype"] = None if n.dtype is None else (
            "object" if n.dtype == np.dtype(object) else self.dtype(n.dtype))
        out["shape"] = None if n.shape is None else [self.value(s) for s in n.shape]
        out["source"] = self.frame(n.frame)
        meta = {}
        if "binds" in n.meta:
            meta["binds"] = [[s.name, int(a)] for s, a in n.meta["binds"]]
        if "binds_value" in n.meta:
            meta["binds_value"] = n.meta["binds_value"].name
        if meta:
            out["meta"] = meta
        if n.op == "constant":
            v, now = n.meta["value"], getattr(self, "live", {}).get(n.name)
            if isinstance(now, np.ndarray) and isinstance(v, np.ndarray) and \
                    now.shape == v.shape and now.dtype == v.dtype:
                v = now
            out["value"] = self.array(v)
        return out

    def graph(self, g: Graph):
        return {"nodes": [self.node(n) for n in g.nodes],
                "outputs": [self.value(o) for o in g.outputs],
                "out_spec": self.spec(g.out_spec)}

    def spec(self, s):
        if s == ("leaf",):
            return None
        if s[0] == "dict":
            return {"dict": [[self.value(k), self.spec(c)] for k, c in zip(s[1], s[2])]}
        if s[0] == "namedtuple" and named_results.is_users(s[1]):
            # the user's own type: a file never names what loading would have to import, so
            # a loaded program returns the same items as a plain tuple
            return {"tuple": [self.spec(c) for c in s[2]]}
        if s[0] == "namedtuple":         # NumPy's result type, saved by its class name
            return {"namedtuple": [s[1], [self.spec(c) for c in s[2]]]}
        if s[0] in ("tuple", "list"):
            return {s[0]: [self.spec(c) for c in s[1]]}
        self.fail("unknown output structure %r" % (s,))

    def subgraph(self, sub):
        where = self.where
        out = {"name": sub.name, "inputs": [n.name for n in sub.inputs],
               "checks": [[self.cond(c), text] for c, text in sub.checks],
               "graph": self.graph(sub.graph)}
        self.where = where
        return out

    # program -----------------------------------------------------------------
    def constraints(self, cs: ConstraintSet):
        self.where = "constraints"
        return saved.encode(cs, self, configured_label)

    def call_signature(self, sig: Optional[inspect.Signature]):
        if sig is None:
            return None
        out = []
        for p in sig.parameters.values():
            e: Dict[str, Any] = {"name": p.name, "kind": p.kind.name}
            if p.default is not p.empty and plain_json(p.default):
                e["default"] = p.default
            out.append(e)
        return out

    def signature(self, s):
        self.where = "graph_signature"
        return {"inputs": [{"kind": x.kind, "name": x.name, "target": x.target,
                            "path": x.path} for x in s.input_specs],
                "outputs": [dict({"kind": x.kind, "name": x.name, "target": x.target},
                                 **({"mutation": "rebind"} if x.mutation == "rebind" else {}))
                            for x in s.output_specs]}

    def program(self, ep):
        # state as it is now (a program that rebound ``self.m`` on earlier calls saves the
        # new array, as ``ep.state`` shows it), where it still fits its node
        by_path = {sp.path: sp.name for sp in ep.graph_signature.input_specs
                   if sp.kind in ("CONSTANT", "STATE") and sp.path}
        self.live = {by_path[p]: a for p, a in ep.state.items() if p in by_path}
        out = {"name": ep.name,
               "call_signature": self.call_signature(ep.call_signature),
               "graph": self.graph(ep.graph),
               "signature": self.signature(ep.graph_signature),
               "constraints": self.constraints(ep.constraints)}
        if ep.state_program is not None:
            self.where = "state"
            out["state"] = statesave.encode(ep.state_program, self.value)
        return out


def plain_json(v) -> bool:
    t = type(v)
    if v is None or t in (bool, int, str):
        return True
    if t is float:
        return math.isfinite(v)
    return False


def canonical(program) -> str:
    return json.dumps(program, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


def digest(program) -> str:
    return "sha256:" + hashlib.sha256(canonical(program).encode("ascii")).hexdigest()


def dumps(ep) -> str:
    """The JSON text file ``save(ep, path, format="json")`` writes (arrays inline, base64)."""
    return _document(ep, None)


def _document(ep, entries: Optional[list]) -> str:
    return _text(_program(ep, entries), TEXT_VERSION)


def _program(ep, entries: Optional[list]) -> dict:
    """The program as JSON data; with ``entries`` (a list to fill with (placed array, its
    description)), arrays go to an archive's data section instead of inline base64."""
    if not isinstance(ep, ExportedProgram):
        raise UserError("ss.save: expected an ExportedProgram (from ss.export), got %s"
                        % type(ep).__name__)
    return _Enc(entries).program(ep)


def _text(program: dict, version: int) -> str:
    """The signed document holding ``program``, as the file's text."""
    doc = {"format": FORMAT, "version": version, "checksum": digest(program),
           "program": program}
    return _pretty(doc, "") + "\n"


def _pretty(v, indent: str, width: int = 100) -> str:
    """JSON with every object / array that fits on one line written on one line."""
    flat = json.dumps(v, ensure_ascii=False, allow_nan=False)
    if len(flat) + len(indent) <= width or not isinstance(v, (dict, list)) or not v:
        return flat
    inner = indent + " "
    if isinstance(v, dict):
        items = ["%s%s: %s" % (inner, json.dumps(k, ensure_ascii=False),
                               _pretty(x, inner, width)) for k, x in v.items()]
        return "{\n%s\n%s}" % (",\n".join(items), indent)
    items = ["%s%s" % (inner, _pretty(x, inner, width)) for x in v]
    return "[\n%s\n%s]" % (",\n".join(items), indent)


def save(ep, path, *, format: Optional[str] = None) -> None:
    """Write ``ep`` to ``path``: a file name, or a binary or text file object.

    ``format="archive"`` (the default, except for a text file object) writes the program
    as JSON text followed by each array's raw bytes (capture/archive.py), so saving and
    loading run at disk speed and ``load`` can map the arrays.  ``format="json"`` writes
    one JSON text file with the arrays inline as base64 (readable by older symshape
    versions; slow for large weights).  A file name is written atomically, through a
    temporary file renamed over it (keeping an existing file's permissions; a symbolic
    link is followed): a failed save leaves the old file untouched, and a program loaded
    from it with ``mmap_mode`` keeps working while it is replaced."""
    if format not in (None, "archive", "json"):
        raise UserError("ss.save: format must be 'archive' or 'json', got %s" % short_value(format))
    stream = hasattr(path, "write")
    text_stream = stream and is_text_stream(path)
    if format is None:
        format = "json" if text_stream else "archive"
    if format == "archive" and text_stream:
        raise UserError("ss.save: the archive format is binary but %s is a text file object; "
                        "open it in binary mode ('wb') or pass format='json'"
                        % type(path).__name__)
    if format == "json":
        text = dumps(ep)
        if stream:
            path.write(text if text_stream else text.encode("utf-8"))
        else:
            _write_atomically(path, lambda fh: fh.write(text.encode("utf-8")))
        return
    arrays: list = []
    program = _program(ep, arrays)
    archive.place([placed for placed, _ in arrays])
    for placed, described in arrays:
        described["offset"] = placed.offset
        described["checksum"] = archive.PLACEHOLDER
    # checksums are computed while the arrays are written; they do not change the text's
    # size, so the data section can be written first
    text_size = len(_text(program, VERSION).encode("utf-8"))

    def finish() -> bytes:
        for placed, described in arrays:
            described["checksum"] = placed.checksum
        return _text(program, VERSION).encode("utf-8")

    def write(fh) -> None:
        archive.write(fh, [placed for placed, _ in arrays], text_size, finish)
    if stream:
        write(path)
    else:
        _write_atomically(path, write)


def is_text_stream(f) -> bool:
    if isinstance(f, io.TextIOBase):
        return True
    if isinstance(f, (io.RawIOBase, io.BufferedIOBase)):
        return False
    return "b" not in getattr(f, "mode", "b")


def _write_atomically(path, write) -> None:
    """Write through a temporary file next to ``path``, then rename it over ``path``."""
    p = os.path.realpath(os.fspath(path))
    tmp = "%s.%d-%s.tmp" % (p, os.getpid(), os.urandom(4).hex())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        try:
            os.chmod(tmp, stat.S_IMODE(os.stat(p).st_mode))
        except OSError:
            pass                        # no old file (or not ours to read): default mode
        os.replace(tmp, p)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
