"""``ss.compile(f, verify=True)``: each call of the compiled function checked against the
eager function run on deep copies (capture/state/verify.py), the message naming the form
that ran the call (a compiled variant, the segments between graph breaks, or eager)."""
from __future__ import annotations

import functools

from symshape.capture.state.verify import verified_call


def _ran(cf, before: tuple) -> str:
    """Which form of ``cf`` ran a call, from its call counts ``before`` it."""
    counts, breaks = before
    name = cf._name
    for i, (a, b) in enumerate(zip(counts, cf._counts)):
        if b > a:
            return "compiled variant %d of ss.compile(%s)" % (i, name)
    if cf.break_calls > breaks:
        return "the compiled segments of ss.compile(%s) between its graph breaks (%s)" % (
            name, "; ".join(cf.break_reasons) or "see cf.report()")
    return "ss.compile(%s) eagerly" % name


def verifying_call(cf, *args, **kwargs):
    """``__call__`` of a compiled function in the verify mode: its dispatcher
    (``_ss_dispatch``), checked against eager."""
    before = (list(cf._counts), cf.break_calls)
    return verified_call(cf._f, functools.partial(type(cf)._ss_dispatch, cf), args, kwargs,
                         lambda: _ran(cf, before))
