"""Small models written directly against ``lazycore.numeric`` and ``lazycore.grad``,
trained with plain SGD, optionally sharded over a mesh. Shared by the sharding tests."""

from __future__ import annotations

import numpy as np

import lazycore as lc
from lazycore import numeric as nm

LR = 0.1


def _linear(x, w, b):
    return nm.elementwise("add", nm.matmul(x, w), b)


# -- MLP ---------------------------------------------------------------------------

def mlp_params(rng, sizes=(16, 32, 32, 4)) -> dict[str, np.ndarray]:
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        params[f"w{i}"] = (rng.normal(size=(n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)
        params[f"b{i}"] = np.zeros(n_out, np.float32)
    return params


def mlp_loss(p: dict, x, y):
    n = len(p) // 2
    h = x
    for i in range(n):
        h = _linear(h, p[f"w{i}"], p[f"b{i}"])
        if i < n - 1:
            h = nm.relu(h)
    return nm.cross_entropy(h, y)


# Megatron-style tensor parallelism: column-split then row-split layers
MLP_TP_SPECS = {"w0": (None, "model"), "b0": ("model",), "w1": ("model", None)}


# -- a small transformer (one pre-norm block, mean-pooled classifier head) ------------

def transformer_params(rng, d=16, heads=4, ff=32, classes=4) -> dict[str, np.ndarray]:
    def w(*shape):
        return (rng.normal(size=shape) / np.sqrt(shape[0])).astype(np.float32)

    return {"wq": w(d, d), "wk": w(d, d), "wv": w(d, d), "wo": w(d, d),
            "w1": w(d, ff), "b1": np.zeros(ff, np.float32), "w2": w(ff, d),
            "b2": np.zeros(d, np.float32), "ln1": np.ones(d, np.float32),
            "ln2": np.ones(d, np.float32), "head": w(d, classes),
            "heads": np.zeros(heads, np.float32)}  # only its length is used


TRANSFORMER_TP_SPECS = {"wq": (None, "model"), "wk": (None, "model"), "wv": (None, "model"),
                        "wo": ("model", None), "w1": (None, "model"), "b1": ("model",),
                        "w2": ("model", None)}


def transformer_loss(p: dict, x, y):
    b, t, d = x.shape
    h = p["heads"].shape[0]

    def split(z):  # [b, t, d] -> [b, heads, t, d/heads]
        return nm.transpose(nm.reshape(z, (b, t, h, d // h)), (0, 2, 1, 3))

    z = nm.layer_norm(x, 1, p["ln1"])
    q, k, v = (split(nm.matmul(z, p[n])) for n in ("wq", "wk", "wv"))
    scores = nm.elementwise("mul", nm.matmul(q, nm.transpose(k, (0, 1, 3, 2))),
                            float(1 / np.sqrt(d // h)))
    att = nm.matmul(nm.softmax(scores, -1), v)
    att = nm.reshape(nm.transpose(att, (0, 2, 1, 3)), (b, t, d))
    x = nm.elementwise("add", x, nm.matmul(att, p["wo"]))
    z = nm.layer_norm(x, 1, p["ln2"])
    ff = _linear(nm.gelu(_linear(z, p["w1"], p["b1"])), p["w2"], p["b2"])
    x = nm.elementwise("add", x, ff)
    return nm.cross_entropy(nm.matmul(nm.mean(x, 1), p["head"]), y)


# -- training ----------------------------------------------------------------------

def train(loss_fn, params_np: dict, batches, *, mesh=None, batch_specs=None,
          param_specs=None):
    """SGD over ``batches``; returns (losses, final params as NumPy). With ``mesh``, the
    batch is split by ``batch_specs`` and parameters by ``param_specs`` (the rest are
    left to XLA). Each step ends in one full sync, like a training loop's mark_step."""
    params = {k: lc.asarray(v) for k, v in params_np.items()}
    if mesh is not None:
        for name, spec in (param_specs or {}).items():
            lc.mark_sharding(params[name], mesh, spec)
    trainable = [k for k in params if k != "heads"]
    losses = []
    for x_np, y_np in batches:
        x, y = lc.asarray(x_np), lc.asarray(y_np)
        if mesh is not None:
            lc.mark_sharding(x, mesh, batch_specs[0])
            lc.mark_sharding(y, mesh, batch_specs[1])
        loss = loss_fn(params, x, y)
        grads = lc.grad([loss], [params[k] for k in trainable])
        for k, g in zip(trainable, grads, strict=True):
            params[k].assign(nm.elementwise("sub", params[k], nm.elementwise("mul", g, LR)))
        losses.append(loss)
        lc.sync()
    return np.array(lc.to_numpy_many(losses)), {k: lc.to_numpy(v) for k, v in params.items()}


def batches(rng, n_steps, shape, classes=4):
    return [(rng.normal(size=shape).astype(np.float32),
             rng.integers(0, classes, shape[0]).astype(np.int64)) for _ in range(n_steps)]
