"""A LLaMA-style model written as classes holding weights and a KV cache."""
import numpy as np

rng = np.random.default_rng(3)


def rms_norm(x, w, eps=1e-6):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def silu(x):
    return x / (1 + np.exp(-x))


def apply_rope(x, cos, sin):
    x1, x2 = x[..., ::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., ::2] = x1 * cos[None, :, None, :] - x2 * sin[None, :, None, :]
    out[..., 1::2] = x1 * sin[None, :, None, :] + x2 * cos[None, :, None, :]
    return out


class Attention:
    def __init__(self, dim, n_heads, max_batch, max_seq):
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.wq, self.wk, self.wv, self.wo = (rng.standard_normal((dim, dim)) * 0.15
                                              for _ in range(4))
        self.cache_k = np.zeros((max_batch, max_seq, n_heads, self.head_dim))
        self.cache_v = np.zeros((max_batch, max_seq, n_heads, self.head_dim))

    def __call__(self, x, start_pos, cos, sin, mask):
        B, L, _ = x.shape
        xq = (x @ self.wq).reshape(B, L, self.n_heads, self.head_dim)
        xk = (x @ self.wk).reshape(B, L, self.n_heads, self.head_dim)
        xv = (x @ self.wv).reshape(B, L, self.n_heads, self.head_dim)
        xq, xk = apply_rope(xq, cos, sin), apply_rope(xk, cos, sin)
        self.cache_k[:B, start_pos:start_pos + L] = xk
        self.cache_v[:B, start_pos:start_pos + L] = xv
        keys = self.cache_k[:B, :start_pos + L].transpose(0, 2, 3, 1)
        values = self.cache_v[:B, :start_pos + L].transpose(0, 2, 1, 3)
        scores = xq.transpose(0, 2, 1, 3) @ keys / np.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores = scores / scores.sum(axis=-1, keepdims=True)
        out = (scores @ values).transpose(0, 2, 1, 3).reshape(B, L, -1)
        return out @ self.wo


class FeedForward:
    def __init__(self, dim, hidden):
        self.w1 = rng.standard_normal((dim, hidden)) * 0.15
        self.w2 = rng.standard_normal((hidden, dim)) * 0.15
        self.w3 = rng.standard_normal((dim, hidden)) * 0.15

    def __call__(self, x):
        return (silu(x @ self.w1) * (x @ self.w3)) @ self.w2


class TransformerBlock:
    def __init__(self, dim, n_heads, max_batch, max_seq):
        self.attention = Attention(dim, n_heads, max_batch, max_seq)
        self.feed_forward = FeedForward(dim, 2 * dim)
        self.attention_norm = np.ones(dim)
        self.ffn_norm = np.ones(dim)

    def __call__(self, x, start_pos, cos, sin, mask):
        h = x + self.attention(rms_norm(x, self.attention_norm), start_pos, cos, sin, mask)
        return h + self.feed_forward(rms_norm(h, self.ffn_norm))


class Llama:
    def __init__(self, vocab=50, dim=16, n_heads=2, n_layers=2, max_batch=4, max_seq=48):
        self.tok_embedding = rng.standard_normal((vocab, dim)) * 0.5
        self.layers = [TransformerBlock(dim, n_heads, max_batch, max_seq)
                       for _ in range(n_layers)]
        self.norm = np.ones(dim)
        self.output = rng.standard_normal((dim, vocab)) * 0.2
        hd = dim // n_heads
        freqs = 1.0 / (10000.0 ** (np.arange(0, hd, 2) / hd))
        angles = np.outer(np.arange(max_seq), freqs)
        self.freqs_cos, self.freqs_sin = np.cos(angles), np.sin(angles)

    def forward(self, tokens, start_pos):
        """Logits for ``tokens`` (batch, length) written at cache position ``start_pos``."""
        return self.decode(self.tok_embedding[tokens], start_pos)

    def decode(self, h, start_pos):
        """Logits from the token embeddings ``h`` (batch, length, dim) at ``start_pos``."""
        L = h.shape[1]
        cos = self.freqs_cos[start_pos:start_pos + L]
        sin = self.freqs_sin[start_pos:start_pos + L]
        mask = None
        if L > 1:
            mask = np.full((L, L), float("-inf"))
            mask = np.triu(mask, k=1)
            mask = np.hstack([np.zeros((L, start_pos)), mask])
        for layer in self.layers:
            h = layer(h, start_pos, cos, sin, mask)
        return rms_norm(h, self.norm) @ self.output


class ChattyLlama(Llama):
    """The same model with one debugging ``print`` in forward(), as people leave them (a graph
    break for ss.compile)."""

    def forward(self, tokens, start_pos):
        h = self.tok_embedding[tokens]
        print("tokens", tokens.shape, "at", start_pos)
        return self.decode(h, start_pos)
