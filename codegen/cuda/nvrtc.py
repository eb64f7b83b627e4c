"""Compile generated kernels with NVRTC, the compiler CuPy's ``RawKernel`` uses, without a
device: CuPy's low-level NVRTC bindings (``createProgram`` / ``compileProgram`` /
``getPTX``) need the ``cupy-cuda12x`` and ``nvidia-cuda-nvrtc-cu12`` wheels but no driver.
"""
from __future__ import annotations

from typing import Optional

from .backend import NVRTC_OPTIONS
from .kernels import Kernel


def nvrtc_module():
    """CuPy's NVRTC bindings, or None when CuPy or the NVRTC library is missing."""
    try:
        from cupy_backends.cuda.libs import nvrtc
        nvrtc.getVersion()                 # loads libnvrtc: fails when the wheel is absent
        return nvrtc
    except Exception:
        return None


def nvrtc_ptx(k: Kernel, arch: str = "compute_80", index64: bool = False,
              nvrtc=None, vec: bool = False, strided: bool = False) -> str:
    """The PTX NVRTC makes of kernel ``k`` with the options the CuPy runtime passes
    (``index64``: the 64-bit index variant, ``vec``: the 128-bit pointwise variant,
    ``strided``: the variant reading strided views);
    RuntimeError with NVRTC's log on failure."""
    nvrtc = nvrtc or nvrtc_module()
    if nvrtc is None:
        raise RuntimeError("NVRTC is not available: pip install cupy-cuda12x "
                           "nvidia-cuda-nvrtc-cu12")
    opts = list(NVRTC_OPTIONS) + ["--gpu-architecture=%s" % arch]
    if index64:
        opts.append("-DSS_INDEX64")
    if vec:
        opts.append("-DSS_VEC")
    if strided:
        opts.append("-DSS_STRIDED")
    prog = nvrtc.createProgram(k.source, k.name + ".cu", [], [])
    try:
        try:
            nvrtc.compileProgram(prog, opts)
        except Exception as e:
            log: Optional[str] = None
            try:
                log = nvrtc.getProgramLog(prog)
            except Exception:
                pass
            raise RuntimeError("NVRTC failed on kernel %s (%s): %s\n%s"
                               % (k.name, " ".join(opts), e, log or "")) from None
        ptx = nvrtc.getPTX(prog)
    finally:
        nvrtc.destroyProgram(prog)
    return ptx.decode() if isinstance(ptx, bytes) else ptx
