"""GPU section: eager CuPy vs the kernels ``backend="cupy"`` generates.

    python benchmarks/gpu.py [--repeat 20] [--small]

For each model and size it prints the time of the plain NumPy function run eagerly on
CuPy arrays (one CuPy kernel per op, intermediates in device memory), the time of the
compiled program (fused generated kernels, cuBLAS for matmul), the speedup, and the
achieved bandwidth of the compiled program: the bytes it must move at least (every input
read once, every output written once) divided by its time, against the device's peak
(memory clock x bus width x 2, from the device properties).

Where CuPy or a CUDA device is missing it says so, prints how many kernels the generator
produced for each model (generation needs no device), and exits 0.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import symshape as ss  # noqa: E402
from symshape import Dim  # noqa: E402
from symshape.codegen.cuda import compile_cupy  # noqa: E402

import models as M  # noqa: E402

A = Dim.AUTO


seed23, softmax, ln_gelu, mlp_layer, bias_gelu = (M.seed23, M.softmax, M.ln_gelu,
                                                  M.mlp_layer, M.bias_gelu)


def f32(*shape):
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


# name, function, example args for export, benchmark sizes (each a list of input shapes)
MODELS = [
    ("seed 23: sum(X[:,:,None]*Y[:,None,:])", seed23, (f32(8, 16), f32(8, 16)),
     [[(256, 256), (256, 256)], [(1024, 256), (1024, 256)]]),
    ("softmax (last axis)", softmax, (f32(8, 16),),
     [[(4096, 1024)], [(16384, 4096)]]),
    ("layer norm + GELU", ln_gelu, (f32(2, 8, 16), f32(16), f32(16)),
     [[(8, 512, 1024), (1024,), (1024,)], [(16, 1024, 2048), (2048,), (2048,)]]),
    ("bias + GELU", bias_gelu, (f32(8, 16), f32(16)),
     [[(8192, 4096), (4096,)], [(32768, 4096), (4096,)]]),
    ("MLP layer (matmul + elementwise)", mlp_layer, (f32(8, 16), f32(16, 16), f32(16)),
     [[(4096, 1024), (1024, 1024), (1024,)], [(16384, 1024), (1024, 4096), (4096,)]]),
]


def compile_all():
    out = []
    for name, f, ex, sizes in MODELS:
        ep = ss.export(f, ex, dynamic_shapes=[tuple(A for _ in a.shape) for a in ex])
        out.append((name, f, compile_cupy(ep), sizes))
    return out


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


def peak_bandwidth(cp):
    """Bytes/s of the device's memory, or None when the properties do not say."""
    dev = cp.cuda.Device().id
    try:
        props = cp.cuda.runtime.getDeviceProperties(dev)
        clock_khz, bus_bits = props.get("memoryClockRate"), props.get("memoryBusWidth")
    except Exception:
        clock_khz = bus_bits = None
    if not clock_khz:
        try:
            rt = cp.cuda.runtime
            clock_khz = rt.deviceGetAttribute(36, dev)      # cudaDevAttrMemoryClockRate
            bus_bits = bus_bits or rt.deviceGetAttribute(37, dev)
        except Exception:
            return None
    if not clock_khz or not bus_bits:
        return None
    return 2.0 * clock_khz * 1e3 * bus_bits / 8


def time_ms(cp, fn, args, repeat):
    for _ in range(3):
        fn(*args)
    cp.cuda.Stream.null.synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(repeat):
        fn(*args)
    end.record()
    end.synchronize()
    return cp.cuda.get_elapsed_time(start, end) / repeat


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--small", action="store_true", help="only the first size of each model")
    opts = ap.parse_args()
    programs = compile_all()
    cp, reason = device_or_reason()
    print("GPU benchmarks (backend='cupy')")
    if cp is None:
        print("SKIPPED: %s." % reason)
        print("Generated without a device (nothing was run):")
        for name, _, c, _ in programs:
            print("  %-36s %d kernel(s): %s" % (name, len(c.kernels), ", ".join(
                "%s[%s]" % (k.name, k.index) for k in c.kernels)))
        return
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    peak = peak_bandwidth(cp)
    print("device: %s; peak memory bandwidth: %s" % (
        props.get("name", b"?").decode() if isinstance(props.get("name"), bytes)
        else props.get("name"), "%.0f GB/s" % (peak / 1e9) if peak else "unknown"))
    print("%-36s %-34s %10s %10s %8s %9s %7s" % ("model", "input shapes", "eager ms",
                                                 "fused ms", "speedup", "GB/s", "% peak"))
    for name, f, c, sizes in programs:
        for shapes in sizes[:1] if opts.small else sizes:
            args = [cp.asarray(f32(*s)) for s in shapes]
            got = c(*args)
            want = f(*args)
            np.testing.assert_allclose(cp.asnumpy(got), cp.asnumpy(want), rtol=2e-3,
                                       atol=2e-3)
            t_eager = time_ms(cp, f, args, opts.repeat)
            t_fused = time_ms(cp, c, args, opts.repeat)
            moved = sum(a.nbytes for a in args) + got.nbytes
            gbs = moved / (t_fused * 1e-3) / 1e9
            print("%-36s %-34s %10.3f %10.3f %7.2fx %9.1f %7s" % (
                name[:36], " ".join("x".join(map(str, s)) for s in shapes)[:34], t_eager,
                t_fused, t_eager / t_fused, gbs,
                "%.0f%%" % (100 * gbs * 1e9 / peak) if peak else "?"))
    print("GB/s: (inputs read once + outputs written once) / fused time; for the MLP layer "
          "the matmul is compute-bound, so its GB/s is not a roofline fraction.")


if __name__ == "__main__":
    main()
