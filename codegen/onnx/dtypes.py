"""NumPy dtypes as ONNX element types, and the dtypes onnxruntime's CPU kernels run.

``ELEM`` is the one table: each NumPy dtype the exporter writes, with its ONNX element type.
Complex numbers, strings, datetimes and structured dtypes have no exact form that
onnxruntime runs: a value of such a dtype is refused at ``to_onnx`` (``onnx_type``).

``WIDER`` says in which dtype an op computes when onnxruntime has no kernel for the
NumPy dtype itself, where that is exact: integers are computed in a wider integer and cast
back (two's complement arithmetic wraps the same way modulo 2**bits, and the cast back
truncates as NumPy's own wrapping does); float16 is computed in float32 and rounded back,
which is what NumPy's own float16 loops do.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np
from onnx import TensorProto

from symshape.errors import UserError

#: NumPy dtype name -> ONNX element type
ELEM: Dict[str, int] = {
    "bool": TensorProto.BOOL,
    "int8": TensorProto.INT8, "int16": TensorProto.INT16,
    "int32": TensorProto.INT32, "int64": TensorProto.INT64,
    "uint8": TensorProto.UINT8, "uint16": TensorProto.UINT16,
    "uint32": TensorProto.UINT32, "uint64": TensorProto.UINT64,
    "float16": TensorProto.FLOAT16, "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
}

#: the dtypes in the order the coverage table lists them
DTYPES = tuple(np.dtype(n) for n in ELEM)

#: where an op computes when onnxruntime lacks the dtype's kernel (exact: module docstring)
WIDER: Dict[str, str] = {
    "bool": "uint8", "int8": "int32", "int16": "int32", "int32": "int64",
    "uint8": "int32", "uint16": "int32", "uint32": "int64", "float16": "float32",
}

INT64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)


def supported(dt) -> bool:
    """Whether values of dtype ``dt`` can travel in the model."""
    return dt is not None and np.dtype(dt).name in ELEM


def onnx_type(dt, what: str = "a value") -> int:
    """The ONNX element type of ``dt``, or UserError naming ``what`` and what to do."""
    name = np.dtype(dt).name if dt is not None else "None"
    got = ELEM.get(name)
    if got is None:
        raise UserError("%s has dtype %s, which has no exact ONNX form that onnxruntime runs; "
                        "cast it (x.astype(np.float64)) before it reaches the program, or keep "
                        "this program on ep.compile()" % (what, name))
    return got


def compute_dtype(dt: np.dtype, native) -> Optional[np.dtype]:
    """The dtype an op computes ``dt`` in: ``dt`` itself when its name is in ``native``,
    else the widening chain of ``WIDER`` until one is (None: no exact way)."""
    seen = np.dtype(dt)
    while seen.name not in native:
        nxt = WIDER.get(seen.name)
        if nxt is None:
            return None
        seen = np.dtype(nxt)
    return seen


def kind(dt) -> str:
    """``b`` bool, ``i`` signed, ``u`` unsigned, ``f`` float."""
    return np.dtype(dt).kind
