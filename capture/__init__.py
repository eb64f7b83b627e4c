"""symshape.capture: tracing NumPy programs into functional graphs with symbolic shapes.

``STAGES`` holds what an ExportedProgram hands its later stages to: ``"compile"`` and
``"draw"`` (the code generator and the drawing, ``symshape.codegen``, a layer above capture)
and ``"run_decompositions"``
(``decomp.py``, which builds on ``program.py``).  The public ``symshape`` module fills it at
import, so program.py imports neither.
"""
from typing import Callable, Dict

from symshape.userframe import register_package

register_package(__file__)

STAGES: Dict[str, Callable] = {}
