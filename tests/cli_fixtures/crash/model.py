import numpy as np

import symshape as ss


@ss.exportable(example_inputs=(np.ones((4, 3)),), dynamic_shapes={"x": (ss.Dim.AUTO, None)})
def buggy(x):
    return x @ undefined_weights  # noqa: F821 - the bug


@ss.exportable(example_inputs=(np.ones((4, 3)),), dynamic_shapes={"x": (ss.Dim("n"), None)})
def value_branch(x):
    if x.sum() > 0:          # branches on array values: GuardOnDataDependentError
        return x
    return -x
