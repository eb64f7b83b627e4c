"""Which fused groups are worth a second thread: an estimate of their work, not their
element count (``codegen.cost``), and the same bits whichever number of threads runs."""
import multiprocessing
import os

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.codegen import rt
from symshape.codegen.cost import NS_PER_ELEMENT, group_ns, node_ns


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def shift(x):
    return (x + 1.0) * 2.0 - 0.5


def _groups(f, x):
    ep = ss.export(f, (x,), dynamic_shapes={"x": (Dim("n"), None)})
    fn = ep.compile()
    return fn, fn.compiled.groups


def test_pow_makes_a_group_costly_and_plain_arithmetic_does_not():
    x = np.ones((256, 512))
    _, (g,) = _groups(gelu, x)
    assert group_ns(g.nodes) >= NS_PER_ELEMENT["power"]
    _, (h,) = _groups(shift, x)
    assert group_ns(h.nodes) == 1


def test_fast_exponents_are_cheap():
    def sq(x):
        return (x - 1.0) ** 2 + x ** 0.5

    _, (g,) = _groups(sq, np.ones((256, 512)))
    pows = [n for n in g.nodes if n.op == "power"]
    assert len(pows) == 2 and all(node_ns(n) < 1 for n in pows)


def test_work_estimate_reaches_the_thread_decision(monkeypatch):
    """At 128 x 1024 (131 072 elements, under the old 2M-element gate) the GELU group is
    tried on two threads and the cheap group is not; both give eager's bits."""
    seen = []
    real = rt.blocks

    def spy(tune, fn, nb, sc_a, make_b, size):
        seen.append(size)
        return real(tune, fn, nb, sc_a, make_b, size)

    monkeypatch.setattr(rt, "blocks", spy)
    monkeypatch.setattr(rt, "THREADS", 2)
    monkeypatch.setattr(rt, "busy", lambda: False)   # a second thread free, even here
    x = np.random.default_rng(0).standard_normal((128, 1024))
    for f, costly in ((gelu, True), (shift, False)):
        seen.clear()
        fn, _ = _groups(f, np.ones((16, 1024)))
        for _ in range(4):                   # the tuner's trials, then its choice
            got = fn(x)
            assert got.dtype == f(x).dtype and np.array_equal(got, f(x))
        assert seen and all((s >= rt.THREAD_MIN) == costly for s in seen)


def test_the_thread_choice_is_measured_again(monkeypatch):
    """A choice made under other load is not kept forever: after RETUNE calls in the chosen
    mode both modes are measured again; every block runs exactly once per call either way."""
    monkeypatch.setattr(rt, "THREADS", 2)
    monkeypatch.setattr(rt, "THREAD_MIN", 0)
    monkeypatch.setattr(rt, "RETUNE", 5)
    ran = []

    def fn(b0, b1, sc):
        ran.extend(range(b0, b1))

    tune = rt.new_tune()
    tune[4] = 0                                  # chosen: one thread
    for _ in range(4):
        rt.blocks(tune, fn, 4, [], lambda: [], 10 ** 6)
    assert tune[4] == 0 and tune[5] == 4
    rt.blocks(tune, fn, 4, [], lambda: [], 10 ** 6)      # the RETUNE-th call measures afresh
    assert tune[4] is None and tune[1] + tune[3] == 1
    for _ in range(2 * rt.TRIALS + 1):
        rt.blocks(tune, fn, 4, [], lambda: [], 10 ** 6)
    assert tune[4] in (0, 1)
    assert sorted(ran) == sorted(list(range(4)) * (5 + 2 * rt.TRIALS + 1))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_threaded_groups(monkeypatch):
    """multiprocessing forks by default on Linux: the child has no copy of the parent's
    worker thread, so a group split across threads there must start a new one, not wait
    forever for the parent's."""
    monkeypatch.setattr(rt, "THREADS", 2)
    monkeypatch.setattr(rt, "THREAD_MIN", 0)
    monkeypatch.setattr(rt, "busy", lambda: False)   # threads even on a loaded machine
    fn, _ = _groups(gelu, np.ones((16, 1024)))
    x = np.random.default_rng(1).standard_normal((128, 1024))
    fn.compiled.ns["_TUNE0"][4] = 1              # two threads, from the first call
    assert np.array_equal(fn(x), gelu(x)) and rt._executor is not None

    def child(q):
        q.put(bool(np.array_equal(fn(x), gelu(x))))

    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    p.join(60)
    hung = p.is_alive()
    if hung:
        p.kill()
    assert not hung and q.get(timeout=5) is True


def test_one_thread_takes_the_small_path_below_solo_sizes(monkeypatch):
    """Between ``BIG`` and ``SOLO * BIG`` elements the blocked path pays only with a second
    thread: without one (a busy machine, or one CPU) the program runs one NumPy call per
    op, with eager's bits; from ``SOLO * BIG`` it takes blocks on one thread too."""
    ran = []
    real = rt.blocks

    def spy(*a):
        ran.append(1)
        return real(*a)

    monkeypatch.setattr(rt, "blocks", spy)
    monkeypatch.setattr(rt, "THREADS", 2)
    fn, _ = _groups(gelu, np.ones((16, 1024)))
    x = np.random.default_rng(2).standard_normal((128, 1024))    # = BIG elements
    for free, blocked in ((False, False), (True, True)):
        monkeypatch.setattr(rt, "busy", lambda: not free)
        ran.clear()
        assert np.array_equal(fn(x), gelu(x))
        assert bool(ran) == blocked
    monkeypatch.setattr(rt, "busy", lambda: True)
    ran.clear()
    big = np.random.default_rng(3).standard_normal((rt.SOLO * 128, 1024))
    assert np.array_equal(fn(big), gelu(big)) and ran


def test_threads_follow_the_cpus_the_process_may_use():
    assert 1 <= rt._cpus() <= (os.cpu_count() or 1)
    assert rt.THREADS <= max(1, rt._cpus()) or "SYMSHAPE_THREADS" in os.environ


def test_a_busy_machine_runs_groups_on_one_thread(monkeypatch):
    """While other runnable threads fill the machine, a group chosen for two threads runs
    on one and a tuning round ends on one without trying two; the bits never change."""
    monkeypatch.setattr(rt, "THREADS", 2)
    monkeypatch.setattr(rt, "THREAD_MIN", 0)
    monkeypatch.setattr(rt, "busy", lambda: True)
    monkeypatch.setattr(rt, "split2", lambda *a: pytest.fail("split on a busy machine"))
    ran = []

    def fn(b0, b1, sc):
        ran.extend(range(b0, b1))

    tune = rt.new_tune()
    tune[4] = 1                                  # chosen earlier: two threads
    rt.blocks(tune, fn, 4, [], lambda: [], 10 ** 6)
    tune = rt.new_tune()
    for _ in range(3):                            # measuring: never tries two
        rt.blocks(tune, fn, 4, [], lambda: [], 10 ** 6)
    assert tune[4] == 0 and tune[3] == 0
    assert sorted(ran) == sorted(list(range(4)) * 4)


def test_busy_reads_the_machine_and_caches_it(monkeypatch):
    calls = []
    monkeypatch.setattr(rt, "_others_running", lambda: calls.append(1) or rt.CPUS)
    monkeypatch.setattr(rt, "_busy_seen", [-1.0, False])
    assert rt.busy() is True and rt.busy() is True and len(calls) == 1
    monkeypatch.setattr(rt, "_others_running", lambda: 0)
    monkeypatch.setattr(rt, "_busy_seen", [-1.0, True])
    assert rt.busy() is (rt.CPUS - 1 <= 0)
    assert isinstance(rt.CPUS, int) and rt.CPUS >= 1


def test_a_worker_that_gets_no_core_leaves_every_block_to_the_caller(monkeypatch):
    """split2 hands blocks out one at a time: when the worker thread cannot start (here it
    is held by another task), the caller runs all blocks and returns without waiting."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    held = threading.Event()
    pool = ThreadPoolExecutor(max_workers=1)
    pool.submit(held.wait, 30)                   # the only worker is busy elsewhere
    monkeypatch.setattr(rt, "_pool", lambda: pool)
    ran = []

    def fn(b0, b1, sc):
        ran.append((b0, b1, sc))

    try:
        rt.split2(fn, 6, "a", "b")
        assert ran == [(b, b + 1, "a") for b in range(6)]
    finally:
        held.set()
        pool.shutdown(wait=True)
    assert len(ran) == 6                         # the late worker found nothing to do


def test_split_blocks_run_once_each_on_either_thread_and_errors_reach_the_caller():
    import threading
    seen, lock = [], threading.Lock()

    def fn(b0, b1, sc):
        with lock:
            seen.append(b0)

    rt.split2(fn, 64, "a", "b")
    assert sorted(seen) == list(range(64))

    def bad(b0, b1, sc):
        if sc == "b" or b0 == 5:
            raise ValueError("block %d" % b0)

    with pytest.raises(ValueError, match="block"):
        rt.split2(bad, 64, "a", "b")
