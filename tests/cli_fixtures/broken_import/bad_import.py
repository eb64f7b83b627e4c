"""Declares an export, but cannot be imported: a dependency is missing."""
import numpy as np

import symshape as ss
import symshape_missing_dependency_xyz  # noqa: F401


@ss.exportable(example_inputs=(np.ones(3),))
def f(x):
    return x
