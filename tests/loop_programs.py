"""Loop programs (issue 41) shared by the loop tests and benchmarks: an Elman RNN built over
given weights, running sums, writes ``y[t] = ...``, a gated RNN, a Kalman filter class and a
leapfrog integrator, each a Python ``for`` over a dynamic count; and the comparison of a
backend's results with eager NumPy that several backends' tests use.

Weights are arguments (``make_elman(W, U)``), not drawn here, so each test file keeps its
own random generator and draws exactly the values it drew before."""
import numpy as np


def make_elman(W, U, last=True):
    """An Elman RNN ``elman(x)`` over the rows of ``x`` with input weights ``W`` and
    recurrent weights ``U``: returns the stacked hidden states, and the last one if
    ``last``."""
    size = U.shape[0]

    def elman(x):
        h = np.zeros(size)
        outs = []
        for t in range(x.shape[0]):
            h = np.tanh(x[t] @ W + h @ U)
            outs.append(h)
        return (np.stack(outs), h) if last else np.stack(outs)
    return elman


def cumulative(x):
    """A carried running sum of half of every row."""
    acc = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        acc = acc + x[t] * 0.5
    return acc


def written_plus_one(x):
    """Writes ``y[t] = sin(x[t]) + 1.0`` into an array made before the loop."""
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        y[t] = np.sin(x[t]) + 1.0
    return y


def written_plus_t(x):
    """Writes ``y[t] = sin(x[t]) + t``: the loop index is read in the body."""
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        y[t] = np.sin(x[t]) + t
    return y


def gated(x):
    """An elementwise gated RNN over the first axis: stacked states and the last one."""
    h = np.zeros(x.shape[1:])
    outs = []
    for t in range(x.shape[0]):
        z = 1.0 / (1.0 + np.exp(-x[t]))
        h = z * h + (1.0 - z) * np.tanh(x[t] + h)
        outs.append(h)
    return np.stack(outs), h


def nested(x):
    """A loop over the columns inside a loop over the rows, writing ``acc[j]``."""
    acc = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        for j in range(x.shape[1]):
            acc[j] = acc[j] * 0.5 + x[t, j]
    return acc


def odd_rows(x):
    """A loop with a start of 1 and a step of 2, reading the index."""
    acc = np.zeros(x.shape[1])
    for t in range(1, x.shape[0], 2):
        acc = acc + x[t] * t
    return acc


def leapfrog(q, p, n, dt):
    """``n`` leapfrog steps of size ``dt`` of a harmonic oscillator: the count is an
    integer input."""
    for _ in range(n):
        p = p - 0.5 * dt * q
        q = q + dt * p
        p = p - 0.5 * dt * q
    return q, p


class Filter:
    """A constant-velocity Kalman filter whose ``batch_filter`` loops over measurements,
    writing the object's state every iteration."""

    def __init__(self):
        self.x = np.zeros(2)
        self.P = np.eye(2)
        self.F = np.array([[1.0, 1.0], [0.0, 1.0]])
        self.H = np.array([[1.0, 0.0]])
        self.R = np.eye(1) * 0.5

    def predict(self):
        """Moves the state one step."""
        self.x = self.F @ self.x
        self.P = self.F @ self.P @ self.F.T + 0.01

    def update(self, z):
        """Folds in one measurement ``z``."""
        y = z - self.H @ self.x
        S = self.H @ self.P @ self.H.T + self.R
        K = self.P @ self.H.T @ np.linalg.inv(S)
        self.x = self.x + K @ y
        self.P = (np.eye(2) - K @ self.H) @ self.P

    def batch_filter(self, zs):
        """The filtered means over the rows of ``zs``."""
        means = []
        for z in zs:
            self.predict()
            self.update(z)
            means.append(self.x)
        return np.stack(means)


def assert_same(got, want, rtol, atol, f32=None):
    """Asserts a backend's results ``got`` equal eager NumPy's ``want`` (one array or a
    tuple): as many, same shapes and dtypes, values within ``rtol`` / ``atol`` (both
    ``f32`` where eager's value is float32, when given)."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        r, a = (f32, f32) if f32 is not None and w.dtype == np.float32 else (rtol, atol)
        np.testing.assert_allclose(g, w, rtol=r, atol=a)
