"""symshape.codegen: graphs to shape-polymorphic code, and the JIT.

``compile_program(ep, backend)`` turns an ExportedProgram into a callable (``ep.compile``);
``jit.compile`` and ``explain.explain`` are the torch.compile-style entry points
(``ss.compile``, ``ss.explain``).  Backends live in one registry:
``register_backend(name, factory)``, where ``factory(ep)`` returns the compiled callable.
For ``ss.compile`` that callable also carries ``.compiled`` with ``input_check`` (the
records of the input check, ``symshape.contract.input_check.InputCheck``, which the JIT renders into its
dispatcher), ``check_lines`` (the same rendered as the backend runs them), ``core`` (the
body taking the parameters then the bound size symbols), ``param_names``, ``sym_names``,
``ns`` (its ``_ndarray``) and ``source`` (see ``numpy_backend.CompiledProgram``).
"""
from __future__ import annotations

from typing import Callable, Dict

from symshape.errors import UserError
from symshape.userframe import register_package

from .artifact import attach
from .numpy_backend import generate_program

register_package(__file__)

_BACKENDS: Dict[str, Callable] = {}


def register_backend(name: str, factory: Callable) -> None:
    """Make ``backend=name`` available: ``factory(ep)`` returns the compiled callable."""
    _BACKENDS[name] = factory


def get_backend(name) -> Callable:
    """The factory of a backend, or UserError naming why it cannot be used."""
    if not isinstance(name, str):
        raise UserError("backend must be a string such as 'numpy', got %r" % (name,))
    got = _BACKENDS.get(name)
    if got is not None:
        return got
    raise UserError("unknown backend %r; available backends: %s"
                    % (name, ", ".join(repr(b) for b in sorted(_BACKENDS))))


def compile_program(ep, backend: str = "numpy"):
    """Generated code for ``ep``, shape-polymorphic over its whole valid range."""
    return get_backend(backend)(ep)


def _numpy_factory(ep):
    return attach(generate_program(ep), "numpy", ep)


register_backend("numpy", _numpy_factory)


def _cupy_factory(ep):
    # generating the kernels needs no device; calling the result without CuPy or a CUDA
    # device raises UserError saying which (why here: the CUDA target loads only for it)
    from .cuda import compile_cupy
    from symshape.capture.stateprog import refuse_writes
    refuse_writes(ep, "cupy")
    return compile_cupy(ep)


register_backend("cupy", _cupy_factory)


def _dask_factory(ep):
    # dask is an optional extra: without it this raises UserError saying how to install it
    from .dask_backend import compile_dask, require_dask
    require_dask()
    from symshape.capture.stateprog import refuse_writes
    refuse_writes(ep, "dask")
    return compile_dask(ep)


register_backend("dask", _dask_factory)


def _numba_factory(ep):
    # numba is an optional extra: without it this raises UserError saying how to install it
    from .numba_backend import compile_numba
    return compile_numba(ep)


register_backend("numba", _numba_factory)


def _onnxruntime_factory(ep):
    # onnx and onnxruntime are an optional extra: without them this raises UserError
    from .onnx import compile_onnxruntime
    return compile_onnxruntime(ep)


register_backend("onnxruntime", _onnxruntime_factory)
