"""A small CNN: convolution by im2col with fancy indexing (the classic course-notes style),
ReLU, 2x2 max pooling by reshape, and a linear classifier, over a dict of parameters."""
import numpy as np

rng = np.random.default_rng(11)


def init_params(c_in=3, c1=8, c2=16, n_classes=10, hw=16):
    def conv(ci, co, k):
        return {"w": rng.standard_normal((co, ci, k, k)) * np.sqrt(2.0 / (ci * k * k)),
                "b": np.zeros(co)}
    flat = c2 * (hw // 4) * (hw // 4)
    return {"conv1": conv(c_in, c1, 3), "conv2": conv(c1, c2, 3),
            "fc": {"w": rng.standard_normal((flat, n_classes)) * np.sqrt(1.0 / flat),
                   "b": np.zeros(n_classes)}}


def im2col_indices(x_shape, field_height, field_width, padding=1, stride=1):
    """Row / column gather indices turning image patches into matrix columns."""
    N, C, H, W = x_shape
    out_height = (H + 2 * padding - field_height) // stride + 1
    out_width = (W + 2 * padding - field_width) // stride + 1
    i0 = np.repeat(np.arange(field_height), field_width)
    i0 = np.tile(i0, C)
    i1 = stride * np.repeat(np.arange(out_height), out_width)
    j0 = np.tile(np.arange(field_width), field_height * C)
    j1 = stride * np.tile(np.arange(out_width), out_height)
    i = i0.reshape(-1, 1) + i1.reshape(1, -1)
    j = j0.reshape(-1, 1) + j1.reshape(1, -1)
    k = np.repeat(np.arange(C), field_height * field_width).reshape(-1, 1)
    return k, i, j


def im2col(x, field_height, field_width, padding=1, stride=1):
    p = padding
    x_padded = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), mode="constant")
    k, i, j = im2col_indices(x.shape, field_height, field_width, padding, stride)
    cols = x_padded[:, k, i, j]                       # (N, C*fh*fw, out_h*out_w)
    C = x.shape[1]
    return cols.transpose(1, 2, 0).reshape(field_height * field_width * C, -1)


def conv2d(x, w, b, stride=1, padding=1):
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    out_h = (H + 2 * padding - HH) // stride + 1
    out_w = (W + 2 * padding - WW) // stride + 1
    cols = im2col(x, HH, WW, padding, stride)
    out = w.reshape(F, -1) @ cols + b.reshape(-1, 1)
    return out.reshape(F, out_h, out_w, N).transpose(3, 0, 1, 2)


def relu(x):
    return np.maximum(x, 0)


def max_pool2x2(x):
    N, C, H, W = x.shape
    return x.reshape(N, C, H // 2, 2, W // 2, 2).max(axis=(3, 5))


def cnn(x, params):
    """Class scores for a batch of images ``x`` (N, C, H, W), H and W multiples of 4."""
    h = max_pool2x2(relu(conv2d(x, **params["conv1"])))
    h = max_pool2x2(relu(conv2d(h, **params["conv2"])))
    h = h.reshape(h.shape[0], -1)
    return h @ params["fc"]["w"] + params["fc"]["b"]
