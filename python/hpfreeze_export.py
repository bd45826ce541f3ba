"""Write a live HyperParallel sharding plan and a torch model as hpfreeze's input dumps.

The planner's ``ShardingPlan`` holds live objects (placements, ``Target``s, functions,
enum axis names) and the model is a ``torch.nn.Module``; ``hpfreeze freeze`` reads
neither. This module turns them into the two JSON documents it does read:

* ``plan_to_dump(plan)`` -> the ``hpfreeze.plan/v1`` dump (docs/formats.md),
* ``model_to_dump(model)`` -> the ``hpfreeze.model/v1`` dump,
* ``write_dumps(plan, model, plan_path, model_path)`` writes both files.

Then::

    hpfreeze freeze --plan plan.json --model model.json -o codegen_meta.json

Standard library only (Python >= 3.9); nothing imports torch or hyper_parallel. Objects
are recognised by duck typing:

* placements by class name: ``Shard``, ``StridedShard``, ``Replicate``, ``Partial``, with
  their attributes ``dim``, ``uneven_shard``, ``split_factor``, ``reduce_op``. Any other
  class that has ``Placement`` (or one of those names) among its bases, ``RaggedShard``
  included, is an ``ExportError``: it has no canonical string form;
* targets by a ``to_dict()`` method -> ``{"$target": obj.to_dict()}``;
* enum members (``MeshAxisName.TP``) by their ``.value``, as keys and as values;
* callables by ``__name__`` -> ``{"$callable": name}`` (``str(obj)`` when there is no
  ``__name__``, which is what upstream's freeze writes too);
* tuples and lists as JSON arrays, mappings as objects (keys must be strings or
  numbers after ``.value``);
* a module spec that is a dataclass by every one of its fields (``dataclasses.fields``,
  ``init=False`` ones included) under the attribute name, ``None`` as ``null``. Which
  fields are frozen, exempt or unknown is for ``hpfreeze freeze`` to judge;
* the model by ``named_modules()`` (FQN -> class name, the root as ``""``) and
  ``named_parameters()`` (shape, dtype without its ``torch.`` prefix, requires_grad),
  both with ``remove_duplicate=False`` so tied weights and shared modules appear under
  every name the model gives them.

Anything else (a set, a NaN, an integer beyond 64 bits, an arbitrary object) raises
``ExportError`` naming where in the plan it sits, e.g. ``/modules/lm_head/params/weight/tp``.

Installed as ``share/hpfreeze/hpfreeze_export.py``; the source lives in ``python/``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import operator
import os
import secrets
from typing import Any, Mapping, Optional

__all__ = [
    "ExportError",
    "MODEL_FORMAT",
    "PLAN_FORMAT",
    "model_to_dump",
    "plan_to_dump",
    "write_dumps",
]

PLAN_FORMAT = "hpfreeze.plan/v1"
MODEL_FORMAT = "hpfreeze.model/v1"

# Keys that make a JSON object a typed value on the C++ side.
_TAGS = ("$placement", "$target", "$callable")
_PLACEMENTS = ("Shard", "StridedShard", "Replicate", "Partial")
# Class names that, anywhere in an object's MRO, mark it as a placement.
_PLACEMENT_FAMILY = frozenset(_PLACEMENTS + ("Placement", "RaggedShard"))
_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1


class ExportError(ValueError):
    """A plan or model value that the dump formats cannot hold; says where it sits."""


def _pointer(path: str, token: Any) -> str:
    text = str(token).replace("~", "~0").replace("/", "~1")
    return f"{path}/{text}"


def _fail(path: str, message: str) -> ExportError:
    return ExportError(f"{path or '/'}: {message}")


def _is_placement_like(value: Any) -> bool:
    return any(cls.__name__ in _PLACEMENT_FAMILY for cls in type(value).__mro__)


def _int(value: Any, path: str, what: str) -> int:
    try:
        if isinstance(value, bool):
            raise TypeError
        number = operator.index(value)  # int, IntEnum, numpy integers
    except TypeError:
        raise _fail(path, f"{what} must be an integer, got {type(value).__name__}") from None
    if not _INT_MIN <= number <= _INT_MAX:
        raise _fail(path, f"{what} {number} does not fit in 64 bits")
    return int(number)


def _placement(value: Any, path: str) -> dict:
    kind = type(value).__name__
    if kind == "RaggedShard":
        raise _fail(path, "placement RaggedShard has no canonical string form and cannot be frozen")
    if kind not in _PLACEMENTS:
        raise _fail(path, f"unknown placement type {kind!r} "
                          "(expected Shard, StridedShard, Replicate or Partial)")
    out: dict = {"$placement": kind}
    if kind in ("Shard", "StridedShard"):
        out["dim"] = _int(getattr(value, "dim", None), path, "dim")
        if kind == "StridedShard":
            out["split_factor"] = _int(getattr(value, "split_factor", None), path,
                                       "split_factor")
        uneven = getattr(value, "uneven_shard", False)
        if not isinstance(uneven, bool):
            raise _fail(path, f"uneven_shard must be a bool, got {type(uneven).__name__}")
        out["uneven_shard"] = uneven
    elif kind == "Partial":
        op = getattr(value, "reduce_op", "sum")
        if isinstance(op, enum.Enum):
            op = op.value
        if not isinstance(op, str) or not op:
            raise _fail(path, f"reduce_op must be a non-empty string, got {op!r}")
        out["reduce_op"] = str.__str__(op)
    return out


def _key(key: Any, path: str) -> str:
    key = getattr(key, "value", key)
    if isinstance(key, str):
        return str.__str__(key)
    if isinstance(key, (int, float)) and not isinstance(key, bool):
        return str(key)
    raise _fail(path, f"mapping key {key!r} is not a string")


def _convert(value: Any, path: str, typed: bool = True) -> Any:
    """A value as JSON; with typed=False placements, targets and callables are errors."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, enum.Enum):
        return _convert(value.value, path, typed)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int) or hasattr(type(value), "__index__"):  # numpy integers too
        return _int(value, path, "integer")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _fail(path, f"{value!r} is not a JSON number")
        return float(value)
    if _is_placement_like(value):
        if not typed:
            raise _fail(path, f"expected plain data, got placement {type(value).__name__}")
        return _placement(value, path)
    if hasattr(value, "to_dict") and not isinstance(value, type):
        if not typed:
            raise _fail(path, f"expected plain data, got target {type(value).__name__}")
        inner = value.to_dict()
        if not isinstance(inner, Mapping):
            raise _fail(path, f"{type(value).__name__}.to_dict() returned "
                              f"{type(inner).__name__}, not a dict")
        return {"$target": _mapping(inner, _pointer(path, "$target"), typed=False)}
    if isinstance(value, Mapping):
        return _mapping(value, path, typed)
    if isinstance(value, (list, tuple)):
        return [_convert(item, _pointer(path, i), typed) for i, item in enumerate(value)]
    if callable(value):
        if not typed:
            raise _fail(path, f"expected plain data, got callable {value!r}")
        name = getattr(value, "__name__", None)
        return {"$callable": name if isinstance(name, str) else str(value)}
    raise _fail(path, f"cannot export a value of type {type(value).__name__}")


def _mapping(value: Mapping, path: str, typed: bool) -> dict:
    out: dict = {}
    for key, item in value.items():
        name = _key(key, path)
        if name in out:
            raise _fail(path, f"two keys both export as {name!r}")
        if typed and name in _TAGS:
            raise _fail(path, f"a plain mapping may not use the key {name!r} "
                              "(it would read as a typed value)")
        out[name] = _convert(item, _pointer(path, name), typed)
    return out


def _module_spec(spec: Any, path: str) -> dict:
    if isinstance(spec, Mapping):
        return _mapping(spec, path, typed=True)
    if not dataclasses.is_dataclass(spec) or isinstance(spec, type):
        raise _fail(path, "expected a dataclass instance as module spec, got "
                          f"{type(spec).__name__}")
    out: dict = {}
    for field in dataclasses.fields(spec):
        # An init=False field that was never assigned counts as None.
        value = getattr(spec, field.name, None)
        out[field.name] = _convert(value, _pointer(path, field.name))
    return out


def _string_list(value: Any, path: str) -> list:
    if not isinstance(value, (list, tuple)):
        raise _fail(path, f"expected a list, got {type(value).__name__}")
    out = []
    for i, item in enumerate(value):
        item = getattr(item, "value", item)
        if not isinstance(item, str):
            raise _fail(_pointer(path, i), f"expected a string, got {type(item).__name__}")
        out.append(str.__str__(item))
    return out


def plan_to_dump(plan: Any, meta: Optional[Mapping] = None) -> dict:
    """The ``hpfreeze.plan/v1`` dump of a ``ShardingPlan`` (or anything shaped like one).

    ``meta``, when given, is stored as the dump's ``meta`` object: the identity fields
    (signature, yaml_path, ...) that ``hpfreeze freeze`` copies into the meta.
    Raises ExportError for a value the dump cannot hold.
    """
    dump: dict = {"format": PLAN_FORMAT}
    mesh = getattr(plan, "mesh_dim_names", None)
    if mesh is not None:
        dump["mesh_dim_names"] = _string_list(mesh, "/mesh_dim_names")
    pairs = getattr(plan, "tied_pairs", None)
    if pairs is not None:
        if not isinstance(pairs, (list, tuple)):
            raise _fail("/tied_pairs", f"expected a list, got {type(pairs).__name__}")
        dump["tied_pairs"] = [_string_list(pair, _pointer("/tied_pairs", i))
                              for i, pair in enumerate(pairs)]
    handlers = getattr(plan, "special_handlers", None)
    if handlers is not None:
        if not isinstance(handlers, Mapping):
            raise _fail("/special_handlers", f"expected a dict, got {type(handlers).__name__}")
        dump["special_handlers"] = _mapping(handlers, "/special_handlers", typed=False)
    for flag in ("sequence_parallel", "loss_parallel"):
        value = getattr(plan, flag, None)
        if value is not None:
            if not isinstance(value, bool):
                raise _fail(f"/{flag}", f"expected a bool, got {type(value).__name__}")
            dump[flag] = value
    if meta is not None:
        if not isinstance(meta, Mapping):
            raise _fail("/meta", f"expected a dict, got {type(meta).__name__}")
        dump["meta"] = _mapping(meta, "/meta", typed=False)
    modules = getattr(plan, "modules", None)
    if not isinstance(modules, Mapping):
        raise _fail("/modules", f"plan.modules must be a dict, got {type(modules).__name__}")
    out: dict = {}
    for fqn, spec in modules.items():
        if not isinstance(fqn, str):
            raise _fail("/modules", f"module FQN {fqn!r} is not a string")
        out[str.__str__(fqn)] = _module_spec(spec, _pointer("/modules", fqn))
    dump["modules"] = out
    return dump


def _named(method: Any) -> Any:
    """Calls torch's named_modules/named_parameters keeping every name of a shared object."""
    try:
        items = method(remove_duplicate=False)
    except TypeError:  # an older torch, or a look-alike without the keyword
        items = method()
    return list(items)


def _dtype_name(dtype: Any) -> str:
    text = str(dtype)
    return text[len("torch."):] if text.startswith("torch.") else text


def model_to_dump(model: Any) -> dict:
    """The ``hpfreeze.model/v1`` dump of a ``torch.nn.Module`` (or a look-alike)."""
    modules: dict = {}
    for name, module in _named(model.named_modules):
        modules[name] = type(module).__name__
    parameters: dict = {}
    for name, param in _named(model.named_parameters):
        path = _pointer("/parameters", name)
        try:
            shape = tuple(param.shape)
        except Exception as exc:  # e.g. an uninitialized lazy parameter
            raise _fail(path, f"cannot read the shape: {exc}") from exc
        dims = []
        for i, dim in enumerate(shape):
            dim = _int(dim, _pointer(_pointer(path, "shape"), i), "dimension")
            if dim < 0:
                raise _fail(path, f"negative dimension {dim}")
            dims.append(dim)
        entry: dict = {"shape": dims}
        dtype = getattr(param, "dtype", None)
        if dtype is not None:
            entry["dtype"] = _dtype_name(dtype)
        entry["requires_grad"] = bool(getattr(param, "requires_grad", True))
        parameters[name] = entry
    return {"format": MODEL_FORMAT, "modules": modules, "parameters": parameters}


def _dumps(document: dict) -> bytes:
    # ASCII only (\u escapes) and no NaN: exactly the JSON hpfreeze accepts.
    return (json.dumps(document, indent=1, ensure_ascii=True, allow_nan=False) + "\n").encode()


def _write_if_changed(path: str, data: bytes) -> None:
    """Atomic write; an existing file with the same bytes is left alone (mtime too)."""
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return
    except FileNotFoundError:
        pass
    directory, base = os.path.split(path)
    temp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
    # Mode 0666 lets the kernel apply the umask, like any new file.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise


def write_dumps(plan: Any, model: Any, plan_path: str, model_path: str,
                meta: Optional[Mapping] = None) -> None:
    """Writes plan_to_dump(plan, meta) to plan_path and model_to_dump(model) to model_path.

    Both dumps are built before either file is touched, so an ExportError writes
    nothing. Each file is replaced atomically, and left untouched (mtime included)
    when it already holds the same bytes, so make and ninja see no change.
    """
    plan_bytes = _dumps(plan_to_dump(plan, meta))
    model_bytes = _dumps(model_to_dump(model))
    _write_if_changed(plan_path, plan_bytes)
    _write_if_changed(model_path, model_bytes)
