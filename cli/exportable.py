"""``@ss.exportable(example_inputs=..., dynamic_shapes=...)``: declare an export for CI.

The decorator only records the declaration (the function, its example inputs and spec, and
the file and line of the decorator call) in a process-wide registry that ``symshape check``
reads after importing the user's modules; it returns the function itself, unchanged, so the
decorated function behaves exactly as before.  Nothing is traced at import time.

``example_inputs`` is a tuple of positional example arguments (as for ``export``), or a
zero-argument callable returning one (to build large examples lazily, when checked);
``example_kwargs`` an optional dict of keyword example arguments.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..errors import UserError


class Declaration:
    """One declared export: where it was declared, and what to call ``export`` with."""

    __slots__ = ("fn", "example_inputs", "example_kwargs", "dynamic_shapes", "file", "line",
                 "module", "qualname", "origin", "index", "error", "call_line")

    def __init__(self, fn: Optional[Callable], example_inputs, dynamic_shapes, file: str,
                 line: int, module: str, qualname: str, example_kwargs=None,
                 origin: str = "python", index: Optional[int] = None,
                 error: Optional[str] = None) -> None:
        self.fn = fn
        self.example_inputs = example_inputs
        self.example_kwargs = example_kwargs
        self.dynamic_shapes = dynamic_shapes
        self.file = file            # absolute path of the file holding the spec
        self.line = line            # line of the spec (decorator call / TOML entry)
        self.module = module
        self.qualname = qualname
        self.origin = origin        # "python" (decorator) or "toml" ([tool.symshape])
        self.index = index          # TOML: position among [[tool.symshape.exports]]
        self.error = error          # TOML: why the entry could not be loaded
        # the line of the ``exportable(...)`` call when it differs from ``line`` (the
        # decorator site): a reusable ``spec = ss.exportable(...)`` or a wrapper
        self.call_line: Optional[int] = None

    @property
    def name(self) -> str:
        return "%s:%s" % (self.module, self.qualname)

    def inputs(self) -> Tuple[tuple, dict]:
        """The example ``(args, kwargs)``, calling a lazy ``example_inputs`` if needed."""
        args = self.example_inputs
        if callable(args):
            args = args()
        if isinstance(args, list):
            args = tuple(args)
        if not isinstance(args, tuple):
            args = (args,)
        return args, dict(self.example_kwargs or {})

    def __repr__(self) -> str:
        return "<Declaration %s at %s:%d>" % (self.name, self.file, self.line)


# (absolute file, line, module, qualname) -> Declaration, in registration order (stacked
# decorators on one function declare several exports of it)
_REGISTRY: Dict[Tuple[str, int, str, str], Declaration] = {}


def registered() -> List[Declaration]:
    return list(_REGISTRY.values())


def exportable(fn: Optional[Callable] = None, *, example_inputs: Any = None,
               dynamic_shapes: Any = None, example_kwargs: Optional[dict] = None):
    """Declare ``fn`` as an export that ``symshape check`` validates.

    ``@ss.exportable(example_inputs=(x,), dynamic_shapes={"x": (batch, None)})`` -- the
    arguments are those of ``ss.export(fn, example_inputs, example_kwargs,
    dynamic_shapes=...)``.  Returns ``fn`` unchanged.
    """
    if fn is not None and not callable(fn):
        raise UserError("exportable: use it as @exportable(example_inputs=..., "
                        "dynamic_shapes=...); got a positional %s" % type(fn).__name__)
    if example_inputs is None:
        raise UserError("exportable needs example_inputs=(...): the example arguments that "
                        "export traces the function with")
    if example_kwargs is not None and not isinstance(example_kwargs, dict):
        raise UserError("exportable: example_kwargs must be a dict, got %s"
                        % type(example_kwargs).__name__)
    # the calling frames, innermost first: a wrapper around exportable is declared where the
    # user applies it, in the decorated function's own file
    stack: List[Tuple[str, int]] = []
    frame = sys._getframe(1)
    while frame is not None and len(stack) < 50:
        stack.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    call_file, call_line = os.path.abspath(stack[0][0]), stack[0][1]

    def register(f: Callable) -> Callable:
        if not callable(f):
            raise UserError("exportable decorates a function, got %s" % type(f).__name__)
        module = getattr(f, "__module__", None) or "__main__"
        qualname = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or \
            "%s.__call__" % type(f).__qualname__    # a callable object: never its address
        code = getattr(f, "__code__", None)
        own = os.path.abspath(code.co_filename) if code is not None else call_file
        file, line = call_file, call_line
        if own != call_file:
            site = [(os.path.abspath(fl), ln) for fl, ln in stack[1:]
                    if os.path.abspath(fl) == own]
            if not site:    # applied from a third place: where register() was called
                outer = sys._getframe(1)
                site = [(os.path.abspath(outer.f_code.co_filename), outer.f_lineno)]
            file, line = site[0]
        decl = Declaration(f, example_inputs, dynamic_shapes, file, line, module, qualname,
                           example_kwargs)
        if (file, line) != (call_file, call_line):
            decl.call_line = call_line if file == call_file else None
        _REGISTRY[(file, line, module, qualname)] = decl
        return f

    if fn is not None:
        return register(fn)
    return register
