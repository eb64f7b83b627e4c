"""An Elman RNN and a GRU cell written as classes holding their weights, unrolled over a fixed
number of time steps in a Python loop, as tutorials write them; the batch is dynamic."""
import numpy as np

rng = np.random.default_rng(11)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


class RNN:
    def __init__(self, n_in, n_hidden, n_out):
        self.Wxh = rng.standard_normal((n_in, n_hidden)) * 0.3
        self.Whh = rng.standard_normal((n_hidden, n_hidden)) * 0.3
        self.Why = rng.standard_normal((n_hidden, n_out)) * 0.3
        self.bh = np.zeros(n_hidden)
        self.by = np.zeros(n_out)

    def forward(self, xs):
        """xs: (batch, steps, n_in) -> logits of the last step, and every hidden state."""
        batch, steps, _ = xs.shape
        h = np.zeros((batch, self.Whh.shape[0]))
        hs = []
        for t in range(steps):
            h = np.tanh(xs[:, t, :] @ self.Wxh + h @ self.Whh + self.bh)
            hs.append(h)
        return h @ self.Why + self.by, np.stack(hs, axis=1)


class GRUCell:
    def __init__(self, n_in, n_hidden):
        def w(*shape):
            return rng.standard_normal(shape) * 0.2
        self.params = {gate: {"W": w(n_in, n_hidden), "U": w(n_hidden, n_hidden),
                              "b": np.zeros(n_hidden)} for gate in ("z", "r", "h")}

    def __call__(self, x, h):
        p = self.params
        z = sigmoid(x @ p["z"]["W"] + h @ p["z"]["U"] + p["z"]["b"])
        r = sigmoid(x @ p["r"]["W"] + h @ p["r"]["U"] + p["r"]["b"])
        h_tilde = np.tanh(x @ p["h"]["W"] + (r * h) @ p["h"]["U"] + p["h"]["b"])
        return (1 - z) * h + z * h_tilde


rnn = RNN(6, 12, 3)
gru = GRUCell(6, 12)
