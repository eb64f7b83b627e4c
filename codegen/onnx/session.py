"""``ep.compile(backend="onnxruntime")``: the model of ``to_onnx`` in an onnxruntime session.

The callable is written by the one function writer every backend uses: ``f``'s signature,
the program's input check (the same ``UserError``s as ``module()``), then one session
run, then the write-backs (``x[...] = x_new`` for written inputs and state, rebinds
replayed) and the outputs in ``f``'s structure.  The model is built with every state array
as an input, fed from the live array on each call (a rebound weight is read as
``module()`` reads it), and without the in-graph guards (the Python check already ran).
The session is created once per compiled callable, with the NumPy backend's thread count
(``SYMSHAPE_THREADS``) for its intra-op pool.
"""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from symshape import runtime as _runtime
from symshape.capture.ir import Node
from symshape.errors import UserError

from ..artifact import attach
from ..function_writer import GeneratedFunction, Writing, program_spec, write
from ..pycode import Renderer
from ..rt import THREADS
from .export import build


class CompiledOnnx(GeneratedFunction):
    """A program compiled for onnxruntime: the driver's record, the ``model`` and the
    ``session``."""

    backend = "onnxruntime"

    def __init__(self) -> None:
        super().__init__()
        self.model = None
        self.session = None


def make_session(model, threads: int = THREADS):
    """An onnxruntime CPU session of ``model`` with ``threads`` intra-op threads (0:
    onnxruntime's default, one per core)."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = max(0, int(threads))
    so.inter_op_num_threads = 1
    so.log_severity_level = 4          # a failing guard is the caller's error, not a log line
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def _feed(v, int_input: bool):
    if int_input:
        return np.asarray(v, np.int64)
    # np.require keeps a 0-d array 0-d (np.ascontiguousarray makes it 1-d)
    return np.require(v, requirements="C")


def _body(ctx: Writing, ep, ex) -> List[str]:
    ns = ctx.ns
    graph = ep.graph
    r = Renderer({n: n.name for n in graph.nodes}, ns)
    for n in graph.constants:
        ns.setdefault(n.name, n.meta["value"])
    feeds = ["%r: _feed(%s, %s)" % (name, n.name, n.dtype is None)
             for name, n in ex.user_inputs]
    feeds += ["%r: _feed(%s, False)" % (name, n.name) for name, n in ex.state_inputs]
    lines = ["_res = _S.run(None, {%s})" % ", ".join(feeds)]
    by_name = {n.name: n for n in graph.nodes}
    targets = []
    for i, o in enumerate(graph.outputs):
        targets.append(o.name if type(o) is Node else "_")
    for s in ep.graph_signature.output_specs[len(graph.outputs):]:
        targets.append(by_name[s.name].name)
    if targets:
        lines.append("%s, = _res" % ", ".join(targets))
    return lines + ctx.finish(r)


def compile_session(ep):
    """The compiled callable (see the module docstring)."""
    ex = build(ep, guards=False, state_as_inputs=True)
    rec = CompiledOnnx()
    rec.model = ex.model
    try:
        rec.session = make_session(ex.model)
    except Exception as e:       # onnxruntime refuses the model: say which program
        raise UserError("onnxruntime could not load the model of %s: %s" % (ep.name, e)) \
            from None
    ns: Dict[str, Any] = {"np": np, "_ndarray": np.ndarray, "_rt": _runtime,
                          "_S": rec.session, "_feed": _feed}
    spec = program_spec(ep, label="onnxruntime", namespace=ns)
    write(spec, lambda ctx: _body(ctx, ep, ex), record=rec)
    fn = attach(rec, "onnxruntime", ep)
    fn.model = ex.model
    fn.session = rec.session
    fn.save = _no_save
    return fn


def _no_save(path: str):
    raise UserError("a program compiled with backend='onnxruntime' is saved as its model: "
                    "ep.to_onnx(path)")
