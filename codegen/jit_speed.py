"""The JIT is never much slower than eager: a function that runs through graph breaks is
timed against eager Python over its first calls, and when its compiled form (segments and
the statements that break) costs more than eager by a margin, it runs eagerly from then on
(``cf.report()`` says so, with both costs).

The two forms take turns, call by call (compiled, eager, compiled, ...), so a machine
that slows down or speeds up meanwhile slows both; each form's cost is the median of its
timed calls.  The first ``WARMUP`` calls run compiled and are not timed: they compile the
segments and their variants.  Both
forms give eager Python's results and side effects, so a call may run either.  The clock
is ``clock`` of this module: tests replace it with a scripted one, so nothing they check
depends on wall-clock time.
"""
from __future__ import annotations

import statistics
import time
from typing import Callable, List, Optional

#: the clock timing a call (``time.perf_counter``; tests script it)
clock: Callable[[], float] = time.perf_counter

#: calls run compiled, untimed, before the timing starts (they compile segments)
WARMUP = 8
#: timed calls of each form before deciding
CALLS = 8
#: the compiled form may cost this many times eager's before eager takes over (timing
#: noise on a busy machine stays under it)
MARGIN = 1.25


class SpeedCheck:
    """The timings of one compiled-with-breaks form against eager, until a verdict."""

    def __init__(self, calls: Optional[int] = None, margin: Optional[float] = None,
                 warmup: Optional[int] = None) -> None:
        # (the module's values when the check starts: a benchmark or a test sets them)
        self.calls = CALLS if calls is None else calls
        self.margin = MARGIN if margin is None else margin
        self.warmup = WARMUP if warmup is None else warmup
        self.compiled: List[float] = []
        self.eager: List[float] = []
        self.warm = 0                   # compiled calls run before the timing
        self.decided = False
        self.slower = False

    def next_form(self) -> str:
        """``"compiled"`` or ``"eager"``: which form the next call runs."""
        if self.warm < self.warmup or len(self.compiled) <= len(self.eager):
            return "compiled"
        return "eager"

    def record(self, form: str, seconds: float) -> None:
        """One call of ``form`` took ``seconds``; decides once both forms have ``calls``."""
        if form == "compiled" and self.warm < self.warmup:
            self.warm += 1
            return
        (self.compiled if form == "compiled" else self.eager).append(seconds)
        if len(self.compiled) >= self.calls and len(self.eager) >= self.calls:
            self.decided = True
            self.slower = self.compiled_cost > self.margin * self.eager_cost

    @property
    def compiled_cost(self) -> float:
        return statistics.median(self.compiled) if self.compiled else 0.0

    @property
    def eager_cost(self) -> float:
        return statistics.median(self.eager) if self.eager else 0.0

    def text(self) -> str:
        """Both per-call costs, for ``cf.report()``."""
        return "compiled with its graph breaks %.1f us per call, eager %.1f us (median of " \
            "%d calls each)" % (self.compiled_cost * 1e6, self.eager_cost * 1e6,
                                len(self.compiled))


class SpeedFallback:
    """The speed half of ``jit.CompiledFunction``: the split driver runs behind
    ``_timed_driver`` until the check decides."""

    _speed: Optional[SpeedCheck] = None

    def _start_speed_check(self) -> None:
        """A new split (or run in pieces): time it against eager afresh."""
        self._speed = SpeedCheck()

    def _slower_than_eager(self) -> bool:
        """Did the compiled form measure slower than eager (it runs eagerly now)?"""
        check = self._speed
        return check is not None and check.decided and check.slower

    def _driver_now(self):
        """What the dispatcher calls in split mode: the driver, timed while undecided, or
        eager once the compiled form measured slower."""
        check = self._speed
        if check is None or check.decided and not check.slower:
            return self._driver
        return self._timed_driver

    def _timed_driver(self, *args, **kwargs):
        check = self._speed
        if check is None or check.decided:
            if check is not None and check.slower:
                self.break_calls -= 1           # counted by the dispatcher: ran eagerly
                return self._eager(args, kwargs)
            return self._driver(*args, **kwargs)
        form = check.next_form()
        if form == "eager":
            self.break_calls -= 1
            run = self._eager
            start = clock()
            result = run(args, kwargs)
        else:
            start = clock()
            result = self._driver(*args, **kwargs)
        check.record(form, clock() - start)
        if check.decided:
            self._speed_verdict(check)
        return result

    def _timed_breaks(self, args, kwargs):
        """A call in pieces (mode ``breaks``), timed against eager like a split one."""
        check = self._speed
        if check is None:
            check = self._speed = SpeedCheck()
        if check.decided:
            return self._eager(args, kwargs) if check.slower else \
                self._run_breaks(args, kwargs)
        form = check.next_form()
        start = clock()
        result = self._eager(args, kwargs) if form == "eager" else \
            self._run_breaks(args, kwargs)
        check.record(form, clock() - start)
        if check.decided:
            self._speed_verdict(check)
        return result

    def _speed_verdict(self, check: SpeedCheck) -> None:
        self.speed_text = check.text()
        if check.slower:
            self.mode = "eager"
            self.mode_reason = "the compiled form with its graph breaks measured slower " \
                "than eager: %s" % check.text()
        self._install()
