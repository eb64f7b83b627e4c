"""Programs in the styles of public NumPy code with a Python loop over a dynamic count (an
Elman RNN and an LSTM over time with the outputs stacked, a Kalman filter class over a batch
of measurements, a moving average over rows, a leapfrog integrator for n steps, the deltas of
speech features over frames, an N-body simulation with loops nested over steps and
particles): each exports once with a dynamic count and matches eager
NumPy, values and object state, at several counts through ``ep.module()``, every backend
(numpy, numba, Dask, onnxruntime), ``ss.save`` / ``ss.load`` and ``ss.compile`` (one
variant).  Written for this suite (issue 41)."""
import io

import numpy as np
import pytest

import symshape as ss

from loop_programs import make_elman

RNG = np.random.default_rng(7)
Wx = RNG.standard_normal((3, 16)) * 0.5
Wh = RNG.standard_normal((4, 16)) * 0.5
B = RNG.standard_normal(16) * 0.1
EW = RNG.standard_normal((3, 6)) * 0.5
EU = RNG.standard_normal((6, 6)) * 0.3
elman = make_elman(EW, EU)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm(x):
    H = Wh.shape[0]
    h, c = np.zeros(H), np.zeros(H)
    outputs = []
    for t in range(x.shape[0]):
        z = x[t] @ Wx + h @ Wh + B
        i, f, o = sigmoid(z[:H]), sigmoid(z[H:2 * H]), sigmoid(z[2 * H:3 * H])
        g = np.tanh(z[3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
        outputs.append(h)
    return np.array(outputs), h, c


class KalmanFilter:
    def __init__(self):
        self.x = np.zeros(2)
        self.P = np.eye(2) * 10.0
        self.F = np.array([[1.0, 0.1], [0.0, 1.0]])
        self.H = np.array([[1.0, 0.0]])
        self.Q = np.eye(2) * 1e-3
        self.R = np.array([[0.25]])

    def predict(self):
        self.x = self.F @ self.x
        self.P = self.F @ self.P @ self.F.T + self.Q

    def update(self, z):
        y = z - self.H @ self.x
        S = self.H @ self.P @ self.H.T + self.R
        K = self.P @ self.H.T @ np.linalg.inv(S)
        self.x = self.x + K @ y
        self.P = (np.eye(2) - K @ self.H) @ self.P

    def batch_filter(self, zs):
        n = len(zs)
        means = np.zeros((n, 2))
        covariances = np.zeros((n, 2, 2))
        for i, z in enumerate(zs):
            self.predict()
            self.update(z)
            means[i, :] = self.x
            covariances[i, :, :] = self.P
        return means, covariances


def moving_average(x, alpha):
    out = np.empty_like(x)
    avg = x[0]
    for i, row in enumerate(x):
        avg = alpha * row + (1 - alpha) * avg
        out[i] = avg
    return out


def leapfrog(q, p, masses, n_steps):
    dt = 0.01
    for _ in range(n_steps):
        p = p - 0.5 * dt * q * masses
        q = q + dt * p / masses
        p = p - 0.5 * dt * q * masses
    return q, p


def delta(feat, N):
    NUMFRAMES = len(feat)
    denominator = 2 * sum([i ** 2 for i in range(1, N + 1)])
    delta_feat = np.empty_like(feat)
    padded = np.pad(feat, ((N, N), (0, 0)), mode="edge")
    for t in range(NUMFRAMES):
        delta_feat[t] = np.dot(np.arange(-N, N + 1), padded[t:t + 2 * N + 1]) / denominator
    return delta_feat


T1 = ss.Dim("T", min=1)
CASES = {
    "elman": (elman, lambda n: (RNG.standard_normal((n, 3)),), {"x": {0: T1}}),
    "lstm": (lstm, lambda n: (RNG.standard_normal((n, 3)),), {"x": {0: T1}}),
    "moving_average": (moving_average, lambda n: (RNG.standard_normal((n, 4)), 0.3),
                       {"x": {0: T1}, "alpha": None}),
    "leapfrog": (leapfrog, lambda n: (np.ones(5), np.zeros(5), np.linspace(1, 2, 5), n),
                 {"q": None, "p": None, "masses": None, "n_steps": ss.Dim("n", min=0)}),
    "delta": (delta, lambda n: (RNG.standard_normal((n, 13)), 2), {"feat": {0: T1}, "N": None}),
}
COUNTS = (1, 2, 9, 40)


def _same(want, got):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for a, b in zip(want, got):
            _same(a, b)
        return
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)


def _dask_args(args):
    import dask.array as da
    return tuple(da.from_array(a, chunks=4) if isinstance(a, np.ndarray) and a.ndim else a
                 for a in args)


def _computed(v):
    if isinstance(v, tuple):
        return tuple(_computed(x) for x in v)
    return np.asarray(v.compute() if hasattr(v, "compute") else v)


@pytest.mark.parametrize("name", sorted(CASES))
def test_program_exports_once_and_matches_eager_everywhere(name):
    f, make, spec = CASES[name]
    ep = ss.export(f, make(5), dynamic_shapes=spec)
    assert any(n.op == "for_loop" for n in ep.graph.nodes)
    buf = io.BytesIO()
    ss.save(ep, buf)
    buf.seek(0)
    runners = {"module": ep.module(), "numpy": ep.compile(), "loaded": ss.load(buf).module(),
               "numba": ep.compile(backend="numba")}
    dask_run = ep.compile(backend="dask")
    # (np.pad has no ONNX translation: delta stays off onnxruntime, loop or not)
    onnx_run = ep.compile(backend="onnxruntime") if name != "delta" else None
    jit = ss.compile(f, dynamic=True)
    for n in COUNTS:
        args = make(n)
        want = f(*args)
        for key, run in runners.items():
            _same(want, run(*args))
        _same(want, _computed(dask_run(*_dask_args(args))))
        if onnx_run is not None:
            _same(want, onnx_run(*args))
        if n >= 2:                    # sizes 0 and 1 have variants of their own
            _same(want, jit(*args))
    # an int argument is static on the first call under ss.compile, dynamic from the
    # second size on: then one variant for every count
    assert len(jit.variants) == (2 if name == "leapfrog" else 1)


def test_kalman_filter_class_over_a_batch_of_measurements():
    kf = KalmanFilter()
    ep = ss.export(kf.batch_filter, (RNG.standard_normal((6, 1)),),
                   dynamic_shapes={"zs": {0: T1}})
    assert kf.x.tolist() == [0.0, 0.0]
    for backend in ("module", "numpy", "numba"):
        run = ep.module() if backend == "module" else ep.compile(backend=backend)
        for n in COUNTS:
            zs = RNG.standard_normal((n, 1))
            kf.__init__()
            twin = KalmanFilter()
            _same(twin.batch_filter(zs), run(zs))
            _same(twin.x, kf.x)
            _same(twin.P, kf.P)


def nbody(pos, vel, n_steps):        # an N-body simulation, written for this suite
    dt = 0.01
    for step in range(n_steps):
        acc = np.zeros_like(pos)
        for i in range(pos.shape[0]):
            for j in range(pos.shape[0]):
                d = pos[j] - pos[i]
                r2 = (d * d).sum() + 0.1
                acc[i] += d / r2 ** 1.5
        vel = vel + dt * acc
        pos = pos + dt * vel
    return pos, vel


def test_n_body_with_loops_nested_over_steps_and_particles():
    N = ss.Dim("N", min=1)
    ep = ss.export(nbody, (RNG.standard_normal((4, 3)), np.zeros((4, 3)), 3),
                   dynamic_shapes={"pos": {0: N}, "vel": {0: N},
                                   "n_steps": ss.Dim("S", min=0)})
    assert sum(n.op == "for_loop" for n in ep.graph.nodes) == 1      # the others nest
    runs = [ep.module(), ep.compile(), ep.compile(backend="numba")]
    for n, steps in ((1, 3), (2, 0), (3, 4), (7, 2)):
        p, v = RNG.standard_normal((n, 3)), RNG.standard_normal((n, 3))
        want = nbody(p, v, steps)
        for run in runs:
            _same(want, run(p, v, steps))
