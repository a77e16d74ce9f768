"""Make Dynamo treat a ``LazyTensor`` as a plain tensor on the ``lazy`` device.

Without this, Dynamo sees a class with its own ``__torch_dispatch__`` and no
``__tensor_flatten__``, models it as an opaque Python object, traces *into* lazy_torch's
own Python (the operator fast path, the dispatcher) and graph-breaks on
``_make_wrapper_subclass``. Four narrow hooks, each touching only ``LazyTensor``:

* Dynamo's variable builder wraps a ``LazyTensor`` as a tensor (``wrap_tensor``), so
  ops on it become graph nodes and the value is fakeified;
* the fake-tensor converter describes it like any dense tensor: PyTorch refuses every
  tensor whose device type is ``"lazy"`` (the name of its retired TorchScript lazy
  backend) before looking at it; ours is an ordinary strided tensor;
* a compiled optimizer step on lazy parameters is made ``capturable`` as on CUDA
  (its ``step`` counters live on the lazy device, not the host);
* a lazy tensor made while Dynamo or AOTAutograd fake-propagates (``torch.tensor(data,
  device=lazy)`` builds it below the fake mode and hands it to ``aten.lift_fresh``, as
  Hugging Face's KV cache does with ``torch.tensor([])``) becomes a fake tensor there,
  as a CPU tensor does, instead of escaping as a real one into fake ops;
* a method lazy_torch defines in Python for speed (``add_``, ``mul_``, ``sqrt``: the
  operator fast path) is traced as ``torch.Tensor``'s method on a graph input too:
  Dynamo looks up an input's attribute on the real object and would otherwise inline the
  fast path's Python (and, past its mode checks, the dispatcher and JAX) -- BatchNorm's
  ``num_batches_tracked.add_(1)`` broke every graph that held one;
* AOTAutograd's tangent check accepts a ``LazyTensor`` where it traced a plain tensor
  (``__coerce_same_metadata_as_tangent__`` returns the tangent unchanged).

``LazyTensor.backward`` (which switches autograd's engine to the calling thread) is
run outside Dynamo: Dynamo graph-breaks on ``backward()`` anyway, and tracing the
switch would only add resume frames.

These hooks import Dynamo (~3 s), so they are installed by ``import lazy_torch.dynamo``
(which ``torch.compile(backend="lazytensor")`` does through the entry point), not by
``import lazy_torch``.
"""

from __future__ import annotations

import torch

from .._tensor import LazyTensor

_installed: list = []


def install() -> None:
    if _installed:
        return
    from torch._dynamo.variables.builder import VariableBuilder
    from torch._subclasses.meta_utils import MetaConverter

    builder_wrap = VariableBuilder._wrap
    describe = MetaConverter.__call__

    def _wrap(self, value):
        if type(value) is LazyTensor:
            return self.wrap_tensor(value)
        return builder_wrap(self, value)

    def _meta(self, t, shape_env=None, *, callback=None, source=None,
              symbolic_context=None, trace=True):
        if type(t) is not LazyTensor:
            return describe(self, t, shape_env, callback=callback, source=source,
                            symbolic_context=symbolic_context, trace=trace)
        self.hit += 1
        desc = self.describer.describe_tensor(t, trace=trace and source is not None)
        return self.meta_tensor(desc, shape_env, callback or self._identity_callable,
                                source, symbolic_context)

    VariableBuilder._wrap = _wrap
    MetaConverter.__call__ = _meta
    _tensor_methods()
    _recurrent_modules()
    _skip_runtime_frames()
    _fake_lifts()
    _capturable_optimizers()
    LazyTensor.__coerce_same_metadata_as_tangent__ = _same_tangent
    LazyTensor.backward = torch._dynamo.disable(LazyTensor.backward)
    _installed.append(True)


def _tensor_methods() -> None:
    from torch._dynamo.variables.tensor import TensorVariable
    from torch._dynamo.variables.torch_function import TensorWithTFOverrideVariable

    subclass_getattr = TensorWithTFOverrideVariable.var_getattr
    dynamic_getattr = TensorVariable.dynamic_getattr
    methods = frozenset(name for name, v in vars(LazyTensor).items()
                        if not name.startswith("__") and callable(v)
                        and name != "backward" and hasattr(torch.Tensor, name))

    def _var_getattr(self, tx, name):
        if name in methods and self.class_type is LazyTensor:
            return TensorVariable.var_getattr(self, tx, name)
        return subclass_getattr(self, tx, name)

    def _dynamic_getattr(self, tx, name):
        if name in methods and self.class_type is LazyTensor:
            raise NotImplementedError  # a GetAttrVariable: torch.Tensor's method is traced
        return dynamic_getattr(self, tx, name)

    TensorWithTFOverrideVariable.var_getattr = _var_getattr
    TensorVariable.dynamic_getattr = _dynamic_getattr


def _skip_runtime_frames() -> None:
    from torch._dynamo import trace_rules

    for name in _RUNTIME:
        trace_rules.add(name)


#: packages whose frames Dynamo never traces: code running between graphs (a graph
#: break's eager ops dispatch into lazy_torch, lazycore and JAX) would otherwise be
#: compiled frame by frame -- slow first steps, guards on every later call, and
#: recompile-limit warnings on ``__torch_dispatch__``
_RUNTIME = ("lazy_torch", "lazycore", "jax", "jaxlib")


def _recurrent_modules() -> None:
    from torch._dynamo import config
    from torch._dynamo.variables.builder import VariableBuilder

    wrap_module = VariableBuilder.wrap_module

    def _wrap_module(self, value):
        if (isinstance(value, torch.nn.RNNBase)
                and all(type(p) is LazyTensor for p in value._flat_weights)):
            with config.patch(allow_rnn=True):
                return wrap_module(self, value)
        return wrap_module(self, value)

    VariableBuilder.wrap_module = _wrap_module


def _fake_lifts() -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    dispatch = FakeTensorMode.dispatch
    lifts = (torch.ops.aten.lift_fresh.default, torch.ops.aten.lift_fresh_copy.default)

    def _dispatch(self, func, types, args=(), kwargs=None):
        if func in lifts and args and type(args[0]) is LazyTensor:
            return self.fake_tensor_converter.from_real_tensor(self, args[0])
        return dispatch(self, func, types, args, kwargs)

    FakeTensorMode.dispatch = _dispatch


def _same_tangent(self, expected_metadata, expected_type=None):
    return self


def _capturable_optimizers() -> None:
    """A compiled ``opt.step`` on lazy parameters keeps its state on the lazy device.

    Dynamo traces optimizers in their ``capturable`` form but only makes a group really
    capturable (``step`` counters created on the parameters' device) for CUDA/XPU
    parameters; otherwise ``step`` stays a CPU tensor, and writing its new value back
    after every compiled step is a host transfer -- a sync per parameter. Lazy parameters
    get what CUDA gets (the lazy device is capturable for ``torch.optim``: it is the
    PrivateUse1 backend)."""
    from torch._dynamo.variables.optimizer import OptimizerVariable

    set_capturable = OptimizerVariable._set_capturable

    def _set_capturable(self, tx):
        for group in self.value.param_groups:
            params = group.get("params", [])
            if ("capturable" in group and params
                    and all(type(p) is LazyTensor for p in params)
                    and not any(p in self.value.state for p in params)):
                group["capturable"] = True
        return set_capturable(self, tx)

    OptimizerVariable._set_capturable = _set_capturable
