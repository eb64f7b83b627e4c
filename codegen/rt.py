"""Run-time helpers that compiled code calls: buffers, blocks and threads.

This module imports only NumPy and the standard library, so a saved artifact embeds its
source verbatim (``codegen.artifact``).  Invariants the generated code relies on:

* ``take(pool, shape, dtype)`` returns an array of exactly ``shape`` / ``dtype`` that no
  caller can see: either fresh, or one this program returned earlier whose only reference
  left is the pool's (the reference count tells), so two live results never alias.
* ``buf(st, key, shape, dtype)`` returns a C-contiguous view of a scratch buffer private
  to the scratch set ``st``; a scratch set is used by one call at a time (``sets`` is a
  free list popped on entry and pushed back on exit, so concurrent calls get their own).
* ``split2(fn, nb, sc_a, sc_b)`` runs the blocks ``[0, nb)`` of ``fn`` on the calling thread
  and a worker thread (with the caller's context: NumPy's error state travels with it); each
  thread claims the next block from a shared counter, so a worker that gets no core (the
  machine is busy) costs the caller nothing but the hand-off: the caller runs every block
  itself and waits only for a block the worker has started.  Blocks write disjoint parts of
  the outputs and never depend on each other, so the bits are the same whichever thread ran
  which block.  NumPy releases the GIL inside ufunc loops, so two cores can work.
* ``pair()`` says whether a second thread is available now: the large-size path runs
  below ``SOLO * BIG`` elements only then (on one thread its blocks do not pay there).
* ``blocks(tune, ...)`` runs a fused group's blocks on one thread or two, whichever the
  group's first calls measured faster per unit of work (threads must win by 10%; both are
  measured again every ``RETUNE`` calls): whether a second thread pays depends on the
  machine (a second vCPU may share one core) and on how compute-bound the group is, so it
  is measured rather than assumed.  Threads are used only where the process can get a
  second CPU: its affinity mask and cgroup CPU quota (``cpus``), and at the moment of the
  call no other runnable threads filling the machine (``busy``, read from
  ``/proc/loadavg``, at most every ``BUSY_EVERY`` seconds); on a busy machine a group runs
  on one thread and is measured again later.
"""
from __future__ import annotations

import contextvars
import itertools
import os
import sys
import threading
import time

import numpy as np

#: elements per block: a few blocks of live temporaries stay inside the L2 cache
BLOCK = int(os.environ.get("SYMSHAPE_BLOCK", 65536))
#: a program takes its large-size path (buffer plans, blocks) from this many elements
BIG = int(os.environ.get("SYMSHAPE_BIG", 131072))
#: ... but on one thread only from ``SOLO`` times that many: below it the blocks cost more
#: NumPy calls than the cache saves (GPT-2 block at 2x: 2% more CPU time than one call per
#: op; at 4x: 7% less), so the large path pays there only with a second thread (``pair``)
SOLO = int(os.environ.get("SYMSHAPE_SOLO", 4))
#: a value of the large-size path gets a planned buffer from this many elements
WORTH = int(os.environ.get("SYMSHAPE_WORTH", 4096))
#: a fused group is tried on two threads from this much estimated work (nanoseconds on one
#: core, ``codegen.cost``): below it, handing half to a worker costs more than it can save
THREAD_MIN = int(os.environ.get("SYMSHAPE_THREAD_MIN", 400_000))


def _quota() -> float:
    """The CPUs a cgroup (v2 ``cpu.max``, v1 ``cfs_quota_us``) lets this process use, or 0
    when no quota is set (containers are often limited this way, not by affinity)."""
    for path, period_path in (("/sys/fs/cgroup/cpu.max", None),
                              ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
                               "/sys/fs/cgroup/cpu/cpu.cfs_period_us")):
        try:
            with open(path) as fh:
                parts = fh.read().split()
            if period_path is not None:
                with open(period_path) as fh:
                    parts.append(fh.read().strip())
            if parts and parts[0] not in ("max", "-1"):
                return int(parts[0]) / int(parts[1])
        except (OSError, ValueError, IndexError):
            continue
    return 0.0


def _cpus() -> int:
    """CPUs this process may run on: its affinity mask (e.g. under ``taskset``), else all,
    and no more than its cgroup quota allows (rounded down, at least one)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    q = _quota()
    if q > 0:
        n = min(n, max(1, int(q)))
    return n


CPUS = _cpus()
THREADS = max(1, min(2, int(os.environ.get("SYMSHAPE_THREADS", CPUS))))
#: seconds a reading of the machine's load is trusted
BUSY_EVERY = 0.02
POOL_DEPTH = 2      # returned buffers kept per output, enough for `r = f(x)` in a loop


def _calibrate():
    """The reference count a pooled array has when nobody but ``take`` holds it."""
    getrc = getattr(sys, "getrefcount", None)
    if getrc is None:          # pragma: no cover - not CPython: never reuse outputs
        return None
    pool = [np.empty(1)]
    a = pool.pop(0)
    return getrc(a)


_FREE = _calibrate()
_getrc = getattr(sys, "getrefcount", None)


def take(pool: list, shape: tuple, dtype) -> np.ndarray:
    """An output buffer: a previously returned one the caller has dropped, else fresh."""
    if _FREE is not None:
        for _ in range(len(pool)):
            try:
                a = pool.pop(0)
            except IndexError:
                break
            if _getrc(a) == _FREE:
                # blocks write through a flat view: only a C-ordered buffer takes them (a
                # buffer made by the layout-following eager path may be F-ordered)
                if a.shape == shape and a.dtype == dtype and a.flags.c_contiguous:
                    return a
                continue            # free but the wrong size or layout: let it go
            pool.append(a)          # the caller still holds it
    return np.empty(shape, dtype)


def give(pool: list, a: np.ndarray) -> None:
    """Remember a returned buffer so a later call can reuse it once it is dropped."""
    pool.append(a)
    if len(pool) > POOL_DEPTH:
        del pool[0]


def scratch(sets: list) -> dict:
    """A scratch set for this call (a free one, or a new empty one)."""
    try:
        return sets.pop()
    except IndexError:
        return {}


def buf(st: dict, key, shape: tuple, dtype) -> np.ndarray:
    """A C-contiguous ``shape`` view of the scratch buffer ``key`` (grown when too small)."""
    n = 1
    for s in shape:
        n *= s
    b = st.get(key)
    if b is None or b.size < n:
        b = st[key] = np.empty(max(n, 1), dtype)
    return b[:n].reshape(shape)


def c_ordered(a: np.ndarray) -> bool:
    """Are ``a``'s strides in C order (positive, strictly decreasing over the axes longer
    than 1), gaps allowed?  Then an elementwise NumPy call over ``a`` gives a C-ordered
    result, as a fused group's buffers are."""
    last = None
    for n, s in zip(a.shape, a.strides):
        if n == 1:
            continue
        if s <= 0 or (last is not None and s >= last):
            return False
        last = s
    return True


def rows(inner: int, n: int) -> int:
    """Rows of ``inner`` elements per block along an axis of size ``n`` (at least 1)."""
    r = BLOCK // inner if inner > 0 else n
    if r < 1:
        r = 1
    if r > n:
        r = n if n > 0 else 1
    return r


_executor = None
_lock = threading.Lock()


def _forget_pool() -> None:
    """In a forked child: the parent's worker thread does not exist there (a task handed
    to it would never run, and the call would wait forever), so start afresh."""
    global _executor, _lock
    _executor = None
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _pool():
    global _executor
    if _executor is None:
        with _lock:
            if _executor is None:
                from concurrent.futures import ThreadPoolExecutor
                _executor = ThreadPoolExecutor(max_workers=max(1, THREADS - 1),
                                               thread_name_prefix="symshape-block")
    return _executor


def _others_running() -> int:
    """Runnable threads of the machine other than the caller, now (``/proc/loadavg``'s
    running count; else the one-minute load average less this thread)."""
    try:
        with open("/proc/loadavg") as fh:
            return int(fh.read().split()[3].split("/")[0]) - 1
    except (OSError, ValueError, IndexError):
        try:
            return int(os.getloadavg()[0] + 0.5) - 1
        except (AttributeError, OSError):  # pragma: no cover - no load information
            return 0


_busy_seen = [-1.0, False]      # [when read (monotonic s), busy]


def busy() -> bool:
    """No CPU is free for a worker thread: the other runnable threads fill all but the
    caller's CPU (read at most every ``BUSY_EVERY`` seconds)."""
    now = time.monotonic()
    if now - _busy_seen[0] > BUSY_EVERY:
        _busy_seen[1] = _others_running() >= CPUS - 1
        _busy_seen[0] = now
    return _busy_seen[1]


def pair() -> bool:
    """Can a fused group get a second thread now (two CPUs for this process, and the
    machine not ``busy``)?"""
    return THREADS >= 2 and not busy()


class _Split:
    """One call's blocks shared by the caller and a worker: each claims the next block."""

    __slots__ = ("fn", "nb", "claim", "lock", "state", "done", "error")

    def __init__(self, fn, nb: int) -> None:
        self.fn, self.nb = fn, nb
        self.claim = itertools.count().__next__   # atomic under the GIL
        self.lock = threading.Lock()
        self.state = 0                  # 0: worker not started, 1: running, 2: closed
        self.done = threading.Event()
        self.error = None

    def run(self, sc) -> None:
        fn, nb, claim = self.fn, self.nb, self.claim
        b = claim()
        while b < nb:
            fn(b, b + 1, sc)
            b = claim()

    def worker(self, sc) -> None:
        with self.lock:
            if self.state == 2:         # the caller ran every block already
                return
            self.state = 1
        try:
            self.run(sc)
        except BaseException as e:      # handed to the caller
            self.error = e
        finally:
            self.done.set()


def split2(fn, nb: int, sc_a, sc_b) -> None:
    """Run blocks ``[0, nb)`` of ``fn`` on this thread and a worker, each claiming the next
    block: a worker that never gets a core leaves all of them to this thread."""
    job = _Split(fn, nb)
    ctx = contextvars.copy_context()
    _pool().submit(ctx.run, job.worker, sc_b)
    try:
        job.run(sc_a)
    finally:
        with job.lock:
            started = job.state == 1
            job.state = 2
        if started:
            job.done.wait()
    if job.error is not None:
        raise job.error


TRIALS = 2
#: calls in the chosen mode before both modes are measured again
RETUNE = 256


def new_tune() -> list:
    """Per-group tuning state: [best s per unit of work on 1 thread, trials, best on 2,
    trials, mode (None while measuring), calls since the choice]."""
    return [0.0, 0, 0.0, 0, None, 0]


def blocks(tune: list, fn, nb: int, sc_a, make_b, size: int) -> None:
    """Run blocks ``[0, nb)`` of a fused group, on two threads where that pays (``size``:
    the group's estimated work in nanoseconds on one core)."""
    if THREADS < 2 or nb < 2 or size < THREAD_MIN:
        fn(0, nb, sc_a)
        return
    tuned(tune, lambda: fn(0, nb, sc_a), lambda: split2(fn, nb, sc_a, make_b()), size)


def tuned(tune: list, one, two, size) -> None:
    """Do one call's work with ``one()`` (this thread) or ``two()`` (threads), whichever
    ``tune`` (``new_tune()``) measured faster per unit of ``size``: each is tried
    ``TRIALS`` times, threads must win by 10%, both are measured again every ``RETUNE``
    calls, and while the machine is ``busy()`` the work stays on this thread."""
    mode = tune[4]
    if mode is not None:
        tune[5] += 1
        if tune[5] < RETUNE:
            if mode and not busy():
                two()
            else:
                one()
            return
        # measure both again now and then: a choice made while another job held the
        # second core (or left it idle) need not hold for the rest of the process
        tune[:] = new_tune()
    mode = 1 if tune[1] > tune[3] else 0      # try the one measured less often
    if mode and busy():
        # no free CPU for a worker now: one thread, and both measured again after RETUNE
        tune[4], tune[5] = 0, 0
        one()
        return
    t0 = time.perf_counter()
    if mode:
        two()
    else:
        one()
    dt = (time.perf_counter() - t0) / size
    i = 2 * mode
    tune[i] = dt if tune[i + 1] == 0 else min(tune[i], dt)
    tune[i + 1] += 1
    if tune[1] >= TRIALS + 1 and tune[3] >= TRIALS:
        tune[4] = 1 if tune[2] < 0.9 * tune[0] else 0


def setitem_into(x, index, value):
    """``x[index] = value`` in place, returning ``x`` (a functional write whose input
    nobody else reads: no copy of ``x``)."""
    x[index] = value
    return x
