"""hpfreeze_export: write a live HyperParallel sharding plan and its model as the two JSON
dumps that ``hpfreeze freeze`` reads (``hpfreeze.plan/v1`` and ``hpfreeze.model/v1``), or
freeze them straight away with freeze().

Installed as the Python package hpfreeze-export, which also gives the command
hpfreeze-export: ``pip install ./python`` from the source tree (offline on Debian:
``pip install --no-index --no-build-isolation ./python`` in a venv), or the hpfreeze .deb,
which puts it in /usr/lib/python3/dist-packages. ``cmake --install`` also leaves a copy in
``<prefix>/share/hpfreeze/`` for sys.path and PYTHONPATH users
(``/usr/local/share/hpfreeze/hpfreeze_export.py`` with CMake's default prefix). Standard
library only, Python >= 3.9; it imports neither torch nor hyper_parallel and reads their
objects by duck typing.

WHERE THE PLAN AND THE MODEL ARE
  In a training script, the live ShardingPlan is what ShardingPlanner.plan() returns, and
  the model is the torch.nn.Module you passed to it (a meta-device model is enough: only
  module names, class names, parameter shapes and dtypes are read). Export right after
  planning, before apply_sharding_plan(), so the dumps show the plan and the model as the
  planner saw them. The two added lines are marked:

    from hyper_parallel.distributed import ShardingPlanner, apply_sharding_plan
    plan = ShardingPlanner(plan_overrides=overrides).plan(model, mesh, tp_size=2, ep_size=8)
    import hpfreeze_export                                           # added
    hpfreeze_export.write_dumps(plan, model, "plan.json", "model.json")  # added
    model, _ = apply_sharding_plan(model, plan, mesh)

  (Without the package installed, put its directory on the path first:
  sys.path.insert(0, "/usr/local/share/hpfreeze").) Then, in the build (make, ninja, CI;
  see docs/recipes.md):

    hpfreeze freeze --plan plan.json --model model.json --base codegen_meta.json -o codegen_meta.json

  Upstream's own codegen gets the same pair from hyper_parallel.codegen.plan.derive:
  build_meta_model(spec) for the model and derive_sharding_plan(model, spec, ...) for the
  plan; any code that holds both can call write_dumps the same way.

THE META ARGUMENT: SIGNATURE AND THE OTHER IDENTITY FIELDS
  write_dumps(..., meta=...) and plan_to_dump(plan, meta=...) take an optional dict that is
  stored as the plan dump's "meta" object. It holds the identity fields of
  codegen_meta.json, which hpfreeze copies and never computes:
    signature        upstream's short hex digest (e.g. "dd6082765d8f") of the codegen
                     spec: parallel dims, plan overrides, model source. Upstream's runtime
                     compares it with its own to decide whether a generated bundle is stale,
                     so it must be the value upstream computed for this recipe.
    yaml_path, yaml_sha256   the recipe YAML the artifact belongs to, and its digest.
    codegen_version, source, parallel_dims, model_name, model_class, outputs, ...
                     any other CodegenMeta key; unknown keys are kept as they are.
  Where they come from: an existing codegen_meta.json of the same recipe holds them all.
  hpfreeze freeze takes them from --base FILE when given (the plan's "meta" is then not
  read at all), else from the plan dump's "meta", else uses upstream's defaults ("" for
  signature, yaml_path and yaml_sha256, {} for source and parallel_dims, null for
  model_name and model_class). Omit meta= when you pass --base.

COMMAND LINE
    hpfreeze-export MODULE:FUNCTION [--plan FILE] [--model FILE] [--meta FILE]
    python3 -m hpfreeze_export MODULE:FUNCTION ...
    python3 /usr/local/share/hpfreeze/hpfreeze_export.py MODULE:FUNCTION ...

  With -m and no package installed, put the directory on the path first:
  PYTHONPATH=/usr/local/share/hpfreeze. MODULE is imported from the current directory or
  PYTHONPATH; FUNCTION (a name in it, dots allowed) is called with no arguments and must
  return the pair (plan, model), e.g. a function of yours that builds the meta-device
  model and runs the planner. The dumps go to --plan (default plan.json) and --model
  (default model.json); --meta FILE is a JSON object stored as the plan dump's "meta"
  (say, last run's codegen_meta.json). Each file is replaced atomically and left untouched,
  mtime included, when its bytes did not change. Exit status: 0 written (or unchanged);
  1 the plan, the model or the --meta file was read and cannot be exported (one line
  naming the JSON Pointer of the value); 2 usage error (no such module or function, a
  result that is not a pair, a module MODULE or FUNCTION imports that is not installed,
  torch say: one line naming it) or a file that cannot be read or written. Any other
  exception raised inside FUNCTION is shown with its traceback. For example, with a
  train_setup.py in the current directory holding

    def build_plan():
        model = make_model()        # your code: the model, on the meta device is enough
        plan = ShardingPlanner(plan_overrides=overrides).plan(model, mesh, tp_size=2)
        return plan, model

  hpfreeze-export train_setup:build_plan writes plan.json and model.json.

PYTHON API
  plan_to_dump(plan, meta=None) -> dict     the plan dump
  model_to_dump(model) -> dict              the model tree dump
  write_dumps(plan, model, plan_path, model_path, meta=None)
      builds both dumps before touching either file, so an ExportError writes nothing.
  freeze(plan, model, meta=None, *, binary=None, strict=False) -> str
      runs hpfreeze freeze on the two (live objects, or ready dump dicts) through pipes,
      no file written, and returns the meta's text: the bytes of the command line, as
      str. meta is the base meta, as --base: a dict (say json.load of last run's
      codegen_meta.json) or the path of such a file; None takes the plan's own "meta" (a
      live plan has none: upstream's defaults). binary is the hpfreeze to run, else
      $HPFREEZE, else hpfreeze on PATH; strict=True is --strict.
  ExportError (a ValueError) says where the value sits, e.g.
  "/modules/lm_head/params/weight/tp: placement RaggedShard has no canonical string form
  and cannot be frozen". ExportWarning (a UserWarning) goes through the warnings module.
  HpfreezeError (a RuntimeError) is a failed freeze: .returncode (1 rejected, 2 usage or
  I/O) and .diagnostics, hpfreeze's stderr lines; its warnings and notes on success come
  as HpfreezeWarning (a UserWarning). No hpfreeze to run is a FileNotFoundError.

HOW OBJECTS ARE READ
  * placements by class name: Shard, StridedShard, Replicate, Partial, with their
    attributes dim, uneven_shard, split_factor, reduce_op. Any other class that has
    Placement (or one of those names) among its bases, RaggedShard included, is an
    ExportError: it has no canonical string form;
  * targets by a to_dict() method -> {"$target": obj.to_dict()};
  * enum members (MeshAxisName.TP) by their .value, as keys and as values;
  * callables by __name__ -> {"$callable": name}; str(obj) when there is no __name__,
    which is what upstream's freeze writes too;
  * dataclass instances (TpLocalAttrPlan, nested specs) as objects of all their fields;
  * tuples and lists as arrays, mappings as objects (keys must be strings or numbers
    after .value);
  * a module spec (a dataclass instance, or a mapping) by every one of its fields
    (dataclasses.fields, init=False ones included) under the attribute name, None as
    null. Which fields are frozen, exempt or unknown is for hpfreeze freeze to judge. The
    fields freeze ignores whatever they hold (_tp_local_attr_plan, _is_terminal,
    _needs_cp_attn, _resolved_inner_wrapper, _resolved_inner_target, _head_count_owner)
    never stop an export: a value there that the dump cannot hold is written as null;
  * the model by named_modules() (FQN -> class name, the root as "") and
    named_parameters() (shape, dtype without its "torch." prefix, requires_grad), both
    with remove_duplicate=False so tied weights and shared modules appear under every
    name the model gives them.
  Anything else in a field freeze reads (a set, a NaN, an integer beyond 64 bits, an
  arbitrary object) raises ExportError naming where in the plan it sits.

WARNINGS
  An ExportWarning is given when a callable reaches the dump under a name that makes the
  meta irreproducible: a functools.partial or another callable object without __name__
  (its str(), memory address included, lands in the meta, so every run writes a
  different meta), or a lambda (every lambda is named "<lambda>", which no generated code
  can resolve). Use a def function, a registry name or a Target instead. One warning per
  distinct name, at its first place, with the number of places.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import importlib
import json
import math
import operator
import os
import re
import secrets
import shutil
import subprocess
import sys
import threading
import warnings
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

__all__ = [
    "ExportError",
    "ExportWarning",
    "HpfreezeError",
    "HpfreezeWarning",
    "MODEL_FORMAT",
    "PLAN_FORMAT",
    "freeze",
    "main",
    "model_to_dump",
    "plan_to_dump",
    "write_dumps",
]

# The version of hpfreeze this exporter ships with (the package's version too).
__version__ = "0.2.0"

PLAN_FORMAT = "hpfreeze.plan/v1"
MODEL_FORMAT = "hpfreeze.model/v1"

# Keys that make a JSON object a typed value on the C++ side.
_TAGS = ("$placement", "$target", "$callable")
_PLACEMENTS = ("Shard", "StridedShard", "Replicate", "Partial")
# Class names that, anywhere in an object's MRO, mark it as a placement.
_PLACEMENT_FAMILY = frozenset(_PLACEMENTS + ("Placement", "RaggedShard"))
# Module-spec fields that hpfreeze freeze accepts and ignores whatever they hold
# (docs/formats.md, "The plan dump").
_EXEMPT_FIELDS = frozenset(("_tp_local_attr_plan", "_is_terminal", "_needs_cp_attn",
                            "_resolved_inner_wrapper", "_resolved_inner_target",
                            "_head_count_owner"))
_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


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


class ExportWarning(UserWarning):
    """A plan value that exports, but makes the frozen meta irreproducible."""


class _Walk:
    """One conversion pass; remembers the callables worth a warning."""

    def __init__(self) -> None:
        # name as written -> [first path, count, reason], in first-seen order
        self.unresolvable: Dict[str, List[Any]] = {}

    def note(self, text: str, path: str, reason: str) -> None:
        entry = self.unresolvable.setdefault(text, [path, 0, reason])
        entry[1] += 1

    def messages(self) -> List[str]:
        out = []
        for path, count, reason in self.unresolvable.values():
            more = f" ({count} places in all)" if count > 1 else ""
            out.append(f"{path}: {reason}{more}")
        return out

    def callable_(self, value: Any, path: str) -> dict:
        name = getattr(value, "__name__", None)
        if isinstance(name, str):
            if name.startswith("<"):
                self.note(name, path, f"a lambda is written as {name!r}, a name no generated "
                                      "code can resolve; use a def function, a registry name "
                                      "or a Target")
            return {"$callable": name}
        text = str(value)
        address = (", which holds a memory address and changes from run to run"
                   if _ADDRESS.search(text) else "")
        self.note(text, path, f"{type(value).__name__} has no __name__, so the meta gets its "
                              f"str() {text!r}{address}; use a def function, a registry name "
                              "or a Target")
        return {"$callable": text}

    def value(self, value: Any, path: str, typed: bool = True) -> Any:
        """A value as JSON; with typed=False placements, targets and callables are errors."""
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, enum.Enum):
            return self.value(value.value, path, typed)
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
            return {"$target": self.mapping(inner, _pointer(path, "$target"), typed=False)}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            # Field names are identifiers, so they can never read as a $-tag.
            return {f.name: self.value(getattr(value, f.name, None), _pointer(path, f.name), typed)
                    for f in dataclasses.fields(value)}
        if isinstance(value, Mapping):
            return self.mapping(value, path, typed)
        if isinstance(value, (list, tuple)):
            return [self.value(item, _pointer(path, i), typed) for i, item in enumerate(value)]
        if callable(value):
            if not typed:
                raise _fail(path, f"expected plain data, got callable {value!r}")
            return self.callable_(value, path)
        raise _fail(path, f"cannot export a value of type {type(value).__name__}")

    def mapping(self, value: Mapping, path: str, typed: bool) -> dict:
        out: dict = {}
        for key, item in value.items():
            name = _key(key, path)
            if name in out:
                raise _fail(path, f"two keys both export as {name!r}")
            if typed and name in _TAGS:
                raise _fail(path, f"a plain mapping may not use the key {name!r} "
                                  "(it would read as a typed value)")
            out[name] = self.value(item, _pointer(path, name), typed)
        return out

    def exempt(self, value: Any, path: str) -> Any:
        """A field freeze ignores: exported when it can be, else null, never an error."""
        try:
            return _Walk().value(value, path)  # its warnings would be about nothing frozen
        except Exception:  # noqa: BLE001 - whatever a to_dict() raises must not stop the export
            return None

    def module_spec(self, spec: Any, path: str) -> dict:
        if isinstance(spec, Mapping):
            items = [(_key(k, path), v) for k, v in spec.items()]
        elif dataclasses.is_dataclass(spec) and not isinstance(spec, type):
            # An init=False field that was never assigned counts as None.
            items = [(f.name, getattr(spec, f.name, None)) for f in dataclasses.fields(spec)]
        else:
            raise _fail(path, "expected a dataclass instance as module spec, got "
                              f"{type(spec).__name__}")
        out: dict = {}
        for name, value in items:
            if name in out:
                raise _fail(path, f"two keys both export as {name!r}")
            if name in _TAGS:
                raise _fail(path, f"a plain mapping may not use the key {name!r} "
                                  "(it would read as a typed value)")
            where = _pointer(path, name)
            out[name] = self.exempt(value, where) if name in _EXEMPT_FIELDS else \
                self.value(value, where)
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


def _plan_dump(plan: Any, meta: Optional[Mapping]) -> Tuple[dict, List[str]]:
    walk = _Walk()
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
        dump["special_handlers"] = walk.mapping(handlers, "/special_handlers", typed=False)
    for flag in ("sequence_parallel", "loss_parallel"):
        value = getattr(plan, flag, None)
        if value is not None:
            if not isinstance(value, bool):
                raise _fail(f"/{flag}", f"expected a bool, got {type(value).__name__}")
            dump[flag] = value
    if meta is not None:
        if not isinstance(meta, Mapping):
            raise _fail("/meta", f"expected a dict, got {type(meta).__name__}")
        dump["meta"] = walk.mapping(meta, "/meta", typed=False)
    modules = getattr(plan, "modules", None)
    if not isinstance(modules, Mapping):
        raise _fail("/modules", f"plan.modules must be a dict, got {type(modules).__name__}")
    out: dict = {}
    for fqn, spec in modules.items():
        if not isinstance(fqn, str):
            raise _fail("/modules", f"module FQN {fqn!r} is not a string")
        out[str.__str__(fqn)] = walk.module_spec(spec, _pointer("/modules", fqn))
    dump["modules"] = out
    return dump, walk.messages()


def _warn(messages: List[str], stacklevel: int) -> None:
    for message in messages:
        warnings.warn(message, ExportWarning, stacklevel=stacklevel + 1)


def plan_to_dump(plan: Any, meta: Optional[Mapping] = None) -> dict:
    """The ``hpfreeze.plan/v1`` dump of a ``ShardingPlan`` (or anything shaped like one).

    ``meta``, when given, is stored as the dump's ``meta`` object: the identity fields
    (signature, yaml_path, ...) that ``hpfreeze freeze`` copies into the meta when no
    ``--base`` is given. Raises ExportError for a value the dump cannot hold; gives an
    ExportWarning for a callable whose name makes the meta irreproducible.
    """
    dump, messages = _plan_dump(plan, meta)
    _warn(messages, stacklevel=2)
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
    if not (hasattr(model, "named_modules") and hasattr(model, "named_parameters")):
        raise ExportError(f"the model must be a torch.nn.Module (named_modules and "
                          f"named_parameters), got {type(model).__name__}")
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
    plan_dump, messages = _plan_dump(plan, meta)
    _warn(messages, stacklevel=2)
    plan_bytes = _dumps(plan_dump)
    model_bytes = _dumps(model_to_dump(model))
    _write_if_changed(plan_path, plan_bytes)
    _write_if_changed(model_path, model_bytes)


class HpfreezeError(RuntimeError):
    """``hpfreeze freeze`` rejected the input (returncode 1) or failed (2, or a negative
    signal number); ``diagnostics`` holds its stderr lines, ``hpfreeze: error: ...``."""

    def __init__(self, returncode: int, diagnostics: List[str]) -> None:
        self.returncode = returncode
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(self.diagnostics) or
                         f"hpfreeze freeze exited with status {returncode}")


class HpfreezeWarning(UserWarning):
    """A warning or note line ``hpfreeze freeze`` printed on a successful freeze."""


def _ready_dump(value: Mapping, what: str) -> bytes:
    """The JSON of a dump dict; whether it is a valid dump is for hpfreeze to say."""
    try:
        return _dumps(dict(value))
    except (TypeError, ValueError) as exc:
        raise ExportError(f"{what}: the dump dict is not JSON: {exc}") from None


def _hpfreeze_binary(binary: Optional[Union[str, "os.PathLike[str]"]]) -> str:
    if binary is not None:
        return os.fspath(binary)
    found = os.environ.get("HPFREEZE") or shutil.which("hpfreeze")
    if not found:
        raise FileNotFoundError("no hpfreeze to run: pass binary=, set HPFREEZE or put "
                                "hpfreeze on PATH")
    return found


def _feed(fd: int, data: bytes) -> None:
    """Writes data into a pipe and closes it; a reader that stops early is no error here
    (hpfreeze's exit status says why it stopped)."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BrokenPipeError:
        pass
    finally:
        os.close(fd)


def freeze(plan: Any, model: Any, meta: Any = None, *,
           binary: Optional[Union[str, "os.PathLike[str]"]] = None,
           strict: bool = False) -> str:
    """Freezes plan and model with ``hpfreeze freeze`` and returns the meta's text.

    plan and model are live objects (as for plan_to_dump and model_to_dump) or ready dump
    dicts (a mapping is taken for a dump, as json.load of plan.json gives it). meta is the
    base meta whose identity fields are kept, as ``--base``: a dict or the path of a JSON
    file; None uses the plan's own ``meta`` (a live plan has none: upstream's defaults). The
    plan goes to hpfreeze's stdin and the model (and a dict meta) through pipes of their
    own, the meta comes back on stdout: no file is written. The text is the exact bytes
    the command line writes, decoded as UTF-8. Raises ExportError before running anything
    when a value cannot be dumped, HpfreezeError when hpfreeze fails, FileNotFoundError
    when there is no hpfreeze (binary=, else $HPFREEZE, else PATH). POSIX only (/dev/fd).
    """
    if isinstance(plan, Mapping):
        plan_bytes = _ready_dump(plan, "plan")
    else:
        dump, messages = _plan_dump(plan, None)
        _warn(messages, stacklevel=2)
        plan_bytes = _dumps(dump)
    # What goes through a pipe of its own, after the option that names it.
    piped = [("--model", _ready_dump(model, "model") if isinstance(model, Mapping)
              else _dumps(model_to_dump(model)))]
    args = ["--plan", "-"]
    if isinstance(meta, Mapping):
        try:
            piped.append(("--base", _dumps(_Walk().mapping(meta, "", typed=False))))
        except ExportError as exc:
            raise ExportError(f"meta: {exc}") from None
    elif meta is not None:
        args += ["--base", os.fspath(meta)]
    if strict:
        args.append("--strict")
    command = _hpfreeze_binary(binary)
    pipes = [os.pipe() for _ in piped]
    for (option, _), (r, _) in zip(piped, pipes):
        args += [option, f"/dev/fd/{r}"]
    argv = [command, "freeze", *args]
    try:
        # The write ends are not inheritable (PEP 446): hpfreeze sees EOF when we close them.
        # Its diagnostics are the text lines HpfreezeError documents, whatever message
        # format the caller's environment asks of the command line's hpfreeze.
        env = {k: v for k, v in os.environ.items() if k != "HPFREEZE_MESSAGE_FORMAT"}
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, pass_fds=[r for r, _ in pipes],
                                env=env)
    except BaseException:
        for r, w in pipes:
            os.close(w)
        raise
    finally:
        for r, _ in pipes:
            os.close(r)
    feeders = [threading.Thread(target=_feed, args=(w, data), daemon=True)
               for (_, w), (_, data) in zip(pipes, piped)]
    for t in feeders:
        t.start()
    out, err = proc.communicate(plan_bytes)
    for t in feeders:
        t.join()
    lines = err.decode("utf-8", "replace").splitlines()
    if proc.returncode != 0:
        raise HpfreezeError(proc.returncode, lines)
    for line in lines:
        warnings.warn(line, HpfreezeWarning, stacklevel=2)
    return out.decode("utf-8")


class _UsageError(Exception):
    pass


def _missing(exc: ModuleNotFoundError) -> str:
    return (f"it needs the module {exc.name!r}, which this Python ({sys.executable}) "
            "cannot import")


def _load_factory(spec: str) -> Any:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise _UsageError(f"expected MODULE:FUNCTION, got {spec!r}")
    try:
        target: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None:
            raise
        if not (module_name + ".").startswith(exc.name + "."):
            # A module it imports (torch, hyper_parallel) is missing here: one line.
            raise _UsageError(f"cannot import {module_name!r}: {_missing(exc)}") from None
        raise _UsageError(f"cannot import {module_name!r}: {exc}") from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise _UsageError(f"{module_name!r} has no attribute {attribute!r}")
        target = getattr(target, part)
    if not callable(target):
        raise _UsageError(f"{spec} is a {type(target).__name__}, not a function")
    return target


def _read_meta(path: str) -> Any:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise _UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        meta = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ExportError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(meta, dict):
        raise ExportError(f"{path}: expected a JSON object, got {type(meta).__name__}")
    return meta


def main(argv: Optional[List[str]] = None) -> int:
    """The command line (see the module docstring); returns the exit status."""
    # The console script says its own name; `-m` and the file both show as `-m`.
    invoked = "hpfreeze-export" if (argv is None and os.path.basename(sys.argv[0]) ==
                                    "hpfreeze-export") else "python3 -m hpfreeze_export"
    parser = argparse.ArgumentParser(
        prog="hpfreeze_export",
        usage=f"{invoked} MODULE:FUNCTION [--plan FILE] [--model FILE] [--meta FILE]",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("factory", metavar="MODULE:FUNCTION",
                        help="a function returning the pair (plan, model), e.g. "
                             "train_setup:build_plan")
    parser.add_argument("--plan", metavar="FILE", default="plan.json",
                        help="where the plan dump goes (default: plan.json)")
    parser.add_argument("--model", metavar="FILE", default="model.json",
                        help="where the model tree dump goes (default: model.json)")
    parser.add_argument("--meta", metavar="FILE",
                        help="a JSON object stored as the plan dump's meta: the identity "
                             "fields (signature, yaml_path, ...), e.g. an earlier "
                             "codegen_meta.json")
    args = parser.parse_args(argv)

    def error(message: str, status: int) -> int:
        print(f"hpfreeze_export: error: {message}", file=sys.stderr)
        return status

    # A script run puts its own directory first on sys.path; MODULE lives in the caller's.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        factory = _load_factory(args.factory)
        meta = _read_meta(args.meta) if args.meta is not None else None
    except _UsageError as exc:
        return error(str(exc), 2)
    except ExportError as exc:
        return error(str(exc), 1)
    try:
        result = factory()
    except ModuleNotFoundError as exc:
        if exc.name is None:
            raise
        return error(f"{args.factory}: {_missing(exc)}", 2)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return error(f"{args.factory} returned {type(result).__name__}, expected the pair "
                     "(plan, model)", 2)
    plan, model = result
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ExportWarning)
            write_dumps(plan, model, args.plan, args.model, meta=meta)
    except ExportError as exc:
        return error(str(exc), 1)
    except OSError as exc:
        return error(f"{exc.filename or args.plan}: cannot write: {exc.strerror or exc}", 2)
    for w in caught:
        if issubclass(w.category, ExportWarning):
            print(f"hpfreeze_export: warning: {w.message}", file=sys.stderr)
        else:
            sys.stderr.write(warnings.formatwarning(w.message, w.category, w.filename,
                                                    w.lineno, w.line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
