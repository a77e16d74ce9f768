"""Install TensorFlow dispatchers from the table, and the call path they share.

* one unary and one binary elementwise handler (TF's elementwise dispatchers),
* one ``dispatch_for_api`` target per ``api`` entry,
* a catch-all target on every other dispatchable API in the main namespaces, so an
  API without a lazy implementation runs eagerly on copies of its lazy arguments
  (a fallback counted by name) and returns lazy values.
"""

from __future__ import annotations

import functools
import inspect
import typing

import numpy as np
import tensorflow as tf
from tensorflow.python.util import dispatch as tf_dispatch
from tensorflow.python.util import tf_export

import lazycore as lc

from . import _state
from ._fallback import oracle, run_eager
from ._graph import building, run_in_graph
from ._table import API, Entry, resolve
from ._tensor import LazyTensor, is_lazy_class, new

_REFUSED = (lc.LazyError, ValueError, TypeError, IndexError, KeyError, ArithmeticError)
# tf.__internal__.types.Tensor: tensor-likes such as Keras variables (``lazy_tf.keras``)
Operand = typing.Union[LazyTensor, tf.Tensor, tf.Variable, tf.__internal__.types.Tensor,  # noqa: UP007
                       float, int, np.ndarray, np.generic, list, tuple]
_BY_FUNC: dict = {}          # TF function object -> Entry
_NAMES: dict = {}            # TF function object -> canonical name (fallback counters)
REGISTERED: dict[str, str] = {}   # canonical name -> "table" | "fallback"


def name_of(api) -> str:
    name = _NAMES.get(api)
    if name is None:
        name = tf_export.get_canonical_name_for_symbol(api) or getattr(api, "__name__", "?")
        _NAMES[api] = name
    return name


def wrap(out):
    """Core handles (possibly in tuples/lists/namedtuples) -> LazyTensors."""
    if isinstance(out, lc.Tensor):
        if _state.stopped[0]:
            out = lc.ops.stop_gradient(out)
        elif _state.active_tapes:
            for tape in _state.active_tapes:
                tape._record(out)
        return new(out)
    if isinstance(out, tuple) and hasattr(out, "_fields"):
        return type(out)(*[wrap(o) for o in out])
    if isinstance(out, list | tuple):
        return type(out)(wrap(o) for o in out)
    return out


def call(entry: Entry | None, api, args, kwargs):
    if building():  # a tf.function trace: TF's own op on graph tensors
        return run_in_graph(api, args, kwargs)
    if entry is None:
        return run_eager(name_of(api), api, args, kwargs)
    try:
        out = entry.impl(*args, **kwargs)
    except NotImplementedError:
        return run_eager(entry.name, api, args, kwargs)
    except _REFUSED as error:
        return oracle(entry.name, api, args, kwargs, error)
    return wrap(out)


def call_by_name(name: str, *args, **kwargs):
    """Operators and methods: the same table entry as the TF API of that name."""
    entry = API[name]
    return call(entry, _api_func(entry), args, kwargs)


_FUNCS: dict[str, object] = {}


def _api_func(entry: Entry):
    f = _FUNCS.get(entry.name)
    if f is None:
        f = _FUNCS[entry.name] = resolve(entry.name)
    return f


def _unbind(api_func):
    """TF binds an elementwise API's extra arguments in a closure (``cast``'s dtype,
    ``leaky_relu``'s alpha); recover the API and those arguments."""
    if api_func in _BY_FUNC or getattr(api_func, "__name__", "") != "<lambda>":
        return api_func, (), {}
    # the closure's cells by name (what inspect.getclosurevars reads, without its
    # globals/builtins scan: this runs for every tf.cast)
    free = dict(zip(api_func.__code__.co_freevars,
                    (c.cell_contents for c in api_func.__closure__ or ()), strict=True))
    return free["api"], tuple(free.get("args", ())), dict(free.get("kwargs", {}))


def _entry_for(api) -> Entry | None:
    entry = _BY_FUNC.get(api)
    if entry is None:
        entry = API.get(name_of(api))
        if entry is not None:
            _BY_FUNC[api] = entry
    return entry


@tf.experimental.dispatch_for_unary_elementwise_apis(LazyTensor)
def _unary_handler(api_func, x):
    api, args, kwargs = _unbind(api_func)
    return call(_entry_for(api), api, (x, *args), kwargs)


# tensor-like class -> its value (``lazy_tf.keras`` registers Keras variables, which it
# makes dispatchable: a binary op on them arrives here even when nothing in it is lazy)
TENSOR_LIKES: dict = {}


@tf.experimental.dispatch_for_binary_elementwise_apis(Operand, Operand)
def _binary_handler(api_func, x, y):
    if TENSOR_LIKES and not (is_lazy_class(x.__class__) or is_lazy_class(y.__class__)):
        ux, uy = _unwrapper(x.__class__), _unwrapper(y.__class__)
        if ux is not _same or uy is not _same:  # a Keras variable: its value (lazy: here
            return api_func(ux(x), uy(y))          # again; a tf.Variable: TF's own op)
    api, args, kwargs = _unbind(api_func)
    return call(_entry_for(api), api, (x, y, *args), kwargs)


def _tensor_like_values(args, kwargs):
    return tf.nest.map_structure(lambda v: _unwrapper(v.__class__)(v), (args, kwargs))


_UNWRAPPERS: dict = {}  # class -> TENSOR_LIKES entry of it or of a base class, or _same


def _unwrapper(cls):
    out = _UNWRAPPERS.get(cls)
    if out is None:
        out = next((f for base, f in TENSOR_LIKES.items() if issubclass(cls, base)), _same)
        _UNWRAPPERS[cls] = out
    return out


def _same(v):
    return v


def _target(entry: Entry | None, api):
    def target(*args, **kwargs):
        if TENSOR_LIKES:  # Keras variables (lazy_tf.keras) stand for their values
            given = tf.nest.flatten((args, kwargs))
            args, kwargs = _tensor_like_values(args, kwargs)
            if not _has_lazy(args, kwargs):
                if all(a is b for a, b in zip(given, tf.nest.flatten((args, kwargs)),
                                              strict=True)):
                    return NotImplemented  # nothing to unwrap (eager IndexedSlices in a
                    # list would come back here): TF's own function
                return api(*args, **kwargs)
        elif entry is not None and entry.lists and not _has_lazy(args, kwargs):
            return NotImplemented  # eager IndexedSlices in a list: TF's own function
        return call(entry, api, args, kwargs)
    target.__name__ = f"lazy_{(entry.name if entry else name_of(api)).replace('.', '_')}"
    return target


# IndexedSlices (tape gradients) too: ``add_n`` and the global-norm APIs take them in lists
_LIST = typing.List[typing.Union[LazyTensor, tf.Tensor, tf.Variable,  # noqa: UP006, UP007
                                 tf.__internal__.types.Tensor, tf.IndexedSlices, float, int, None]]


_ELEMENTWISE = {"unary": tf_dispatch.unary_elementwise_apis,
                "binary": tf_dispatch.binary_elementwise_apis}


def _unwrapped(api) -> set:
    chain = set()
    while api is not None:
        chain.add(api)
        api = getattr(api, "__wrapped__", None)
    return chain


def _first_params(api, n: int) -> tuple:
    return tuple(list(inspect.signature(api).parameters)[:n])


def _install() -> None:
    for entry in API.values():
        api = resolve(entry.name)
        if api is None:
            continue
        f = api
        while f is not None:  # TF's decorators wrap the dispatchable function
            _BY_FUNC[f] = entry
            _NAMES[f] = entry.name
            f = getattr(f, "__wrapped__", None)
        REGISTERED[entry.name] = "table"
        if entry.kind == "patch":
            _install_patch(entry, api)
            continue
        if entry.kind != "api" and _unwrapped(api) & set(_ELEMENTWISE[entry.kind]()):
            continue  # reached through the elementwise handlers
        if getattr(api, "_tf_type_based_dispatcher", None) is None:
            raise TypeError(f"tf.{entry.name} is not dispatchable: it cannot be in the table")
        tensors = entry.tensors or _first_params(api, 1 if entry.kind == "unary" else 2)
        sigs = [{p: LazyTensor} for p in tensors] + [{p: _LIST} for p in entry.lists]
        target = _target(entry, api)
        tf.experimental.dispatch_for_api(api, *sigs)(target)
        _API_TARGETS.append((entry, api, target))
    _install_convert()
    _install_catch_all()


_API_TARGETS: list = []  # (entry, api, target) of every dispatch_for_api registration


def add_tensor_like(cls, value_of) -> None:
    """Let TF ops on instances of ``cls`` (a tensor-like that may hold a lazy value, e.g.
    a Keras variable) reach lazy_tf: the table's targets are registered again with
    ``cls`` beside ``LazyTensor`` in each tensor parameter; ``value_of`` unwraps it."""
    if cls in TENSOR_LIKES:
        return
    TENSOR_LIKES[cls] = value_of
    _UNWRAPPERS.clear()
    one = typing.Union[LazyTensor, cls]  # noqa: UP007
    many = typing.List[typing.Union[LazyTensor, cls, tf.Tensor, tf.Variable,  # noqa: UP006, UP007
                                    tf.__internal__.types.Tensor, tf.IndexedSlices, float, int,
                                    None]]
    for entry, api, target in _API_TARGETS:
        tensors = entry.tensors or _first_params(api, 2)
        tf.experimental.unregister_dispatch_for(target)
        tf.experimental.dispatch_for_api(
            api, *[{p: one} for p in tensors], *[{p: many} for p in entry.lists])(target)


def _has_lazy(args, kwargs) -> bool:
    return any(isinstance(v, LazyTensor) or isinstance(v, tf.IndexedSlices) and (
        isinstance(v.values, LazyTensor) or isinstance(v.indices, LazyTensor))
        for v in tf.nest.flatten((args, kwargs)))


def _install_patch(entry: Entry, original) -> None:
    """Replace every exported name of ``original`` (``tf.einsum`` and ``tf.linalg.einsum``,
    ``tf.compat.v1``'s too) by a wrapper: lazy arguments outside a graph take the
    table's path, anything else TensorFlow's own function."""
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        if building() or not _has_lazy(args, kwargs):
            return original(*args, **kwargs)
        return call(entry, original, args, kwargs)

    wrapper.__lazy_tf_original__ = original
    _PATCHED[entry.name] = original
    for ns in _NAMESPACES + _V1_NAMESPACES + ("raw_ops",):
        module = resolve(ns) if ns else tf
        if module is None:
            continue
        for attr in dir(module):
            if getattr(module, attr, None) is original:
                setattr(module, attr, wrapper)


_PATCHED: dict = {}  # name -> TF's original function
_V1_NAMESPACES = ("compat.v1", "compat.v1.linalg", "compat.v1.signal", "compat.v1.math",
                  "compat.v1.spectral")


# APIs whose job is to leave the lazy world: TF's default path calls __tf_tensor__ (a sync);
# tf.convert_to_tensor has its own target (``_install_convert``)
_OBSERVERS = {"convert_to_tensor", "is_tensor", "get_static_value", "print"}


def _install_convert() -> None:
    """``tf.convert_to_tensor`` of a lazy tensor returns it unchanged, as TensorFlow
    returns a tensor: a lazy tensor already is a tensor (``tf.is_tensor``). So library
    code that converts its inputs first (Keras's cross-entropy losses) stays in the
    graph and its gradients reach the tape. Inside a ``tf.function`` trace: the graph
    tensor standing for the value. (TF's internal conversions, which call
    ``__tf_tensor__``, are fallbacks as before.)"""
    from ._graph import to_tensor

    @tf.experimental.dispatch_for_api(tf.convert_to_tensor, {"value": LazyTensor})
    def _convert(value, dtype=None, dtype_hint=None, name=None):
        if dtype is not None and tf.as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {tf.as_dtype(dtype).name} "
                             f"for Tensor with dtype {value.dtype.name}")
        return to_tensor(value) if building() else value
_NAMESPACES = ("", "math", "nn", "linalg", "signal", "random", "bitwise", "image", "sparse",
               "strings", "dtypes", "debugging")


def _install_catch_all() -> None:
    elementwise = set(tf_dispatch.unary_elementwise_apis()) | set(
        tf_dispatch.binary_elementwise_apis())
    for ns in _NAMESPACES:
        module = resolve(ns) if ns else tf
        for attr in dir(module):
            api = getattr(module, attr, None)
            if not callable(api) or getattr(api, "_tf_type_based_dispatcher", None) is None:
                continue
            if api in _BY_FUNC or api in _NAMES or _unwrapped(api) & elementwise:
                continue  # in the table, or reached through the elementwise handlers
            name = name_of(api)
            if name in _OBSERVERS:
                continue
            params = [p for p in inspect.signature(api).parameters.values()
                      if p.kind == p.POSITIONAL_OR_KEYWORD and p.name != "name"]
            sigs = [{p.name: LazyTensor} for p in params]
            if not sigs:
                continue
            try:
                tf.experimental.dispatch_for_api(api, *sigs)(_target(None, api))
            except (ValueError, TypeError):
                continue
            REGISTERED.setdefault(name, "fallback")
