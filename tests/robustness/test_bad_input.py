"""Bad calls raise what eager raises, at the call, and nothing else is lost."""

import numpy as np
import pytest


def _check(eager_call, lazy_call, to_numpy, lazy_survivor, survivor_value):
    with pytest.raises(Exception) as eager_info:
        eager_call()
    with pytest.raises(Exception) as lazy_info:
        lazy_call()
    assert isinstance(lazy_info.value, type(eager_info.value)), (
        f"eager {type(eager_info.value).__name__}: {eager_info.value}; "
        f"lazy {type(lazy_info.value).__name__}: {lazy_info.value}")
    # the program continues and other values are intact
    np.testing.assert_allclose(to_numpy(lazy_survivor), survivor_value, rtol=1e-6)


# ---- PyTorch -------------------------------------------------------------------------

TORCH_CASES = {
    "add_shapes": lambda t, a, b, i: t.add(a, b[:, :3]),
    "matmul_shapes": lambda t, a, b, i: t.matmul(a, a),
    "dim_out_of_range": lambda t, a, b, i: a.sum(5),
    "float_index": lambda t, a, b, i: a[a],
    "index_out_of_range": lambda t, a, b, i: a[9],
    "cat_dtype_rank": lambda t, a, b, i: t.cat([a, a[0]]),
    "view_bad_size": lambda t, a, b, i: a.view(7),
    "softmax_dim": lambda t, a, b, i: t.softmax(a, 3),
    "inplace_broadcast": lambda t, a, b, i: a[0].add_(a),
    "int_inplace_float": lambda t, a, b, i: i.add_(1.5),
    "bad_argument_type": lambda t, a, b, i: t.add(a, "x"),
}


@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_torch_bad_input(name):
    torch = pytest.importorskip("torch")
    lazy_torch = pytest.importorskip("lazy_torch")
    dev = lazy_torch.device()
    host_a = np.arange(12, dtype=np.float32).reshape(3, 4)
    host_b = np.ones((4, 4), np.float32)
    host_i = np.arange(4)
    call = TORCH_CASES[name]
    ea, eb, ei = (torch.from_numpy(h.copy()) for h in (host_a, host_b, host_i))
    la, lb, li = (torch.from_numpy(h.copy()).to(dev) for h in (host_a, host_b, host_i))
    survivor = (la * 2).sum()
    lazy_torch.sync()
    pending = la + 1
    _check(lambda: call(torch, ea, eb, ei), lambda: call(torch, la, lb, li),
           lambda v: v.cpu().numpy(), survivor, host_a.sum() * 2)
    np.testing.assert_allclose(pending.cpu().numpy(), host_a + 1)


# ---- NumPy ---------------------------------------------------------------------------

NUMPY_CASES = {
    "broadcast": lambda a, b: a + b[:, :3],
    "matmul": lambda a, b: np.matmul(a, a),
    "axis": lambda a, b: a.sum(axis=4),
    "index": lambda a, b: a[5],
    "float_index": lambda a, b: a[1.5],
    "reshape": lambda a, b: a.reshape(5, 5),
    "concatenate": lambda a, b: np.concatenate([a, a[0]]),
    "setitem_shape": lambda a, b: a.__setitem__(slice(None), b),
    "bad_type": lambda a, b: np.add(a, "x"),
    "too_many_indices": lambda a, b: a[0, 0, 0],
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
def test_numpy_bad_input(name):
    lnp = pytest.importorskip("lazy_numpy")
    host_a = np.arange(12.0).reshape(3, 4)
    host_b = np.ones((4, 4))
    call = NUMPY_CASES[name]
    la, lb = lnp.asarray(host_a), lnp.asarray(host_b)
    survivor = (la * 2).sum()
    lnp.sync()
    pending = la + 1
    _check(lambda: call(host_a.copy(), host_b.copy()), lambda: call(la, lb), np.asarray,
           survivor, host_a.sum() * 2)
    np.testing.assert_allclose(np.asarray(pending), host_a + 1)
    np.testing.assert_allclose(np.asarray(la), host_a)


# ---- TensorFlow ------------------------------------------------------------------------

TF_CASES = {
    "add_shapes": lambda tf, a, b, i: tf.add(a, b[:, :3]),
    "mixed_dtypes": lambda tf, a, b, i: a + i,
    "matmul": lambda tf, a, b, i: tf.matmul(a, a),
    "axis": lambda tf, a, b, i: tf.reduce_sum(a, 4),
    "reshape": lambda tf, a, b, i: tf.reshape(a, [5, 5]),
    "concat": lambda tf, a, b, i: tf.concat([a, b], 1),
    "python_float_to_int": lambda tf, a, b, i: i + 1.5,
    "gather_index_dtype": lambda tf, a, b, i: tf.gather(a, a),
}


@pytest.mark.parametrize("name", sorted(TF_CASES))
def test_tf_bad_input(name):
    tf = pytest.importorskip("tensorflow")
    ltf = pytest.importorskip("lazy_tf")
    host_a = np.arange(12, dtype=np.float32).reshape(3, 4)
    host_b = np.ones((4, 4), np.float32)
    host_i = np.arange(4, dtype=np.int32)
    call = TF_CASES[name]
    ea, eb, ei = (tf.constant(h) for h in (host_a, host_b, host_i))
    la, lb, li = (ltf.convert_to_tensor(h) for h in (host_a, host_b, host_i))
    survivor = tf.reduce_sum(la * 2)
    ltf.sync()
    pending = la + 1
    _check(lambda: call(tf, ea, eb, ei), lambda: call(tf, la, lb, li),
           lambda v: np.asarray(v.numpy()), survivor, host_a.sum() * 2)
    np.testing.assert_allclose(pending.numpy(), host_a + 1)
