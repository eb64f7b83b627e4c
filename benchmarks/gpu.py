"""GPU section: the kernels ``backend="cupy"`` generates, against the memory roofline.

    python benchmarks/gpu.py [--repeat 20] [--small] [--bandwidth 3.35e12]

For every model and size it prints, per generated kernel, the bytes the kernel must move
at least (every array it reads, read once; every array it writes, written once), the bytes
the generated code moves (a row reduction whose row does not fit in registers reads the row
once per phase; softmax's max and sum, and layer norm's mean and variance, are one merged
phase there), and the time those minimum bytes need at the roofline bandwidth (default:
H100 SXM, 3.35 TB/s).  That needs no device.  With CuPy and a device it also times each
kernel (CUDA events around every launch, median over ``--repeat`` calls) and prints the
share of the roofline reached, plus eager CuPy against the whole compiled program.

Without CuPy or a device it says so, prints the table without measured columns and exits 0.
"""
import argparse
import os
from collections import defaultdict

import numpy as np

import symshape as ss
from symshape import Dim
from symshape.codegen.cuda import compile_cupy
from symshape.codegen.cuda.backend import CupyRuntime, _py, row_launch
from symshape.codegen.fusion import numel
from symshape.codegen.cuda.kernels import (COL_SPLIT, ROW_BLOCK, ROW_ITEMS, SPLIT_BLOCKS,
                                           SPLIT_ROWS, WARP_ROW)


def _models():
    """benchmarks/models.py under its own module name (``models`` is a common name)."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models.py")
    spec = importlib.util.spec_from_file_location("_symshape_bench_models", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


M = _models()

A = Dim.AUTO
H100 = 3.35e12
SMS = 132            # H100 SXM streaming multiprocessors


def rms_norm(x, g):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * g


def column_center(x):
    return x - x.mean(axis=0, keepdims=True)


def channel_affine(x, scale, shift):
    """Per-channel scale and shift of (batch, channels, pixels): a broadcast along the
    middle axis (stepped coordinates, no divide per element)."""
    return x * scale + shift


def arr(*shape, dtype=np.float32):
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)


# name, function, example args for export, benchmark sizes (each a list of input shapes)
MODELS = [
    ("seed 23: sum(X[:,:,None]*Y[:,None,:])", M.seed23, (arr(8, 16), arr(8, 16)),
     [[(256, 256), (256, 256)], [(1024, 256), (1024, 256)]]),
    ("softmax (last axis)", M.softmax, (arr(8, 16),),
     [[(4096, 1024)], [(16384, 4096)], [(65536, 32)], [(4096, 16384)], [(8, 131072)]]),
    ("softmax float16", M.softmax, (arr(8, 16, dtype=np.float16),),
     [[(16384, 4096)]]),
    ("layer norm + GELU", M.ln_gelu, (arr(2, 8, 16), arr(16), arr(16)),
     [[(8, 512, 768), (768,), (768,)], [(16, 1024, 2048), (2048,), (2048,)],
      [(2, 2048, 8192), (8192,), (8192,)], [(1, 8, 65536), (65536,), (65536,)]]),
    ("RMS norm", rms_norm, (arr(8, 16), arr(16)),
     [[(16384, 1024), (1024,)], [(16384, 8192), (8192,)]]),
    ("column mean (axis 0)", column_center, (arr(8, 16),),
     [[(16384, 1024)], [(1024, 16384)], [(1048576, 4)]]),
    ("channel scale + shift (broadcast)", channel_affine, (arr(2, 8, 16), arr(8, 1),
                                                           arr(8, 1)),
     [[(64, 256, 3136), (256, 1), (256, 1)]]),
    ("bias + GELU", M.bias_gelu, (arr(8, 16), arr(16)),
     [[(8192, 4096), (4096,)], [(32768, 4096), (4096,)]]),
    ("MLP layer (matmul + elementwise)", M.mlp_layer, (arr(8, 16), arr(16, 16), arr(16)),
     [[(4096, 1024), (1024, 1024), (1024,)]]),
]


def compile_all():
    out = []
    for name, f, ex, sizes in MODELS:
        ep = ss.export(f, ex, dynamic_shapes=[tuple(A for _ in a.shape) for a in ex])
        out.append((name, f, ex, compile_cupy(ep), sizes))
    return out


def bind(c, shapes):
    """The size symbols of a call with these input shapes."""
    env = {}
    for desc, shape in zip(c.ep.constraints.inputs, shapes):
        for d, n in zip(desc.dims, shape):
            s = d.as_symbol() if hasattr(d, "as_symbol") else None
            if s is not None:
                env[s.name] = n
    return env


def ev(e, env):
    return int(eval(_py(e), {}, dict(env)))


def nbytes(node, env):
    return ev(numel(node.shape), env) * np.dtype(node.dtype).itemsize


def kernel_traffic(k, env):
    """(minimum bytes, bytes the generated code moves, a note on its structure)."""
    ins = {n: nbytes(n, env) for n in k.loads}
    outs = sum(nbytes(n, env) for n in k.outputs)
    least = sum(ins.values()) + outs
    if k.kind == "pointwise":
        return least, least, "pointwise, 128-bit when aligned" + (
            "; broadcast coordinates stepped" if "ss_d" in k.source else "")
    inner, rows = ev(k.inner, env), ev(k.rows, env)
    if k.columns:
        cached = inner <= COL_SPLIT * ROW_ITEMS
        note = "lane per column, 8-way split"
        groups = -(-rows // 32)
        if k.split is not None and inner > ROW_BLOCK * ROW_ITEMS and groups < SPLIT_ROWS // 2:
            nch = max(1, min(-(-inner // 512), SPLIT_BLOCKS // groups))
            dom = rows * inner
            moved = outs + sum(b * (k.split.passes if b >= dom else 1) for b in ins.values())
            return least, moved, "columns split: %d groups x %d ranges, %d passes" % (
                groups, nch, k.split.passes)
    else:
        block, _ = row_launch(inner)
        cached = inner <= (32 if inner <= WARP_ROW else block) * ROW_ITEMS
        note = ("warp per row" if inner <= WARP_ROW else "block of %d per row" % block)
    # a looped row (and the split companion) reads it once per phase: merged pairs
    # (max + sum of exp, mean + variance) are one phase
    phases = k.source.count("//   reduce:") - k.merged + (1 if any(
        r.startswith("//   write ") for r in k.source.splitlines()) else 0)
    chunk = ROW_BLOCK * ROW_ITEMS
    split = k.split is not None and inner > chunk and rows < SPLIT_ROWS
    if split:
        nch = -(-inner // chunk)
        note = "split: %d rows x %d chunks = %d blocks of %d, %d passes" % (
            rows, nch, rows * nch, ROW_BLOCK, k.split.passes)
    groups = -(-rows // 32) if k.columns else rows * nch if split else \
        -(-rows // (8 if inner <= WARP_ROW else 1))
    if groups < SMS:
        note += "; only %d block%s for %d SMs" % (groups, "" if groups == 1 else "s", SMS)
    if k.vec > 1 and not split:
        note += ", 128-bit loads" if inner % k.vec == 0 else ", scalar loads (row % {} != 0)" \
            .format(k.vec)
    if cached:
        return least, least, note + ", row in registers"
    dom = rows * inner
    moved = outs + sum(b * (phases if b >= dom else 1) for n, b in ins.items())
    return least, moved, note + (", row looped over memory" if moved == least else
                                 ", row read in each of %d phases%s" % (
                                     phases, " (%d merged)" % k.merged if k.merged else ""))


def device_or_reason():
    try:
        import cupy
    except ImportError:
        return None, "CuPy is not installed (pip install 'symshape[gpu]')"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:         # no driver / no device
        return None, "no CUDA device was found (%s)" % e
    if not n:
        return None, "no CUDA device was found"
    return cupy, None


class TimedRuntime(CupyRuntime):
    """CupyRuntime recording CUDA events around every kernel launch."""

    def __init__(self, cupy):
        super().__init__(cupy)
        self.events = []

    def launch(self, k, grid, block, args, big, vec=False, strided=False):
        start, end = self.cp.cuda.Event(), self.cp.cuda.Event()
        start.record()
        super().launch(k, grid, block, args, big, vec, strided)
        end.record()
        self.events.append((k.name, start, end))


def time_ms(cp, fn, args, repeat):
    for _ in range(3):
        fn(*args)
    cp.cuda.Stream.null.synchronize()
    ts = []
    for _ in range(repeat):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        ts.append(cp.cuda.get_elapsed_time(start, end))
    return float(np.median(ts))


def kernel_times(cp, c, args, repeat):
    """Median milliseconds of every kernel of one call of ``c``."""
    rt = TimedRuntime(cp)
    fn = c.bind(rt)
    for _ in range(3):
        fn(*args)
    cp.cuda.Stream.null.synchronize()
    per = defaultdict(list)
    for _ in range(repeat):
        rt.events = []
        fn(*args)
        cp.cuda.Stream.null.synchronize()
        call = defaultdict(float)               # a split kernel launches once per pass
        for name, s, e in rt.events:
            call[name.replace("_split", "")] += cp.cuda.get_elapsed_time(s, e)
        for name, t in call.items():
            per[name].append(t)
    return {name: float(np.median(v)) for name, v in per.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--small", action="store_true", help="only the first size of each model")
    ap.add_argument("--bandwidth", type=float, default=H100,
                    help="roofline bandwidth in bytes/s (default: H100 SXM, 3.35e12)")
    opts = ap.parse_args()
    programs = compile_all()
    cp, reason = device_or_reason()
    bw = opts.bandwidth
    print("GPU kernels (backend='cupy') against a %.2f TB/s memory roofline" % (bw / 1e12))
    if cp is None:
        print("no measurement: %s; bytes and roofline times need no device." % reason)
    head = "%-34s %-12s %9s %9s %9s" % ("kernel", "launch", "min MB", "code MB", "roof us")
    if cp is not None:
        head += " %9s %7s" % ("meas us", "% roof")
    for name, f, ex, c, sizes in programs:
        for shapes in sizes[:1] if opts.small else sizes:
            print("\n%s  [%s]  %s" % (name, " ".join("x".join(map(str, s)) for s in shapes),
                                      ex[0].dtype))
            print("  " + head)
            env = bind(c, shapes)
            times = {}
            if cp is not None:
                args = [cp.asarray(arr(*s, dtype=e.dtype)) for s, e in zip(shapes, ex)]
                times = kernel_times(cp, c, args, opts.repeat)
            for k in c.kernels:
                least, moved, note = kernel_traffic(k, env)
                roof = least / bw * 1e6
                line = "  %-34s %-12s %9.2f %9.2f %9.1f" % (
                    k.name[:34], "%s%s" % (k.kind[:3], "/col" if k.columns else ""),
                    least / 1e6, moved / 1e6, roof)
                if cp is not None:
                    t = times.get(k.name)
                    line += " %9.1f %6.0f%%" % (t * 1e3, 100 * roof / (t * 1e3)) if t else \
                        " %9s %7s" % ("-", "-")
                print(line + "   " + note)
            if cp is not None:
                t_eager = time_ms(cp, f, args, opts.repeat)
                t_fused = time_ms(cp, c, args, opts.repeat)
                print("  whole call: eager CuPy %.3f ms, compiled %.3f ms (%.2fx)"
                      % (t_eager, t_fused, t_eager / t_fused))
    print("\nmin MB: every array a kernel reads read once, every output written once; code MB:"
          " what the generated code reads; roof us: min MB at the roofline.  Library steps "
          "(matmul on cuBLAS) are not listed.")


if __name__ == "__main__":
    main()
