"""torch.export's time on the programs of ``export_speed.py``, for the ratio it prints.

    /path/to/torch-venv/bin/python benchmarks/torch_export_speed.py [--repeat 5]

PyTorch is never a dependency of symshape: run this file with the Python of a separate
environment that has it (``python -m venv tv && tv/bin/pip install torch numpy``), or let
``python benchmarks/export_speed.py --torch-python tv/bin/python`` run it and print the
ratio.  The modules are the same programs as ``models.mlp`` and
``models.transformer_block`` (same shapes, dynamic batch and sequence), written with
``torch``; this file imports nothing of symshape.  It prints one JSON object: the median
warm export time in milliseconds per program (the first export, which pays imports and
caches, is left out, as in ``export_speed.py``).
"""
import argparse
import json

import torch
from torch.export import Dim, export

from medians import median_ms

D, H = 64, 4


class MLP(torch.nn.Module):
    """models.mlp: relu(x @ W1 + b1) @ W2 + b2, 64 -> 128 -> 64."""

    def __init__(self):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(64, 128) * 0.1)
        self.b1 = torch.nn.Parameter(torch.zeros(128))
        self.w2 = torch.nn.Parameter(torch.randn(128, 64) * 0.1)
        self.b2 = torch.nn.Parameter(torch.zeros(64))

    def forward(self, x):
        h = torch.clamp_min(x @ self.w1 + self.b1, 0)
        return h @ self.w2 + self.b2


def _layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(dim=-1, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * g + b


class Block(torch.nn.Module):
    """models.transformer_block: pre-norm causal attention (4 heads) and a GELU MLP."""

    def __init__(self):
        super().__init__()
        shapes = {"wq": (D, D), "wk": (D, D), "wv": (D, D), "wo": (D, D),
                  "w1": (D, 4 * D), "w2": (4 * D, D), "g1": (D,), "b1": (D,),
                  "g2": (D,), "b2": (D,)}
        for k, s in shapes.items():
            setattr(self, k, torch.nn.Parameter(torch.randn(*s) * 0.1))

    def forward(self, x):
        B, T, C = x.shape
        h = _layer_norm(x, self.g1, self.b1)
        q = (h @ self.wq).reshape(B, T, H, C // H).transpose(1, 2)
        k = (h @ self.wk).reshape(B, T, H, C // H).transpose(1, 2)
        v = (h @ self.wv).reshape(B, T, H, C // H).transpose(1, 2)
        att = q @ k.transpose(2, 3) / (C // H) ** 0.5
        i = torch.arange(T)
        causal = i[:, None] < i[None, :]
        att = torch.softmax(torch.where(causal, -1e9, att), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + y @ self.wo
        h = _layer_norm(x, self.g2, self.b2)
        u = h @ self.w1
        u = 0.5 * u * (1 + torch.tanh(0.7978845608 * (u + 0.044715 * u ** 3)))
        return x + u @ self.w2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(1)
    batch, seq = Dim("batch"), Dim("seq")
    mlp, block = MLP(), Block()
    out = {
        "torch": torch.__version__,
        "2-layer MLP (dynamic batch)": median_ms(
            lambda: export(mlp, (torch.ones(8, 64),), dynamic_shapes={"x": (batch, Dim.STATIC)}),
            a.repeat),
        "transformer block (dynamic batch, seq)": median_ms(
            lambda: export(block, (torch.ones(2, 16, D),),
                           dynamic_shapes={"x": (batch, seq, Dim.STATIC)}), a.repeat),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
