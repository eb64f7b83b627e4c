"""One way for tests to run an ExportedProgram through each runner users have: module(),
ep.compile() (NumPy), a save/load round trip, the CuPy backend under the CPU emulator, and
dask (each skipped where its requirement is missing)."""
import shutil

import pytest

import symshape as ss


def runner(ep, kind: str, tmp_path, dask_chunks: int = 3):
    """The callable ``kind`` makes of ``ep``: "module", "compile", "loaded", "cupy" or
    "dask" (which wraps NumPy inputs as dask arrays of ``dask_chunks`` rows)."""
    if kind == "module":
        return ep.module()
    if kind == "compile":
        return ep.compile()
    if kind == "loaded":
        ss.save(ep, tmp_path / "p.json")
        return ss.load(tmp_path / "p.json").module()
    if kind == "dask":
        da = pytest.importorskip("dask.array")
        run = ep.compile(backend="dask")
        return lambda x: run(da.from_array(x, chunks=dask_chunks))
    assert kind == "cupy", kind
    if shutil.which("g++") is None:
        pytest.skip("the CUDA emulator needs g++")
    from symshape.codegen.cuda import compile_cupy
    from symshape.codegen.cuda.emulate import emulate
    return emulate(compile_cupy(ep))
