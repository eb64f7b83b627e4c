"""Per-call cost of Python-state guards and state reads (capture/state/stateprog.py).

A model with 50 state arrays in nested objects (25 layers, each ``w`` and ``b``) and 10
Python scalars read from a dict, compiled with ``ss.compile``; tiny arrays, so the time is
the per-call overhead.  Prints microseconds per call for the compiled model, the same
computation as a plain function, an empty function, and the two parts of the state work:
the straight-line guard check (what the dispatcher runs) and ``begin`` (guards + array
reads, what the compiled body runs).

    .venv/bin/python benchmarks/state_guards.py
"""
import time
import warnings

import numpy as np

import symshape as ss


class Layer:
    def __init__(self, i):
        self.w = np.full(4, 1.0 + i * 1e-3)
        self.b = np.zeros(4)


class Net:
    def __init__(self):
        self.layers = [Layer(i) for i in range(25)]                 # 50 arrays
        self.cfg = {"a%d" % i: float(i) for i in range(10)}         # 10 scalars

    def __call__(self, x):
        for layer in self.layers:
            x = x * layer.w + layer.b
        for k in sorted(self.cfg):
            x = x + self.cfg[k]
        return x


def per_call(f, *args, n=3000) -> float:
    f(*args)
    t = time.perf_counter()
    for _ in range(n):
        f(*args)
    return (time.perf_counter() - t) / n * 1e6


def main() -> None:
    net = Net()
    x = np.ones(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf = ss.compile(net)
        cf(x)
    sp = cf.variants[0].program.state_program
    rows = [("compiled model", per_call(cf, x)),
            ("eager model", per_call(net, x)),
            ("empty function", per_call(lambda v: v, x)),
            ("state guard check (%d guards, %d arrays)" % (len(sp.guards), len(sp.arrays)),
             per_call(sp.failed, ())),
            ("begin: guards + array reads", per_call(sp.begin, ()))]
    for name, us in rows:
        print("%-45s %8.1f us/call" % (name, us))


if __name__ == "__main__":
    main()
