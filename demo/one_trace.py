"""One trace across three frameworks: NumPy preprocessing, a PyTorch model, TensorFlow
post-processing -- compiled and run as ONE XLA program.

    python demo/one_trace.py
"""

import numpy as np
import tensorflow as tf
import torch

import lazy_numpy as lnp
import lazy_tf as ltf
import lazy_torch
import lazycore as lc

raw = np.random.default_rng(0).standard_normal((32, 16)).astype(np.float32)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 10))
model = model.to(lazy_torch.device())
lc.sync()
lc.metrics.reset()

x = lnp.asarray(raw)                       # NumPy preprocessing, traced
x = (x - x.mean(0)) / x.std(0)
t = lazy_torch.from_lazy(x)                # the same pending value as a lazy torch.Tensor
logits = model(t)
p = ltf.from_lazy(logits)                  # and as a lazy TF tensor
top = tf.math.top_k(tf.nn.softmax(p), k=3)
print("top-3 probabilities of the first rows:\n", top.values.numpy()[:4])

c = lc.metrics.counters()
print(f"\ncompiles={c['compiles']} executions={c['executions']} "
      f"host_transfers={c['host_transfers']} (one program for all three frameworks)")
