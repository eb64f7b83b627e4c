"""ss.save / ss.load against np.save / np.load of the same arrays, measured side by side.

    python benchmarks/save_load.py [--sizes 256,1024] [--repeat 7] [--dir /tmp] [--verbose]

For each program size (MB of float32 weights: a model class holding four square weight
matrices and their biases, run as a loop over layers) it prints the saved file's size
against the raw bytes of the arrays plus the program text, the median time of ``ss.save``
and ``ss.load`` against ``np.save`` / ``np.load`` of the same arrays (one ``.npy`` file per
array), and the time to open the program with ``mmap_mode='r'`` against
``np.load(mmap_mode='r')`` (a few milliseconds of decoding and compiling the program,
against mapping bare arrays).  Each ratio is the median of the per-round ratios; --verbose
prints every round's times.

The runs are interleaved, in alternating order, so both sides see the same page cache and
machine load; each starts once the disk is idle (``settle``), so neither pays for the
other's writeback, and each save writes a new file.  Before each load, as much memory as
the arrays take is touched and freed, so that neither side pays for first touching memory
(on a virtual machine that costs more than the copy).  Files go to a temporary directory
under --dir and are deleted afterwards.  Check the free disk space (``df -h /tmp``) and
memory first: the 1 GB case needs about 2 GB of disk and 4 GB of memory.  This is a
benchmark, not a test.
"""
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import symshape as ss  # noqa: E402
from symshape.capture.archive import Archive  # noqa: E402

LAYERS = 4


class Model:
    """A stack of dense layers holding its weights as attributes (model state)."""

    def __init__(self, width: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.layers = []
        for _ in range(LAYERS):
            w = np.empty((width, width), np.float32)
            w[...] = rng.standard_normal(width, dtype=np.float32)[None, :]   # cheap to fill
            self.layers.append({"w": w, "b": rng.standard_normal(width, dtype=np.float32)})

    def __call__(self, x):
        for layer in self.layers:
            x = np.tanh(x @ layer["w"] + layer["b"])
        return x


def arrays_of(model: Model) -> list:
    return [a for layer in model.layers for a in (layer["w"], layer["b"])]


def _sectors_written() -> int:
    total = 0
    try:
        with open("/proc/diskstats") as fh:
            for line in fh:
                f = line.split()
                if len(f) > 9 and not f[2].startswith(("loop", "ram")):
                    total += int(f[9])
    except (OSError, ValueError):
        return 0
    return total


def settle(limit: float = 5.0) -> None:
    """Flush dirty pages and wait (up to ``limit`` seconds) until the disk has written
    less than 1 MB in 0.2 s: the previous run's writeback (and the discards of deleted
    files) must not slow the next run down."""
    os.sync()
    end = time.monotonic() + limit
    last = _sectors_written()
    while time.monotonic() < end:
        time.sleep(0.2)
        now = _sectors_written()
        if now - last < 2048:
            return
        last = now


def timed(fn):
    settle()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def run(mb: int, repeat: int, root: str, verbose: bool = False) -> None:
    width = int(round((mb * 2 ** 20 / 4 / LAYERS) ** 0.5))
    model = Model(width)
    arrays = arrays_of(model)
    raw = sum(a.nbytes for a in arrays)
    ep = ss.export(model, (np.ones((2, width), np.float32),),
                   dynamic_shapes={"x": (ss.Dim.AUTO, None)})
    work = tempfile.mkdtemp(prefix="symshape-bench-", dir=root)
    try:
        path = os.path.join(work, "model.ssp")
        npy = [os.path.join(work, "a%d.npy" % i) for i in range(len(arrays))]

        def np_save():
            for a, p in zip(arrays, npy):
                np.save(p, a)

        def np_load():
            return [np.load(p) for p in npy]

        def np_map():
            return [np.load(p, mmap_mode="r") for p in npy]

        times = {k: [] for k in ("ss.save", "np.save", "ss.load", "np.load", "ss.map",
                                 "np.map")}

        def fresh(files):
            for p in files:
                if os.path.exists(p):
                    os.remove(p)

        ratios = {k: [] for k in ("ss.save", "ss.load", "ss.map")}
        def nothing():
            pass

        def touch_memory():
            # on a virtual machine the first touch of memory the host reclaimed costs far
            # more than the copy itself; whichever load ran first would pay it, so both
            # start from memory just touched and freed
            scratch = np.ones(raw + (16 << 20), np.uint8)
            del scratch

        # name -> (untimed preparation, timed operation)
        ops = {"np.save": (lambda: fresh(npy), np_save),
               "ss.save": (lambda: fresh([path]), lambda: ss.save(ep, path)),
               "np.load": (touch_memory, np_load),
               "ss.load": (touch_memory, lambda: ss.load(path)),
               "np.map": (nothing, np_map),
               "ss.map": (nothing, lambda: ss.load(path, mmap_mode="r"))}
        pairs = (("ss.save", "np.save"), ("ss.load", "np.load"), ("ss.map", "np.map"))
        for i in range(repeat):
            # interleaved: each pair runs back to back under the same conditions, in
            # alternating order (the first to take fresh memory or disk blocks pays more on
            # a virtual machine); saves write new files on both sides
            for pair in pairs:
                for k in (pair if i % 2 else pair[::-1]):
                    prepare, fn = ops[k]
                    prepare()
                    t, out = timed(fn)
                    times[k].append(t)
                    del out
                    gc.collect()
                ratios[pair[0]].append(times[pair[0]][-1] / times[pair[1]][-1])
        # the loaded programs compute what the original does
        x = np.random.default_rng(1).standard_normal((3, width)).astype(np.float32)
        want = ep.module()(x)
        for mode in (None, "r"):
            assert np.array_equal(ss.load(path, mmap_mode=mode).module()(x), want)
        with open(path, "rb") as fh:
            text = len(Archive(fh).text)
        size = os.path.getsize(path)
        npy_size = sum(os.path.getsize(p) for p in npy)
        med = {k: statistics.median(v) for k, v in times.items()}
        if verbose:
            for k, v in times.items():
                print("  %-8s" % k, " ".join("%.3f" % x for x in v))
        print("%d MB program (%d x %.0f MB weights + biases, %d arrays), median of %d:"
              % (mb, LAYERS, width * width * 4 / 2 ** 20, len(arrays), repeat))
        print("  file size  %12d bytes = %.4fx raw arrays + program text (%d + %d); "
              ".npy files %d bytes" % (size, size / (raw + text), raw, text, npy_size))
        for a, b in (("ss.save", "np.save"), ("ss.load", "np.load"), ("ss.map", "np.map")):
            what = {"ss.map": "ss.load(mmap_mode='r')", "np.map": "np.load(mmap_mode='r')"}
            print("  %-24s %8.3f s   %-24s %8.3f s   ratio %.2fx (median of the %d ratios)"
                  % (what.get(a, a), med[a], what.get(b, b), med[b],
                     statistics.median(ratios[a]), repeat))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="256,1024", help="program sizes in MB")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--verbose", action="store_true", help="print every round's times")
    a = ap.parse_args()
    for mb in (int(s) for s in a.sizes.split(",")):
        run(mb, a.repeat, a.dir, a.verbose)


if __name__ == "__main__":
    main()
