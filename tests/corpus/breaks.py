"""A program with two graph breaks (a print, then a branch on array values): the JIT tests
and the real-model benchmark compile it, and messages point at its lines here."""
import numpy as np


def toy(a, b):
    x = a / (np.abs(a) + 1)
    print("woo")
    if b.sum() < 0:
        b = b * -1
    return x * b
