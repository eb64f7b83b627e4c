"""symshape: symbolic shapes, guards and export for plain NumPy programs.

The public surface: ``export``, ``Dim`` / ``dims``, ``check``, ``cond``,
``compile``, the error classes, ``save`` / ``load``.
"""
from __future__ import annotations

from symshape.sizes.checks import check
from symshape.specs.dims import Dim, dims
from symshape.errors import (CompileFallbackWarning, ConstraintViolationError, FrozenValueWarning,
                     GuardOnDataDependentError, ProjectError, RecompileError,
                     RecompileLimitWarning, SharedInputsError, StateGuardFailure, UserError,
                     ValueDependentDtypeError, VerifyError)
from symshape.cli.exportable import exportable
from symshape.algebra.infinity import int_oo
from symshape.logs import set_logs
from symshape.algebra.ranges import ValueRange
from symshape.sizes.symint import SymBool, SymInt, sym_max, sym_min
from symshape.sizes import floatint as _floatint
from symshape import version as _version

__version__ = _version.__version__
_floatint.install()     # int() / math.floor of symbolic floats give symbolic sizes


def export(f, args=(), kwargs=None, *, dynamic_shapes=None):
    """Trace ``f(*args, **kwargs)`` into an ExportedProgram with symbolic shapes.

    ``dynamic_shapes`` marks axes dynamic, as torch.export's does: a dict keyed by parameter
    name or a tuple in argument order; per axis ``Dim("n", min=, max=)``, a derived dim
    (``2*d + 1``), ``Dim.AUTO``, ``Dim.DYNAMIC``, ``Dim.STATIC``, an int or None.  Arrays the
    function reaches from outside its arguments are traced as model state.  Raises
    ConstraintViolationError, with verified suggested fixes, when the spec allows more than
    the program does.  The program: ``ep.module()`` (checks inputs, then runs),
    ``ep.compile()``, ``ep.range_constraints``, ``ep.guards``, ``print(ep)``; see docs/api.md.
    """
    # why here: import symshape loads the engine only; this on first use
    from symshape.capture.export import export as _export
    return _export(f, args, kwargs, dynamic_shapes=dynamic_shapes)


def map(fn, xs, *args):
    """``np.stack([fn(x, *args) for x in xs])``, kept as one node while tracing."""
    # why here: import symshape loads the engine only; this on first use
    from symshape.capture.control import map as _map
    return _map(fn, xs, *args)


def while_loop(cond_fn, body_fn, carried_inputs):
    """``while cond_fn(*vals): vals = body_fn(*vals)``, kept as one node while tracing."""
    # why here: import symshape loads the engine only; this on first use
    from symshape.capture.control import while_loop as _while_loop
    return _while_loop(cond_fn, body_fn, carried_inputs)


def cond(pred, true_fn, false_fn, operands=()):
    """Data-dependent branch kept in the graph (both branches traced); outside tracing it
    runs the chosen branch."""
    # why here: import symshape loads the engine only; this on first use
    from symshape.capture.control import cond as _cond
    return _cond(pred, true_fn, false_fn, operands)


def custom_op(name, fn=None, *, mutates_args=()):
    """Register a NumPy function as an opaque op kept as one node by export
    (``@ss.custom_op("lib::name")``; give its shapes with ``@op.register_fake``)."""
    # why here: import symshape loads the engine only; this on first use
    from symshape.capture.custom import custom_op as _custom_op
    return _custom_op(name, fn, mutates_args=mutates_args)


def save(ep, path, *, format=None):
    """Write an ExportedProgram to ``path``: a ZIP archive of the program as JSON text and
    its arrays as raw bytes (``format="json"``: one JSON text file); no pickle."""
    # why here: import symshape loads the engine only; this on first use
    from symshape.capture.serialize import save as _save
    return _save(ep, path, format=format)


def load(path, *, mmap_mode=None, verify=None, generators=None):
    """Read a program written by ``save``; needs neither the original function nor its
    source (custom ops it uses must be registered).  ``mmap_mode`` ('r', 'r+', 'c') maps
    the arrays from disk instead of reading them; ``generators`` ({path: rng}) gives the
    random generators a program drew from as model state (others are fresh, unseeded)."""
    # why here: import symshape loads the engine only; this on first use
    from symshape.capture.serialize import load as _load
    return _load(path, mmap_mode=mmap_mode, verify=verify, generators=generators)


def compile(f=None, *, dynamic=None, backend="numpy", fullgraph=False, cache_size_limit=8,
            verify=None):
    """Just-in-time compile ``f``: trace on the first call, cache compiled code behind
    guards, recompile when a guard fails (recording it as the reason), make an axis dynamic
    once it has changed (``dynamic=None``); ``dynamic=True``: every axis dynamic from the
    start; ``False``: one variant per shape.  Graph breaks (``print``, data-dependent
    branches, untraceable calls) run eagerly unless ``fullgraph=True``: the function is
    split at them once, and the code between them runs as compiled segments.
    ``verify=True`` (default: the ``SYMSHAPE_VERIFY`` environment variable) runs the eager
    function too, on deep copies, and raises ``VerifyError`` at the first difference."""
    # why here: import symshape loads the engine only; this on first use
    from symshape.codegen.jit import compile as _compile
    return _compile(f, dynamic=dynamic, backend=backend, fullgraph=fullgraph,
                    cache_size_limit=cache_size_limit, verify=verify)


def explain(f, *args, **kwargs):
    """Run ``f(*args, **kwargs)`` through the compiler and report its graphs, graph breaks
    (``file:line: reason``) and op counts."""
    # why here: import symshape loads the engine only; this on first use
    from symshape.codegen.explain import explain as _explain
    return _explain(f, *args, **kwargs)


def chunkable_axes(ep):
    """Per input path of ``ep``, the axes along which the whole program is local: chunked
    along them (``backend="dask"``), each chunk runs the whole program as one task
    (``{"x": (0,), "w": ()}``)."""
    # why here: import symshape loads the engine only; this on first use
    from symshape.codegen.chunking import chunkable_axes as _chunkable_axes
    return _chunkable_axes(ep)


__all__ = ["export", "cond", "compile", "explain", "map", "while_loop", "Dim", "dims", "check", "UserError", "ConstraintViolationError",
           "GuardOnDataDependentError", "int_oo", "ValueRange", "set_logs", "SymInt",
           "SymBool", "sym_min", "sym_max", "exportable"]
__all__ += ["custom_op", "save", "load", "SharedInputsError", "VerifyError"]
__all__ += ["chunkable_axes"]
# every error a user catches and every warning category a user filters, by name
__all__ += ["StateGuardFailure", "RecompileError", "VerifyError", "ProjectError",
            "ValueDependentDtypeError", "CompileFallbackWarning", "RecompileLimitWarning", "FrozenValueWarning"]
from symshape.reasoning.symbolic import bounds, symbolic_shape  # noqa: E402  (symbolic sizes outside export)
__all__ += ["symbolic_shape", "bounds"]


def from_annotations(f, *, dims=None):
    """The ``dynamic_shapes`` that ``f``'s jaxtyping shape annotations mean
    (``Float[np.ndarray, "batch seq 64"]``); export also proves its return annotation."""
    # why here: the annotation reader loads on first use, as the face's other entry points
    from symshape.specs.annotations import from_annotations as _from_annotations
    return _from_annotations(f, dims=dims)


__all__ += ["from_annotations"]


# the face wires ExportedProgram's later stages (capture/__init__.py says why)
def _run_decompositions(ep, table):
    # why here: import symshape loads the engine only; this on first use
    from symshape.capture.decomp import run_decompositions
    return run_decompositions(ep, table)


def _compile_program(ep, backend):
    # why here: import symshape loads the engine only; this on first use
    from symshape.codegen import compile_program
    return compile_program(ep, backend)


def _draw_program(ep, path):
    # why here: import symshape loads the engine only; this on first use
    from symshape.codegen.draw import program_picture, write
    return write(program_picture(ep), path)


def _module_function(ep):
    # why here: import symshape loads the engine only; this on first use
    from symshape.codegen.pycode import build_function
    return build_function(ep)


def _graph_lines(graph):
    # why here: import symshape loads the engine only; this on first use
    from symshape.codegen.graph_text import graph_lines
    return graph_lines(graph)


def _validate_generated(env, cs, graph, writer):
    # why here: import symshape loads the engine only; this on first use
    from symshape.codegen.generated_checks import validate_generated
    validate_generated(env, cs, graph, writer)


def _state_guards(program):
    # why here: import symshape loads the engine only; this on first use
    from symshape.codegen.state_guards import fast_check
    return fast_check(program)


def _to_onnx(ep, path, opset, guards):
    # why here: onnx is an optional extra, loaded on first use
    from symshape.codegen.onnx import to_onnx
    return to_onnx(ep, path, opset=opset, guards=guards)


# what an ExportedProgram hands to the code generator, a layer above the tracer: ``module()``
# is the plain-Python target of the writer the backends use, ``print(ep)`` its text form
from symshape.capture import STAGES as _STAGES  # noqa: E402
from symshape.codegen.pycode import evaluate as _evaluate_nodes  # noqa: E402
from symshape.capture.ir import Graph as _Graph  # noqa: E402
_STAGES.update(run_decompositions=_run_decompositions, compile=_compile_program,
               draw=_draw_program, module=_module_function, print=_graph_lines,
               validate_generated=_validate_generated, to_onnx=_to_onnx,
               evaluate=_evaluate_nodes, state_guards=_state_guards)
_Graph.printer = _graph_lines
__all__ += ["ExportedProgram"]


def __getattr__(name):
    # ``ss.ExportedProgram`` for annotations, without importing the tracer at ``import symshape``
    if name == "ExportedProgram":
        # why here: import symshape loads the engine only; this on first use
        from symshape.capture.program import ExportedProgram
        return ExportedProgram
    raise AttributeError("module 'symshape' has no attribute %r" % name)
