"""symshape.codegen.onnx: an exported program as an ONNX model with its contract inside,
and ``backend="onnxruntime"``.

``to_onnx(ep, path=None, *, opset=18, guards=True)`` is ``ep.to_onnx``;
``compile_onnxruntime(ep)`` is ``ep.compile(backend="onnxruntime")``.  Both need the
optional extra ``onnx`` (``pip install "symshape[onnx]"``: onnx and onnxruntime); without
it they raise ``UserError`` saying so.  The modules: ``dtypes`` (dtype table), ``graph``
(writing ONNX graphs), ``sizes`` (dim_param text, sizes in the graph), ``context`` (what a
rule sees, refusals), ``elementwise`` / ``arith`` / ``movement`` / ``reductions`` /
``datadep`` / ``control`` (the rules), ``rules`` (the op table), ``guards`` (the contract
in the graph), ``metadata``, ``export`` (the whole model), ``session`` (the backend),
``coverage`` (the op and dtype table of the docs), ``translations`` (the user's own).
"""
from __future__ import annotations

from symshape.errors import UserError

INSTALL_HINT = 'ONNX export needs onnx and onnxruntime: pip install "symshape[onnx]"'


def require_onnx():
    """(onnx, onnxruntime), or UserError naming the extra."""
    try:
        import onnx
        import onnxruntime
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    return onnx, onnxruntime


def register_translation(op: str, fn):
    """Export op ``op`` (an ``ss.custom_op`` name such as ``"mylib::scale"``, or any op the
    exporter refuses) with ``fn(g, *inputs, **attrs)``, which writes ONNX nodes with
    ``g.op(op_type, *inputs, **attrs)`` and returns the result's name (``translations``)."""
    from .translations import register_translation as register
    register(op, fn)


def to_onnx(ep, path=None, *, opset: int = 18, guards: bool = True):
    """``ep`` as an ``onnx.ModelProto`` (written to ``path`` when given): sizes as
    ``dim_param`` in the user's names, the contract checked in the graph (``guards``) and
    described in ``metadata_props``; refuses ops without an exact ONNX form."""
    onnx, _ = require_onnx()
    from .export import build
    model = build(ep, opset=opset, guards=guards).model
    if path is not None:
        onnx.save(model, str(path))
    return model


def compile_onnxruntime(ep):
    """``ep.compile(backend="onnxruntime")``: the model in an onnxruntime session behind
    the same input check as ``ep.module()``, writes back as ``module()`` does."""
    require_onnx()
    from .session import compile_session
    return compile_session(ep)
