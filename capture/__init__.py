"""symshape.capture: tracing NumPy programs into functional graphs with symbolic shapes.

``STAGES`` holds what an ExportedProgram hands its later stages to, all in
``symshape.codegen``, a layer above capture: ``"module"`` (the plain-Python function
``ep.module()`` runs), ``"print"`` (the graph as text), ``"validate_generated"`` (translation
validation of the generated checks at export), ``"compile"`` and ``"draw"``; and
``"run_decompositions"`` (``decomp.py``, which builds on ``program.py``); and ``"evaluate"``
(a stretch of the graph being traced run on the example's values, ``examples.py``); and
``"state_guards"`` (the straight-line check of a program's Python state guards,
``state/stateprog.py``).  The public
``symshape`` module fills it at import, so nothing in capture/ imports the code generator.
"""
from typing import Callable, Dict

from symshape.userframe import register_package

register_package(__file__)

STAGES: Dict[str, Callable] = {}
