"""A raw ``TypeError`` / ``AttributeError`` (or NumPy's ``ValueError`` for a traced value
stored into a plain array) that a traced array caused in code that cannot take one
(``np.ma``, a Cython function: "No matching signature found") becomes a ``UserError``
naming the last line of the user's (or library's) code it passed through.

Two signs that the traced array is the cause, never a guess on the user's own errors: the
message names the traced array's class, or the innermost Python frame was *calling*
something (compiled code raised, not a ``raise`` statement) while holding a traced array.
"""
from __future__ import annotations

import dis
import os

from symshape.errors import UserError, where
from symshape.userframe import UserFrame, traceback_user_frame

from .tracer import TracedArray

_CALLS = frozenset(("CALL", "PRECALL", "CALL_KW", "CALL_FUNCTION", "CALL_FUNCTION_KW",
                    "CALL_FUNCTION_EX", "CALL_METHOD"))


def _cython(tb) -> bool:
    """A frame Cython made for its compiled code (its tracebacks name ``<stringsource>`` or
    the ``.pyx`` source): compiled code, not Python bytecode."""
    name = tb.tb_frame.f_code.co_filename
    return name == "<stringsource>" or name.endswith((".pyx", ".pxd", ".pxi"))


def _python_caller(tb):
    """The innermost traceback entry that is Python bytecode (the caller of Cython code
    when the exception came out of it)."""
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    while len(frames) > 1 and _cython(frames[-1]):
        frames.pop()
    return frames[-1]


def _compiled_call_with_traced(tb) -> bool:
    frame = tb.tb_frame
    op = next((i.opname for i in dis.get_instructions(frame.f_code)
               if i.offset == tb.tb_lasti), None)
    return op in _CALLS and any(type(v) is TracedArray for v in frame.f_locals.values())


_MASKED = os.sep + os.path.join("numpy", "ma") + os.sep


def _through_masked_arrays(tb) -> bool:
    """Whether the exception came through ``numpy.ma``'s code (``np.ma.atleast_2d(x)``)."""
    while tb is not None:
        if _MASKED in tb.tb_frame.f_code.co_filename:
            return True
        tb = tb.tb_next
    return False


def _stored_into_plain_array(e: BaseException, tb) -> bool:
    """NumPy's ``ValueError`` for ``q[0] = <traced value>`` where ``q`` is a plain array (a
    traced array looks like a sequence to NumPy's item assignment): raised at a subscript
    store of a frame holding a traced array."""
    if not isinstance(e, ValueError) or "setting an array element with a sequence" not in \
            str(e):
        return False
    op = next((i.opname for i in dis.get_instructions(tb.tb_frame.f_code)
               if i.offset == tb.tb_lasti), None)
    return op == "STORE_SUBSCR" and any(type(v) is TracedArray
                                        for v in tb.tb_frame.f_locals.values())


def raise_untraceable(e: BaseException) -> None:
    """Raise the ``UserError`` that stands for ``e`` when a traced array caused it; return
    otherwise (the caller re-raises ``e``)."""
    if isinstance(e, UserError) or e.__traceback__ is None:
        return
    caller = _python_caller(e.__traceback__)
    if _stored_into_plain_array(e, caller):
        code = caller.tb_frame.f_code
        raise UserError(
            "a traced value is written into a plain NumPy array%s: an array made from numbers "
            "(np.array([1.0, 0.0])) is not a value of the program, so it cannot hold one. "
            "Make it with np.zeros / np.ones / np.full, which the program owns while tracing, "
            "or build it from the traced values (np.stack, np.concatenate)"
            % where(UserFrame(code.co_filename, caller.tb_lineno, code.co_name))) from e
    if isinstance(e, ValueError):
        return
    text = str(e)
    if "TracedArray" not in text and not _compiled_call_with_traced(caller):
        return
    frame = traceback_user_frame(e.__traceback__)
    if frame is None or caller.tb_next is not None:     # it came out of Cython: its caller
        code = caller.tb_frame.f_code
        frame = UserFrame(code.co_filename, caller.tb_lineno, code.co_name)
    text = text.replace("<class 'symshape.capture.tracer.TracedArray'>", "a traced array")
    if _through_masked_arrays(e.__traceback__):
        raise UserError("numpy.ma (masked arrays) cannot be traced%s: a masked array carries "
                        "a mask beside its values, which the program does not model (%s: %s). "
                        "Call the masked-array code outside the traced function, with the "
                        "masked values filled or removed first (np.ma.filled / "
                        "np.ma.compressed), and trace what runs on plain arrays"
                        % (where(frame), type(e).__name__,
                           text.replace("TracedArray", "traced array"))) from e
    raise UserError("a traced array reached code that cannot take one%s (%s: %s); call that "
                    "code outside the traced function, or wrap it in ss.custom_op with a fake "
                    "(shape) function" % (where(frame), type(e).__name__,
                                          text.replace("TracedArray", "traced array"))) from e
