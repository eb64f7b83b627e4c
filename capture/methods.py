"""The ops behind traced arrays' methods and operators (``x[i]``, ``x.astype``, ``x.item()``)
and the few ops one op family reaches in another that sits above it: name ->
handler(tracer, ...).  The op modules (capture/ops, capture/array_api) fill it on import; the
tracer and views.py, which they build on, look ops up here and so never import them."""
from __future__ import annotations

from typing import Callable, Dict

METHOD_OPS: Dict[str, Callable] = {}
