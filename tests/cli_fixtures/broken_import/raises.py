import symshape as ss


def load_weights():
    raise RuntimeError("weights.npz not found")


WEIGHTS = load_weights()


@ss.exportable(example_inputs=(1,))
def f(x):
    return x
