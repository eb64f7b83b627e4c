"""``symshape check --timeout``: a step's limit is its CPU time and its time without progress,
never plain wall time, so a check on a busy machine is not cut short while an endless loop
and a hang still are.  The clock is driven by fake readings: nothing here depends on how
fast the machine is."""
import pytest

from symshape.cli import isolation
from test_fix_safety import HEAD, OK_MODEL, run, write


class Fake:
    """A CPU reading and a wall clock the test moves by hand."""

    def __init__(self, cpu=0.0):
        self.cpu, self.wall = cpu, 100.0

    def reading(self):
        return self.cpu


@pytest.fixture
def fake(monkeypatch):
    f = Fake()
    monkeypatch.setattr(isolation.time, "monotonic", lambda: f.wall)
    return f


def test_a_busy_machine_does_not_overrun_a_step(fake):
    clock = isolation._StepClock(fake.reading, 3.0)
    for _ in range(100):                # 50 s of wall time, 1 s of CPU: slow, not stuck
        fake.wall += 0.5
        fake.cpu += 0.01
        assert clock.left() > 0


def test_an_endless_loop_overruns_on_cpu_time(fake):
    clock = isolation._StepClock(fake.reading, 3.0)
    fake.cpu += 2.9
    fake.wall += 2.9
    assert clock.left() > 0
    fake.cpu += 0.2
    fake.wall += 0.2
    assert clock.left() <= 0


def test_a_hang_overruns_on_time_without_progress(fake):
    clock = isolation._StepClock(fake.reading, 3.0)
    fake.cpu += 0.5
    fake.wall += 1.0
    assert clock.left() > 0              # it used CPU a moment ago
    fake.wall += 2.9
    assert clock.left() > 0
    fake.wall += 0.2                     # 3.1 s since the last CPU tick
    assert clock.left() <= 0


def test_a_new_step_starts_both_clocks_again(fake):
    clock = isolation._StepClock(fake.reading, 3.0)
    fake.cpu += 2.5
    fake.wall += 2.5
    clock.restart()
    fake.cpu += 2.5
    fake.wall += 2.5
    assert clock.left() > 0


def test_without_a_cpu_reading_the_limit_is_wall_time(fake):
    clock = isolation._StepClock(lambda: None, 3.0)
    fake.wall += 2.9
    assert clock.left() > 0
    fake.wall += 0.2
    assert clock.left() <= 0


def test_the_child_reports_its_cpu_time(tmp_path):
    child = isolation._Child({"cwd": str(tmp_path), "files": [], "pyprojects": [], "names": {},
                              "skip": [], "overlay": {}}, open(tmp_path / "out", "wb"))
    try:
        got = child.cpu_seconds()
        assert got is None or got >= 0.0
    finally:
        child.kill()
        child.finish()


def test_a_module_that_waits_at_import_is_reported(tmp_path, capsys, monkeypatch):
    write(tmp_path, "good.py", OK_MODEL)
    write(tmp_path, "waits.py", HEAD + "import time\ntime.sleep(10000)\n"
          "@ss.exportable(example_inputs=(np.ones(3),))\ndef f(x):\n    return x\n")
    code, out, err = run(["check", "-q", "--timeout", "3"], capsys, monkeypatch, tmp_path)
    assert code == 2
    assert "ERROR waits" in out and "made no progress for 3 s" in out
    assert "ok   good:double" in out
