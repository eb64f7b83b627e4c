"""``ss.save`` / ``ss.load``: an ExportedProgram as versioned, human-readable JSON program
text, with its arrays as raw bytes beside it.

Two file formats hold the same program document::

    {"format": "symshape.ExportedProgram", "version": 1 or 2,
     "checksum": "sha256:<hex of the canonical JSON of 'program'>",
     "program": {"name", "call_signature", "graph", "signature", "constraints"}}

* the archive (``save``'s default, version 2; capture/archive.py): the document as text at
  the head of the file, each array's raw little-endian bytes after it at its alignment
  offset, described as ``{"dtype", "shape", "offset", "nbytes", "checksum"}``.  Loading
  reads each array with one copy, or maps it (``mmap_mode``);
* the JSON text file (``format="json"``, version 1, the only format before the archive):
  arrays inline as ``{"dtype", "shape", "data"}`` with ``data`` the base64 of the bytes.

An array whose memory layout matters also has ``"strides"`` and ``"align"``
(capture/layout.py).  Values are plain JSON where JSON has the type (null, bool, int,
finite float, str) and tagged one-key objects otherwise: ``{"tuple": [...]}``,
``{"list": [...]}``, ``{"expr": "(s0 + 1)"}`` (size expressions, in the Python syntax of
generated code), ``{"slice": [start, stop, step]}``, ``{"index": [...]}``,
``{"dtype": "float32"}``, ``{"node": "name"}``, ``{"scalar": ["float32", 1.5]}``,
``{"float": "nan"}``, ``{"complex": [re, im]}``, ``{"ellipsis": true}``,
``{"subgraph": {...}}``, ``{"cond_expr": ...}``, ``{"custom_op": "lib::name"}``,
``{"float_expr": [op, [args]]}`` (a float computed from sizes, ``d ** -0.5``),
``{"ufunc": "add"}`` (a NumPy ufunc, ``np.add.at``).  Dtypes
come from a whitelist of plain numeric and bool dtypes.  Nothing is pickled.

``load`` executes nothing from the file: every string that reaches generated code (node
names, parameter names, input paths, symbol names) is checked against a strict grammar,
expressions are parsed with ``ast`` into size expressions (never evaluated), and every op
must be in the op table.  Arrays are read only after the whole program has validated, and
only from inside the file.  A malformed or modified file, an unknown op or dtype, a
checksum mismatch or a newer format version raises ``UserError`` saying what is wrong.
Custom ops are stored by name and must be registered in the loading process.
"""
from __future__ import annotations

from .formats import FORMAT, MMAP_MODES, TEXT_VERSION, VERSION, SavedDefault, configured_label
from .saving import canonical, digest, dumps, save
from .decoding import ensure_op
from .loading import load, loads

__all__ = ["FORMAT", "MMAP_MODES", "TEXT_VERSION", "VERSION", "SavedDefault", "canonical",
           "configured_label", "digest", "dumps", "ensure_op", "load", "loads", "save"]
