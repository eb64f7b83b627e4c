"""Shared by the ONNX tests: export a program's model, check it the strict way, run it in
onnxruntime and compare with eager NumPy."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def checked_model(ep, **kw):
    """``ep.to_onnx(**kw)``, after ``onnx.checker`` (full check) and strict shape inference
    (which must agree with every declared shape) passed on it."""
    model = ep.to_onnx(**kw)
    onnx.checker.check_model(model, full_check=True)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    return model


def session(model):
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def feeds(model, args, ep=None):
    """Graph inputs from the user arguments: each ``USER_INPUT`` by its path (``x``,
    ``params['fc']['w']``, read off ``ep``'s call signature when given, else the arguments
    in order), Python ints as int64 scalars; ``STATE`` inputs from ``ep.state``."""
    import json
    sig = json.loads({p.key: p.value for p in model.metadata_props}["symshape.signature"])
    users = [e for e in sig["inputs"] if e["kind"] == "USER_INPUT"]
    if ep is not None and ep.call_signature is not None:
        bound = ep.call_signature.bind(*args).arguments
        values = [eval(e["path"], {}, dict(bound)) for e in users]
    else:
        values = list(args)
        assert len(users) == len(values), (users, len(values))
    out = {e["name"]: (np.asarray(v, np.int64) if isinstance(v, (int, np.integer)) and not
                       isinstance(v, np.ndarray) else np.require(v, requirements="C"))
           for e, v in zip(users, values)}
    for e in sig["inputs"]:
        if e["kind"] == "STATE":
            out[e["name"]] = np.require(ep.state[e["path"]], requirements="C")
    return out


def ulps(dt) -> float:
    """The float tolerance: the numba backend's contract, a few ulps (composites such as
    log1p / expm1 / atan2 are built from several correctly rounded steps)."""
    dt = np.dtype(dt)
    if dt.kind != "f":
        return 0.0
    return float(np.finfo(dt).eps) * (8 if dt.itemsize >= 4 else 2)


def close(got, want, rtol=None):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                 got.dtype, want.dtype)
    if want.dtype.kind == "f":
        tol = ulps(want.dtype) if rtol is None else rtol
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                                   atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def same_results(got, want, rtol=None):
    want = want if isinstance(want, (tuple, list)) else (want,)
    got = got if isinstance(got, (tuple, list)) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        close(g, w, rtol)
