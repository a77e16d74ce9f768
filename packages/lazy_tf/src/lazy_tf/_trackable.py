"""``tf.train.Checkpoint``, ``CheckpointManager`` and SavedModel for ``ltf.Variable``.

TensorFlow's savers take ``Trackable`` objects that serialize to tensors; a variable
also exports a resource into a SavedModel's graph. An ``ltf.Variable`` does all of that
through its ``tf.function`` shadow (``_graph.shadow``), a ``tf.Variable`` brought up to
date with the lazy value first (one sync): what is written is the value eager TF
would write, under the same key (``VARIABLE_VALUE``), so checkpoints of ``tf.Variable``
and ``ltf.Variable`` restore into each other. Restoring assigns the lazy value.
Keras variables holding an ``ltf.Variable`` (``lazy_tf.keras``) delegate to these.
"""

from __future__ import annotations

from tensorflow.python.trackable import base as trackable

from ._graph import building, shadow

KEY = trackable.VARIABLE_VALUE_KEY


def current_shadow(var):
    """The shadow holding the variable's current value (copied in when the lazy side is
    newer; the lazy handle stays authoritative, nothing is parked)."""
    s = shadow(var)
    if not building() and "_h" in var.__dict__:
        from ._graph import eager

        s.assign(eager(var))
    return s


def _serialize_to_tensors(self):
    return {KEY: current_shadow(self)}


def _restore_from_tensors(self, restored_tensors):
    value = restored_tensors[KEY]
    if building():  # a restore op in a graph: TF's own, on the shadow
        return shadow(self).assign(value, read_value=False)
    self.assign(value)
    return None


def _shared_name(self):
    return self.name.split(":")[0]


def _copy_trackable_to_cpu(self, object_map):
    s = current_shadow(self)
    s._copy_trackable_to_cpu(object_map)
    object_map[self] = object_map[s]


def _export_to_saved_model_graph(self, object_map, tensor_map, options, **kwargs):
    """The shadow's export (a new resource in the SavedModel graph); functions traced
    with the variable captured the shadow's handle, which ``tensor_map`` now maps."""
    s = current_shadow(self)
    resources = s._export_to_saved_model_graph(object_map, tensor_map, options, **kwargs)
    object_map[self] = object_map[s]
    return resources


def _write_object_proto(self, proto, options):
    return current_shadow(self)._write_object_proto(proto, options)


METHODS = {f.__name__: f for f in (_serialize_to_tensors, _restore_from_tensors,
                                   _copy_trackable_to_cpu, _export_to_saved_model_graph,
                                   _write_object_proto)}
PROPERTIES = {"_shared_name": _shared_name}
