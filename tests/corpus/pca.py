"""PCA and whitening as plain functions, the way analysis scripts write them: centering,
covariance with 1 / (n - 1), eigendecomposition, projection (the number of samples is dynamic,
the number of features static)."""
import numpy as np


def fit(X):
    mean = X.mean(axis=0)
    Xc = X - mean
    cov = Xc.T @ Xc / (X.shape[0] - 1)
    eigvals, eigvecs = np.linalg.eigh(cov)
    order = np.argsort(eigvals)[::-1]
    return mean, eigvals[order], eigvecs[:, order]


def transform(X, n_components=2):
    mean, eigvals, eigvecs = fit(X)
    # eigenvectors have no sign: fix each by its largest entry, as libraries do
    signs = np.sign(eigvecs[np.argmax(np.abs(eigvecs), axis=0), np.arange(eigvecs.shape[1])])
    components = (eigvecs * signs)[:, :n_components]
    return (X - mean) @ components


def whiten(X, eps=1e-8):
    mean, eigvals, eigvecs = fit(X)
    return (X - mean) @ eigvecs / np.sqrt(eigvals + eps)


def standardize(X):
    return (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
