"""What the model file says about the program besides its graph: ``metadata_props``.

* ``symshape.contract``: JSON ``{"symbols": [{"name", "axes", "range"}], "guards": [...]}``:
  each size symbol by the name its ``dim_param`` uses, the input axes it appears on (and
  as what: ``x.shape[0] = batch``, ``y.shape[0] = 2*batch + 1``), its range (``[lo, hi]``,
  ``null`` for no upper bound), then the guards the ranges and shapes cannot say, in the
  user's names;
* ``symshape.signature``: JSON ``{"inputs": [...], "outputs": [...]}``, one entry per graph
  input and output in graph order, ``{"name": <graph name>, "kind": <kind>, "path": <user
  path>}``, kinds ``USER_INPUT`` / ``STATE`` / ``USER_OUTPUT`` / ``STATE_MUTATION`` /
  ``USER_INPUT_MUTATION``.
"""
from __future__ import annotations

import json
from typing import Dict, List

from symshape.contract import published
from symshape.algebra.infinity import is_inf

from .sizes import DimText

CONTRACT_KEY = "symshape.contract"
SIGNATURE_KEY = "symshape.signature"


def _bound(v):
    return None if is_inf(v) else int(v)


def contract_json(ep, dims: DimText) -> str:
    """The ``symshape.contract`` entry of ``ep``."""
    cs = ep.constraints
    axes: Dict[object, List[str]] = {}
    for d in cs.inputs:
        if not d.is_array:
            if d.sym is not None:
                for s in getattr(d.sym, "free_symbols", ()):
                    axes.setdefault(s, []).append("%s = %s" % (d.path, dims.text(d.sym)))
            continue
        for i, e in enumerate(d.dims):
            if type(e) is int:
                continue
            for s in e.free_symbols:
                axes.setdefault(s, []).append("%s.shape[%d] = %s" % (d.path, i, dims.text(e)))
    symbols = []
    ranges = cs.range_constraints()
    for s in sorted(axes, key=lambda s: s.index):
        vr = ranges.get(s.expr) if s.expr in ranges else ranges.get(s)
        rng = [_bound(vr.lower), _bound(vr.upper)] if vr is not None else [0, None]
        symbols.append({"name": dims.name(s), "axes": axes[s], "range": rng})
    return json.dumps({"symbols": symbols, "guards": published.guards(cs)})


def signature_json(inputs: List[dict], outputs: List[dict]) -> str:
    """The ``symshape.signature`` entry: ``inputs`` / ``outputs`` as built by the exporter."""
    return json.dumps({"inputs": inputs, "outputs": outputs})


def output_paths(spec, prefix: str = "") -> List[str]:
    """The path of each output leaf in ``f``'s output structure (``[0]``, ``['logits']``;
    ``""`` for a single array)."""
    if spec == ("leaf",):
        return [prefix]
    if spec[0] == "dict":
        out: List[str] = []
        for k, c in zip(spec[1], spec[2]):
            out.extend(output_paths(c, "%s[%r]" % (prefix, k)))
        return out
    children = spec[2] if spec[0] == "namedtuple" else spec[1]
    out = []
    for i, c in enumerate(children):
        out.extend(output_paths(c, "%s[%d]" % (prefix, i)))
    return out
