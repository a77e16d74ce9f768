"""Complex values as truth values, per frontend against its own eager framework.

NumPy and PyTorch call a complex number true when either part is nonzero (``1j`` is
true: ``astype(bool)``, ``nonzero``, ``any``, masks); TensorFlow's ``tf.cast`` to bool
keeps only the real part (``1j`` is false). The core's ``convert`` follows NumPy and
PyTorch, so lazy_tf must take the real part itself.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
import torch

import lazy_numpy as lnp
import lazy_tf as ltf
import lazy_torch

Z = np.array([1j, 1 + 0j, 0j, -2j, complex(np.nan, 0)], np.complex64)


def test_numpy_truth_of_complex_values():
    x = lnp.asarray(Z)
    np.testing.assert_array_equal(np.asarray(x.astype(bool)), Z.astype(bool))
    np.testing.assert_array_equal(np.asarray(lnp.nonzero(x)[0]), np.nonzero(Z)[0])
    assert bool(lnp.any(lnp.asarray(Z[:1]))) is bool(np.any(Z[:1])) is True
    np.testing.assert_array_equal(np.asarray(lnp.where(x, 1, 0)), np.where(Z, 1, 0))


def test_torch_truth_of_complex_values():
    eager = torch.tensor(Z)
    lazy = eager.to(lazy_torch.device())
    torch.testing.assert_close(lazy.bool().cpu(), eager.bool())
    torch.testing.assert_close(torch.nonzero(lazy).cpu(), torch.nonzero(eager))
    assert bool(lazy[:1].any()) is bool(eager[:1].any()) is True


def test_tf_cast_to_bool_keeps_the_real_part():
    eager = tf.cast(tf.constant(Z), tf.bool)
    lazy = tf.cast(ltf.constant(Z), tf.bool)
    np.testing.assert_array_equal(np.asarray(lazy), eager.numpy())
    assert not eager.numpy()[0]  # TF's own semantics: 1j casts to False
