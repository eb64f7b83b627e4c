"""One trace's Python state, through one entry point: ``StateSession``.

Export and the JIT (which traces through export) call the same three steps, in this
order, whatever the program does with state:

- ``bind(f, inputs)``: walk what ``f`` reaches (capture/state/binding.py), put traced
  stand-ins for state arrays, recording stand-ins for containers and objects
  (capture/state/objstate.py), and record the arguments that are containers or objects;
  then ``start()`` snapshots what the recorder cannot see and returns the state views;
- the trace runs inside ``recording()``;
- ``finish(tracer, views)`` turns what was read and written into the run-time program
  (guards, state reads, replayed writes: capture/state/stateprog.py), and ``restore()``
  (always, in a ``finally``) puts every user object back as it was.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, Optional

from . import stateprog, stateviews
from .binding import StateBinding
from .objstate import Recorder


class StateSession:
    """The state side of one trace (see the module's doc).  ``tracked``: paths of scalar
    state read as tracked numbers (known from an earlier trace); ``stand_in``: objects the
    tracer sees through (a random generator)."""

    def __init__(self, make_proxy: Callable, stand_in: Optional[Callable],
                 tracked: frozenset = frozenset()) -> None:
        self.tracked = tracked
        self.recorder = Recorder(tracked)
        self.binding = StateBinding(make_proxy, stand_in, self.recorder)

    def bind(self, f, inputs: Dict[str, Any], recorded: Callable[[Any], bool]) -> dict:
        """Walk ``f``'s reach; the inputs with each argument ``recorded(v)`` accepts (a
        container, an object of the user's) recorded like state."""
        self.binding.bind(f)
        return {name: self.binding.bind_argument(name, v) if recorded(v) else v
                for name, v in inputs.items()}

    def start(self, tracer) -> list:
        """The walk is done: the state arrays that are views of others (aliased as in
        NumPy), and the snapshots of what the recorder cannot see."""
        views = stateviews.alias_views(self.binding, tracer)
        self.recorder.start()
        return views

    @contextlib.contextmanager
    def recording(self):
        """Reads and writes of state are recorded inside."""
        with self.recorder:
            yield self

    @property
    def global_dicts(self) -> list:
        """The module namespaces of the functions reached (routed while tracing)."""
        return self.binding.global_dicts

    def finish(self, tracer, views, returned=None):
        """``(StateProgram, paths to trace again as tracked numbers)`` for this trace
        (``returned``: what the function returned, its state containers given back as
        the user's objects)."""
        rec = self.recorder
        rec.global_effects()
        global_reads = self.binding.root_reads
        again = stateprog.scalar_writes(rec, global_reads) - self.tracked
        return stateprog.from_trace(rec, self.binding, tracer, global_reads, views,
                                    returned), again

    def restore(self) -> None:
        """Put every user object back (identity and values); never raises half-way."""
        try:
            self.binding.restore()
        finally:
            self.recorder.restore()
