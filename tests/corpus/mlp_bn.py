"""An MLP with batch normalization, written as layer classes holding weights and running
statistics (updated in place while training), composed in a list."""
import numpy as np

rng = np.random.default_rng(5)


class Linear:
    def __init__(self, n_in, n_out):
        self.W = rng.standard_normal((n_in, n_out)) * np.sqrt(2.0 / n_in)
        self.b = np.zeros(n_out)

    def __call__(self, x):
        return x @ self.W + self.b


class BatchNorm1d:
    def __init__(self, n, momentum=0.1, eps=1e-5):
        self.gamma, self.beta = np.ones(n), np.zeros(n)
        self.running_mean, self.running_var = np.zeros(n), np.ones(n)
        self.momentum, self.eps = momentum, eps
        self.training = True

    def __call__(self, x):
        if self.training:
            mean = x.mean(axis=0)
            var = x.var(axis=0)
            n = x.shape[0]
            self.running_mean *= 1 - self.momentum
            self.running_mean += self.momentum * mean
            self.running_var *= 1 - self.momentum
            self.running_var += self.momentum * var * n / (n - 1)
        else:
            mean, var = self.running_mean, self.running_var
        x_hat = (x - mean) / np.sqrt(var + self.eps)
        return self.gamma * x_hat + self.beta


class ReLU:
    def __call__(self, x):
        return np.maximum(x, 0)


class MLP:
    def __init__(self, sizes=(32, 64, 64, 10)):
        self.layers = []
        for n_in, n_out in zip(sizes[:-2], sizes[1:-1]):
            self.layers += [Linear(n_in, n_out), BatchNorm1d(n_out), ReLU()]
        self.layers.append(Linear(sizes[-2], sizes[-1]))

    def train(self, mode=True):
        for layer in self.layers:
            if isinstance(layer, BatchNorm1d):
                layer.training = mode
        return self

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
