"""One way for tests to run an ExportedProgram through each runner users have: module(),
ep.compile() (NumPy), a save/load round trip, the CuPy backend under the CPU emulator, and
dask (each skipped where its requirement is missing)."""
import importlib.util
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


def import_source(tmp_path_factory, src: str, prefix: str = "prog"):
    """``src`` written to a fresh file and imported as a module (a real file, so
    ``ss.compile`` can read the function's source to split it at graph breaks)."""
    path = tmp_path_factory.mktemp(prefix) / ("%s.py" % prefix)
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("%s_%d" % (prefix, abs(hash(src))), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
