"""Export time of a model whose walk reaches thousands of objects the unrecorded-change
watch snapshots (2,100 user objects and 2,000 deques; capture/state/unrecorded.py).

    .venv/bin/python benchmarks/bench_state_watch.py
"""
import collections
import time

import numpy as np

import symshape as ss


class Leaf:
    def __init__(self, i):
        self.w = np.ones(4) * i
        self.b = i
        self.hist = collections.deque([i])


class Layer:
    scale = 2

    def __init__(self, i):
        self.leaves = [Leaf(j) for j in range(20)]
        self.k = i


class Model:
    def __init__(self):
        self.layers = [Layer(i) for i in range(100)]

    def __call__(self, x):
        for layer in self.layers[:3]:
            x = x + layer.leaves[0].w
        return x


def main(repeat: int = 5) -> None:
    m, x = Model(), np.ones(4)
    ss.export(m, (x,))
    t = time.perf_counter()
    for _ in range(repeat):
        ss.export(m, (x,))
    print("export: %.1f ms" % ((time.perf_counter() - t) / repeat * 1000))


if __name__ == "__main__":
    main()
