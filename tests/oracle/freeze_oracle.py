#!/usr/bin/env python3
"""Independent test oracle for `hpfreeze freeze` (SPEC.md sections 1-6 and 8).

Written from the contract only, never from the C++ sources, so that the golden corpus
checks the binary against a second reading of the spec. Python 3.11 standard library
only. Output bytes come from `json.dump(meta, f, indent=2, sort_keys=True)`, which the
spec names as the reference encoder.

    freeze_oracle.py --plan P --model M [--base B] [--no-verify] [--strict] [--allow-empty]

Exit 0 with the meta on stdout, or exit 1 with one error line on stderr of the form
`freeze_oracle: error: FILE[:LINE:COL]: POINTER: message`.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import re
import sys
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 1024
INT_MIN = -(2**63)
UINT_MAX = 2**64 - 1
INT64_MAX = 2**63 - 1

PLAN_FORMAT = "hpfreeze.plan/v1"
MODEL_FORMAT = "hpfreeze.model/v1"

# (attribute, meta key, section, kind), in the order of SPEC.md section 2.
SPEC_FIELDS = (
    ("params", "params", "param_plan", "placement_map"),
    ("in_src", "in_src", "param_plan", "named_placements"),
    ("in_dst", "in_dst", "param_plan", "named_placements"),
    ("out_src", "out_src", "param_plan", "named_placements"),
    ("out_dst", "out_dst", "param_plan", "named_placements"),
    ("out_names", "out_names", "param_plan", "name_list"),
    ("tp_divide_attrs", "tp_divide_attrs", "param_plan", "attr_list"),
    ("is_boundary", "is_boundary", "param_plan", "scalar"),
    ("region_dispatch", "region_dispatch", "param_plan", "scalar"),
    ("_deferred_bias_params", "deferred_bias_params", "param_plan", "name_list"),
    ("inner_wrapper", "inner_wrapper", "injections", "value_to_dict"),
    ("inner_target", "inner_target", "injections", "plain"),
    ("inner_out_src", "inner_out_src", "injections", "value_to_dict"),
    ("local_compute_fn", "local_compute_fn", "injections", "value_to_dict"),
    ("_ep_stack", "ep_stack", "injections", "dict_copy"),
    ("_ep_size", "ep_size", "injections", "int_truthy"),
)
EXEMPT_SPEC_KEYS = frozenset((
    "_tp_local_attr_plan", "_is_terminal", "_needs_cp_attn",
    "_resolved_inner_wrapper", "_resolved_inner_target", "_head_count_owner",
))
WRITE_WHEN_NOT_NULL = frozenset((
    "placement_map", "named_placements", "scalar", "value_to_dict", "plain", "attr_list"))
TYPE_TAGS = ("$placement", "$target", "$callable")
PLACEMENT_FIELDS = {
    "Shard": ("dim", "uneven_shard"),
    "StridedShard": ("dim", "split_factor", "uneven_shard"),
    "Replicate": (),
    "Partial": ("reduce_op",),
}


class OracleError(Exception):
    """One diagnostic: the file, a JSON Pointer or a line:col position, a message."""

    def __init__(self, file: str, pointer: str | None, message: str,
                 position: tuple[int, int] | None = None):
        super().__init__(message)
        self.file = file
        self.pointer = pointer
        self.message = message
        self.position = position

    def render(self) -> str:
        where = self.file
        if self.position is not None:
            where += f":{self.position[0]}:{self.position[1]}"
        if self.pointer is not None:
            where += f": {self.pointer}" if self.pointer else ": (root)"
        return f"freeze_oracle: error: {where}: {self.message}"


def pointer_child(pointer: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{pointer}/{key}"
    return pointer + "/" + key.replace("~", "~0").replace("/", "~1")


# --------------------------------------------------------------------------------------
# Strict JSON reading
# --------------------------------------------------------------------------------------

_WS = b" \t\n\r"
_HEX = b"0123456789abcdefABCDEF"
_DIGITS = b"0123456789"
_SIMPLE_ESCAPES = b'"\\/bfnrt'


class _SyntaxProblem(Exception):
    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset = offset
        self.message = message


def _utf8_tail_ranges(lead: int) -> list[tuple[int, int]] | None:
    """Allowed ranges of the continuation bytes after `lead` (Unicode table 3-7)."""
    cont = (0x80, 0xBF)
    if 0xC2 <= lead <= 0xDF:
        return [cont]
    if lead == 0xE0:
        return [(0xA0, 0xBF), cont]
    if 0xE1 <= lead <= 0xEC or 0xEE <= lead <= 0xEF:
        return [cont, cont]
    if lead == 0xED:
        return [(0x80, 0x9F), cont]
    if lead == 0xF0:
        return [(0x90, 0xBF), cont, cont]
    if 0xF1 <= lead <= 0xF3:
        return [cont, cont, cont]
    if lead == 0xF4:
        return [(0x80, 0x8F), cont, cont]
    return None


class _Locator:
    """Walks the bytes once and reports the first offending byte.

    The offset is the first byte at which the text stops being a prefix of any valid
    document (end of input for truncation), except: numbers out of range are reported at
    their first byte and lone surrogate escapes at their backslash.
    """

    def __init__(self, data: bytes):
        self.data = data
        self.n = len(data)
        self.i = 0

    def fail(self, offset: int, message: str):
        raise _SyntaxProblem(offset, message)

    def skip_ws(self):
        while self.i < self.n and self.data[self.i] in _WS:
            self.i += 1

    def run(self):
        if self.n == 0:
            self.fail(0, "empty file")
        if self.data.startswith(b"\xef\xbb\xbf"):
            self.fail(0, "byte order mark is not allowed")
        stack: list[str] = []
        self.value(stack)
        while True:
            # After a complete value: close containers or go on with the next member.
            if not stack:
                self.skip_ws()
                if self.i != self.n:
                    self.fail(self.i, "trailing content after the document")
                return
            self.skip_ws()
            if self.i == self.n:
                self.fail(self.n, "unexpected end of input")
            c = self.data[self.i]
            if stack[-1] == "o":
                if c == ord(","):
                    self.i += 1
                    self.skip_ws()
                    self.member_key()
                    self.value(stack)
                elif c == ord("}"):
                    self.i += 1
                    stack.pop()
                else:
                    self.fail(self.i, "expected ',' or '}'")
            else:
                if c == ord(","):
                    self.i += 1
                    self.value(stack)
                elif c == ord("]"):
                    self.i += 1
                    stack.pop()
                else:
                    self.fail(self.i, "expected ',' or ']'")

    def member_key(self):
        if self.i == self.n:
            self.fail(self.n, "unexpected end of input")
        if self.data[self.i] != ord('"'):
            self.fail(self.i, "expected a string key")
        self.string()
        self.skip_ws()
        if self.i == self.n:
            self.fail(self.n, "unexpected end of input")
        if self.data[self.i] != ord(":"):
            self.fail(self.i, "expected ':'")
        self.i += 1

    def value(self, stack: list[str]):
        """Consumes one value; containers are opened (pushed) and left for run()."""
        while True:
            self.skip_ws()
            if self.i == self.n:
                self.fail(self.n, "unexpected end of input")
            c = self.data[self.i]
            if c in (ord("{"), ord("[")):
                if len(stack) >= MAX_DEPTH:
                    self.fail(self.i, f"nesting deeper than {MAX_DEPTH} levels")
                self.i += 1
                self.skip_ws()
                if c == ord("{"):
                    if self.i < self.n and self.data[self.i] == ord("}"):
                        self.i += 1
                        return
                    stack.append("o")
                    self.member_key()
                    continue  # the member's value
                if self.i < self.n and self.data[self.i] == ord("]"):
                    self.i += 1
                    return
                stack.append("a")
                continue  # the first element
            if c == ord('"'):
                self.string()
                return
            if c == ord("-") or c in _DIGITS:
                self.number()
                return
            for word in (b"true", b"false", b"null"):
                if c == word[0]:
                    for k, expected in enumerate(word):
                        if self.i + k == self.n:
                            self.fail(self.n, "unexpected end of input")
                        if self.data[self.i + k] != expected:
                            self.fail(self.i + k, "invalid literal")
                    self.i += len(word)
                    return
            self.fail(self.i, "expected a value")

    def hex4(self, start: int) -> int:
        for k in range(4):
            if start + k == self.n:
                self.fail(self.n, "unexpected end of input")
            if self.data[start + k] not in _HEX:
                self.fail(start + k, "invalid \\u escape")
        return int(self.data[start:start + 4], 16)

    def string(self):
        self.i += 1  # opening quote
        while True:
            if self.i == self.n:
                self.fail(self.n, "unexpected end of input in a string")
            b = self.data[self.i]
            if b == ord('"'):
                self.i += 1
                return
            if b == ord("\\"):
                start = self.i
                if self.i + 1 == self.n:
                    self.fail(self.n, "unexpected end of input in a string")
                e = self.data[self.i + 1]
                if e == ord("u"):
                    code = self.hex4(self.i + 2)
                    self.i += 6
                    if 0xDC00 <= code <= 0xDFFF:
                        self.fail(start, "lone surrogate escape")
                    if 0xD800 <= code <= 0xDBFF:
                        rest = self.data[self.i:self.i + 6]
                        if (len(rest) == 6 and rest[:2] == b"\\u"
                                and all(h in _HEX for h in rest[2:])
                                and 0xDC00 <= int(rest[2:], 16) <= 0xDFFF):
                            self.i += 6
                        elif len(rest) < 6 and self.i + len(rest) == self.n and \
                                _could_start_low_surrogate(rest):
                            self.fail(self.n, "unexpected end of input in a string")
                        else:
                            self.fail(start, "lone surrogate escape")
                    continue
                if e not in _SIMPLE_ESCAPES:
                    self.fail(self.i + 1, "invalid escape")
                self.i += 2
                continue
            if b < 0x20:
                self.fail(self.i, "control character in a string")
            if b < 0x80:
                self.i += 1
                continue
            tails = _utf8_tail_ranges(b)
            if tails is None:
                self.fail(self.i, "invalid UTF-8")
            self.i += 1
            for lo, hi in tails:
                if self.i == self.n:
                    self.fail(self.n, "unexpected end of input in a string")
                if not lo <= self.data[self.i] <= hi:
                    self.fail(self.i, "invalid UTF-8")
                self.i += 1

    def number(self):
        start = self.i
        is_float = False
        if self.data[self.i] == ord("-"):
            self.i += 1
        if self.i < self.n and self.data[self.i] == ord("0"):
            self.i += 1  # a leading zero ends the integer part
        else:
            self.digits(required=True)
        if self.i < self.n and self.data[self.i] == ord("."):
            is_float = True
            self.i += 1
            self.digits(required=True)
        if self.i < self.n and self.data[self.i] in b"eE":
            is_float = True
            self.i += 1
            if self.i < self.n and self.data[self.i] in b"+-":
                self.i += 1
            self.digits(required=True)
        token = self.data[start:self.i].decode("ascii")
        if is_float:
            if float(token) in (float("inf"), float("-inf")):
                self.fail(start, f"number {token} is out of range for a double")
        else:
            value = int(token)
            if not INT_MIN <= value <= UINT_MAX:
                self.fail(start, f"integer {token} is outside [-2^63, 2^64-1]")

    def digits(self, required: bool):
        begin = self.i
        while self.i < self.n and self.data[self.i] in _DIGITS:
            self.i += 1
        if required and self.i == begin:
            if self.i == self.n:
                self.fail(self.n, "unexpected end of input in a number")
            self.fail(self.i, "expected a digit")


def _could_start_low_surrogate(rest: bytes) -> bool:
    pattern = b"\\u"
    for k, b in enumerate(rest):
        if k < 2:
            if b != pattern[k]:
                return False
        elif b not in _HEX:
            return False
    if len(rest) >= 3 and rest[2:3] not in (b"d", b"D"):
        return False
    if len(rest) >= 4 and rest[3:4] not in b"cdefCDEF":
        return False
    return True


class _Pairs(list):
    """Object members in document order, duplicates kept, as json.loads saw them."""


def _reject_constant(name: str):
    raise ValueError(f"{name} is not allowed")


def _checked_int(text: str) -> int:
    value = int(text)
    if not INT_MIN <= value <= UINT_MAX:
        raise ValueError(f"integer {text} is outside [-2^63, 2^64-1]")
    return value


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


def _has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


def _to_plain(value: Any, pointer: str, file: str) -> Any:
    if isinstance(value, _Pairs):
        result: dict[str, Any] = {}
        for key, member in value:
            child = pointer_child(pointer, key)
            if _has_surrogate(key):
                raise OracleError(file, child, "lone surrogate in a key")
            if key in result:
                raise OracleError(file, child, f"duplicate key {key!r}")
            result[key] = _to_plain(member, child, file)
        return result
    if isinstance(value, list):
        return [_to_plain(v, pointer_child(pointer, k), file) for k, v in enumerate(value)]
    if isinstance(value, str) and _has_surrogate(value):
        raise OracleError(file, pointer, "lone surrogate in a string")
    return value


def read_json(data: bytes, file: str) -> Any:
    """Parses one strict JSON document; raises OracleError naming line:col or a pointer."""
    try:
        _Locator(data).run()
    except _SyntaxProblem as problem:
        raise OracleError(file, None, problem.message, _line_col(data, problem.offset))
    text = data.decode("utf-8")
    try:
        raw = json.loads(text, object_pairs_hook=_Pairs, parse_constant=_reject_constant,
                         parse_int=_checked_int)
    except json.JSONDecodeError as exc:  # the locator should have caught it first
        offset = len(text[:exc.pos].encode("utf-8"))
        raise OracleError(file, None, exc.msg, _line_col(data, offset))
    except ValueError as exc:
        raise OracleError(file, None, str(exc))
    return _to_plain(raw, "", file)


# --------------------------------------------------------------------------------------
# Placements and typed values
# --------------------------------------------------------------------------------------

@dataclass
class Placement:
    kind: str
    pointer: str
    dim: int = 0
    split_factor: int = 1
    uneven_shard: bool = False
    reduce_op: str = "sum"

    def canonical(self) -> str:
        if self.kind == "Replicate":
            return "R"
        if self.kind == "Partial":
            return f"P({self.reduce_op})"
        encoded = -self.dim - 1 if self.uneven_shard else self.dim
        if self.kind == "Shard":
            return f"S({encoded})"
        return f"SS({encoded},{self.split_factor})"

    @property
    def is_sharded(self) -> bool:
        return self.kind != "Replicate"

    @property
    def has_dim(self) -> bool:
        return self.kind in ("Shard", "StridedShard")


@dataclass
class Target:
    value: dict


@dataclass
class CallableRef:
    name: str


_INT_TEXT = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*")
# The ASCII characters Python's str.strip() and int() treat as whitespace.
_ASCII_WS = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


class PlacementTextError(ValueError):
    pass


def _parse_int_text(part: str, what: str, text: str) -> int:
    stripped = part.strip(_ASCII_WS)
    if not _INT_TEXT.fullmatch(stripped):
        raise PlacementTextError(f"invalid {what} in placement {text!r}")
    value = int(stripped)
    if not INT_MIN <= value <= INT64_MAX:
        raise PlacementTextError(f"{what} out of 64-bit range in placement {text!r}")
    return value


def parse_placement_text(text: str, pointer: str) -> Placement:
    """SPEC.md section 1: canonical string -> placement (raises PlacementTextError)."""
    if not text.isascii():
        raise PlacementTextError(f"non-ASCII placement text {text!r}")
    if text == "R":
        return Placement("Replicate", pointer)
    match = re.fullmatch(r"([SP]|SS)\((.*)\)", text)
    if match is None:
        raise PlacementTextError(f"unknown placement form {text!r}")
    kind, args = match.groups()
    if kind == "P":
        if not args:
            raise PlacementTextError(f"missing reduce_op in placement {text!r}")
        return Placement("Partial", pointer, reduce_op=args)
    parts = args.split(",")
    if kind == "S" and len(parts) != 1:
        raise PlacementTextError(f"S takes one argument in placement {text!r}")
    if kind == "SS" and len(parts) != 2:
        raise PlacementTextError(f"SS takes two arguments in placement {text!r}")
    dim = _parse_int_text(parts[0], "dim", text)
    uneven = dim < 0
    if uneven:
        dim = -dim - 1
    if kind == "S":
        return Placement("Shard", pointer, dim=dim, uneven_shard=uneven)
    factor = _parse_int_text(parts[1], "split_factor", text)
    if factor < 1:
        raise PlacementTextError(f"split_factor must be >= 1 in placement {text!r}")
    return Placement("StridedShard", pointer, dim=dim, split_factor=factor, uneven_shard=uneven)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class PlanDecoder:
    """Decodes the typed values of module specs; remembers negative real dims in order."""

    def __init__(self, file: str):
        self.file = file
        self.negative_dims: list[str] = []

    def error(self, pointer: str, message: str) -> OracleError:
        return OracleError(self.file, pointer, message)

    def typed(self, value: Any, pointer: str) -> Any:
        """Plain JSON -> the same tree with typed objects replaced by their classes."""
        if isinstance(value, dict):
            tags = [t for t in TYPE_TAGS if t in value]
            if len(tags) > 1:
                raise self.error(pointer, f"object holds more than one type tag: {', '.join(tags)}")
            if not tags:
                return {k: self.typed(v, pointer_child(pointer, k)) for k, v in value.items()}
            tag = tags[0]
            if tag == "$placement":
                return self.placement_object(value, pointer)
            for key in value:
                if key != tag:
                    raise self.error(pointer_child(pointer, key),
                                     f"unexpected key {key!r} beside {tag}")
            inner = value[tag]
            if tag == "$target":
                if not isinstance(inner, dict):
                    raise self.error(pointer_child(pointer, tag), "$target must hold an object")
                return Target(copy.deepcopy(inner))
            if not isinstance(inner, str) or not inner:
                raise self.error(pointer_child(pointer, tag),
                                 "$callable must hold a non-empty string")
            return CallableRef(inner)
        if isinstance(value, list):
            return [self.typed(v, pointer_child(pointer, k)) for k, v in enumerate(value)]
        return value

    def placement_object(self, value: dict, pointer: str) -> Placement:
        kind = value["$placement"]
        if not isinstance(kind, str):
            raise self.error(pointer_child(pointer, "$placement"), "$placement must be a string")
        if kind == "RaggedShard":
            raise self.error(pointer, "RaggedShard has no canonical string form")
        if kind not in PLACEMENT_FIELDS:
            raise self.error(pointer, f"unknown placement type {kind!r}")
        allowed = PLACEMENT_FIELDS[kind]
        for key in value:
            if key != "$placement" and key not in allowed:
                raise self.error(pointer_child(pointer, key), f"unknown field {key!r} for {kind}")
        placement = Placement(kind, pointer)
        if kind in ("Shard", "StridedShard"):
            if "dim" not in value:
                raise self.error(pointer, f"{kind} needs 'dim'")
            dim = value["dim"]
            if not _is_int(dim) or not INT_MIN <= dim <= INT64_MAX:
                raise self.error(pointer_child(pointer, "dim"), "dim must be a 64-bit integer")
            placement.dim = dim
            if "uneven_shard" in value:
                uneven = value["uneven_shard"]
                if not isinstance(uneven, bool):
                    raise self.error(pointer_child(pointer, "uneven_shard"),
                                     "uneven_shard must be a boolean")
                placement.uneven_shard = uneven
            if dim < 0:
                self.negative_dims.append(pointer)
        if kind == "StridedShard":
            if "split_factor" not in value:
                raise self.error(pointer, "StridedShard needs 'split_factor'")
            factor = value["split_factor"]
            if not _is_int(factor) or not INT_MIN <= factor <= INT64_MAX:
                raise self.error(pointer_child(pointer, "split_factor"),
                                 "split_factor must be a 64-bit integer")
            if factor < 1:
                raise self.error(pointer_child(pointer, "split_factor"),
                                 "split_factor must be >= 1")
            placement.split_factor = factor
        if kind == "Partial" and "reduce_op" in value:
            op = value["reduce_op"]
            if not isinstance(op, str) or not op:
                raise self.error(pointer_child(pointer, "reduce_op"),
                                 "reduce_op must be a non-empty string")
            # The meta holds P(op), which the canonical-string parser must read back as op.
            if not op.isascii() or "\n" in op:
                raise self.error(pointer_child(pointer, "reduce_op"),
                                 "reduce_op must be ASCII without a newline")
            placement.reduce_op = op
        return placement

    def param_leaf(self, value: Any, pointer: str) -> Placement:
        if isinstance(value, str):
            try:
                return parse_placement_text(value, pointer)
            except PlacementTextError as exc:
                raise self.error(pointer, str(exc))
        decoded = self.typed(value, pointer)
        if not isinstance(decoded, Placement):
            raise self.error(pointer, "a parameter placement must be a placement")
        return decoded


# --------------------------------------------------------------------------------------
# Dumps
# --------------------------------------------------------------------------------------

@dataclass
class ModuleSpec:
    fqn: str
    pointer: str
    values: dict[str, Any]  # attribute -> decoded value (typed objects resolved); null = absent
    params: dict[str, dict[str, Placement]] | None = None


@dataclass
class Plan:
    modules: list[ModuleSpec]
    mesh_dim_names: list[str] | None
    tied_pairs: list[list[str]]
    special_handlers: dict
    meta: dict | None
    negative_dims: list[str] = field(default_factory=list)


@dataclass
class Model:
    modules: dict[str, str]
    parameters: dict[str, list[int]] | None
    frozen: set[str] = field(default_factory=set)  # requires_grad false


def _require_object(value: Any, file: str, pointer: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise OracleError(file, pointer, f"{what} must be an object")
    return value


def _string_array(value: Any, file: str, pointer: str, what: str) -> list[str]:
    if not isinstance(value, list):
        raise OracleError(file, pointer, f"{what} must be an array of strings")
    for k, item in enumerate(value):
        if not isinstance(item, str):
            raise OracleError(file, pointer_child(pointer, k), f"{what} must hold strings")
    return list(value)


def decode_plan(doc: Any, file: str) -> Plan:
    root = _require_object(doc, file, "", "the plan dump")
    allowed = ("format", "modules", "mesh_dim_names", "tied_pairs", "special_handlers", "meta",
               "sequence_parallel", "loss_parallel")
    for key in root:
        if key not in allowed:
            raise OracleError(file, pointer_child("", key), f"unknown top-level key {key!r}")
    if root.get("format") is not None and root["format"] != PLAN_FORMAT:
        raise OracleError(file, "/format", f"format must be {PLAN_FORMAT!r}")
    for flag in ("sequence_parallel", "loss_parallel"):
        if root.get(flag) is not None and not isinstance(root[flag], bool):
            raise OracleError(file, "/" + flag, f"{flag} must be a boolean")

    mesh = root.get("mesh_dim_names")
    if mesh is not None:
        mesh = _string_array(mesh, file, "/mesh_dim_names", "mesh_dim_names") or None

    tied: list[list[str]] = []
    if root.get("tied_pairs") is not None:
        pairs = root["tied_pairs"]
        if not isinstance(pairs, list):
            raise OracleError(file, "/tied_pairs", "tied_pairs must be an array of arrays")
        for k, pair in enumerate(pairs):
            tied.append(_string_array(pair, file, f"/tied_pairs/{k}", "a tied pair"))

    handlers: dict = {}
    if root.get("special_handlers") is not None:
        handlers = copy.deepcopy(
            _require_object(root["special_handlers"], file, "/special_handlers",
                            "special_handlers"))

    meta = root.get("meta")
    if meta is not None:
        _check_base(meta, file, "/meta")

    if "modules" not in root:
        raise OracleError(file, "", "missing required key 'modules'")
    modules_raw = _require_object(root["modules"], file, "/modules", "modules")
    decoder = PlanDecoder(file)
    modules = [decode_spec(fqn, spec, decoder) for fqn, spec in modules_raw.items()]
    return Plan(modules, mesh, tied, handlers, meta, decoder.negative_dims)


def decode_spec(fqn: str, spec: Any, decoder: PlanDecoder) -> ModuleSpec:
    pointer = pointer_child("/modules", fqn)
    _require_object(spec, decoder.file, pointer, "a module spec")
    known = {attr for attr, _, _, _ in SPEC_FIELDS}
    values: dict[str, Any] = {}
    result = ModuleSpec(fqn, pointer, values)
    for key, raw in spec.items():
        key_pointer = pointer_child(pointer, key)
        if key in EXEMPT_SPEC_KEYS:
            continue
        if key not in known:
            raise OracleError(decoder.file, key_pointer, f"unknown module spec key {key!r}")
        if raw is None:
            continue
        if key == "params":
            result.params = decode_params(raw, key_pointer, decoder)
        else:
            values[key] = decoder.typed(raw, key_pointer)
    return result


def decode_params(raw: Any, pointer: str,
                  decoder: PlanDecoder) -> dict[str, dict[str, Placement]]:
    if not isinstance(raw, dict) or any(t in raw for t in TYPE_TAGS):
        raise OracleError(decoder.file, pointer, "params must be an object of parameter names")
    params: dict[str, dict[str, Placement]] = {}
    for name, axes in raw.items():
        name_pointer = pointer_child(pointer, name)
        if not isinstance(axes, dict) or any(t in axes for t in TYPE_TAGS):
            raise OracleError(decoder.file, name_pointer,
                              "a parameter entry must be an object of mesh axes")
        params[name] = {axis: decoder.param_leaf(leaf, pointer_child(name_pointer, axis))
                        for axis, leaf in axes.items()}
    return params


def _check_base(base: Any, file: str, pointer: str) -> dict:
    _require_object(base, file, pointer, "the base meta")
    if "covered" in base and not isinstance(base["covered"], dict):
        raise OracleError(file, pointer_child(pointer, "covered"), "covered must be an object")
    return base


def decode_model(doc: Any, file: str) -> Model:
    root = _require_object(doc, file, "", "the model dump")
    for key in root:
        if key not in ("format", "modules", "parameters"):
            raise OracleError(file, pointer_child("", key), f"unknown top-level key {key!r}")
    if root.get("format") is not None and root["format"] != MODEL_FORMAT:
        raise OracleError(file, "/format", f"format must be {MODEL_FORMAT!r}")
    if "modules" not in root:
        raise OracleError(file, "", "missing required key 'modules'")
    modules = _require_object(root["modules"], file, "/modules", "modules")
    for fqn, cls in modules.items():
        if not isinstance(cls, str):
            raise OracleError(file, pointer_child("/modules", fqn), "a class name must be a string")
    parameters = None
    frozen = set()
    if root.get("parameters") is not None:
        parameters = {}
        raw = _require_object(root["parameters"], file, "/parameters", "parameters")
        for fqn, info in raw.items():
            p = pointer_child("/parameters", fqn)
            _require_object(info, file, p, "a parameter")
            for key in info:
                if key not in ("shape", "dtype", "requires_grad"):
                    raise OracleError(file, pointer_child(p, key),
                                      f"unknown parameter field {key!r}")
            if "shape" not in info:
                raise OracleError(file, p, "missing required key 'shape'")
            shape = info["shape"]
            if not isinstance(shape, list):
                raise OracleError(file, p + "/shape", "shape must be an array")
            for k, extent in enumerate(shape):
                if not _is_int(extent) or extent < 0:
                    raise OracleError(file, f"{p}/shape/{k}",
                                      "an extent must be a non-negative integer")
            if info.get("dtype") is not None and not isinstance(info["dtype"], str):
                raise OracleError(file, p + "/dtype", "dtype must be a string")
            grad = info.get("requires_grad")
            if grad is not None and not isinstance(grad, bool):
                raise OracleError(file, p + "/requires_grad", "requires_grad must be a boolean")
            parameters[fqn] = list(shape)
            if grad is False:
                frozen.add(fqn)
    return Model(dict(modules), parameters, frozen)


# --------------------------------------------------------------------------------------
# Freeze
# --------------------------------------------------------------------------------------

def _falsy(value: Any) -> bool:
    # Typed objects are live objects upstream: always truthy.
    if isinstance(value, (Placement, Target, CallableRef)):
        return False
    return not value


def _contains_typed(value: Any) -> bool:
    if isinstance(value, (Placement, Target, CallableRef)):
        return True
    if isinstance(value, dict):
        return any(_contains_typed(v) for v in value.values())
    if isinstance(value, list):
        return any(_contains_typed(v) for v in value)
    return False


def value_to_dict(value: Any) -> Any:
    if isinstance(value, Placement):
        return value.canonical()
    if isinstance(value, Target):
        return copy.deepcopy(value.value)
    if isinstance(value, CallableRef):
        return value.name
    if isinstance(value, dict):
        return {k: value_to_dict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [value_to_dict(v) for v in value]
    return value


def freeze_field(kind: str, value: Any, pointer: str, file: str) -> tuple[bool, Any]:
    """Returns (written, frozen value); the write condition is checked before the type."""
    if kind in WRITE_WHEN_NOT_NULL:
        if value is None:
            return False, None
    elif _falsy(value):
        return False, None

    def fail(message: str):
        raise OracleError(file, pointer, message)

    if kind == "named_placements":
        if _falsy(value):
            return True, {}
        if not isinstance(value, dict):
            fail("must be an object of named placements")
        return True, {k: value_to_dict(v) for k, v in value.items()}
    if kind == "value_to_dict":
        return True, value_to_dict(value)
    if kind in ("name_list", "attr_list"):
        if not isinstance(value, list):
            fail("must be an array")
        if _contains_typed(value):
            fail("must hold plain JSON values only")
        return True, copy.deepcopy(value)
    if kind == "dict_copy":
        if not isinstance(value, dict):
            fail("must be an object")
        if _contains_typed(value):
            fail("must hold plain JSON values only")
        return True, copy.deepcopy(value)
    # scalar / plain / int_truthy
    if _contains_typed(value):
        fail("must be plain JSON")
    return True, copy.deepcopy(value)


def join_fqn(boundary: str, name: str) -> str:
    if not boundary:
        return name
    if not name:
        return boundary
    return f"{boundary}.{name}"


def default_meta() -> dict:
    return {
        "codegen_version": "0.1.1",
        "signature": "",
        "yaml_path": "",
        "yaml_sha256": "",
        "source": {},
        "parallel_dims": {},
        "outputs": {},
        "special_handlers": {},
        "boundary_classes": {},
        "param_plan": {},
        "model_name": None,
        "model_class": None,
        "injections": [],
        "skipped_overrides": [],
        "frozen_sharded_params": [],
        "tied_pairs": [],
        "module_overrides": [],
        "external_state_classes": [],
        "remote_siblings": [],
        "entrypoints": {"parallelize": "hp_parallelize"},
        "covered": {"sharding_plan": False, "module_overrides": False, "axes": []},
        "not_covered": ["mesh", "fsdp2", "pp", "activation_checkpoint", "compile"],
        "mesh_dim_names": None,
    }


@dataclass
class Options:
    verify: bool = True
    strict: bool = False
    allow_empty: bool = False


def freeze(plan: Plan, model: Model, base: dict | None, plan_file: str,
           options: Options, model_file: str = "model.json") -> tuple[dict, list[str]]:
    """Returns (meta, warnings); raises OracleError."""
    param_plan: dict[str, dict] = {}
    injections: list[dict] = []
    sharded: set[str] = set()
    boundary_classes: dict[str, str] = {}
    for spec in plan.modules:
        entry: dict[str, Any] = {}
        injection: dict[str, Any] = {}
        for attr, key, section, kind in SPEC_FIELDS:
            target = entry if section == "param_plan" else injection
            if attr == "params":
                if spec.params is not None:
                    target[key] = {name: {axis: p.canonical() for axis, p in axes.items()}
                                   for name, axes in spec.params.items()}
                continue
            written, frozen = freeze_field(kind, spec.values.get(attr),
                                           pointer_child(spec.pointer, attr), plan_file)
            if written:
                target[key] = frozen
        param_plan[spec.fqn] = entry
        if injection:
            injections.append({"match": spec.fqn, **injection})
        for name, axes in (spec.params or {}).items():
            if any(p.is_sharded for p in axes.values()):
                sharded.add(join_fqn(spec.fqn, name))
        if spec.fqn not in model.modules:
            raise OracleError(plan_file, spec.pointer,
                              f"module {spec.fqn!r} is not in the model tree")
        boundary_classes[spec.fqn] = model.modules[spec.fqn]

    if not plan.modules and not options.allow_empty:
        raise OracleError(plan_file, "/modules", "the plan has no modules")

    if options.verify and model.parameters is not None:
        verify(plan, model.parameters, plan_file)

    warnings: list[str] = []
    if plan.negative_dims:
        first = plan.negative_dims[0]
        count = len(plan.negative_dims)
        message = (f"{count} placement(s) with a negative real dim; the canonical string "
                   f"reads back as an uneven shard")
        if options.strict:
            raise OracleError(plan_file, first, message)
        warnings.append(f"freeze_oracle: warning: {plan_file}: {first}: {message}")

    if options.verify and model.parameters is not None:
        uncovered = uncovered_parameters(plan, model)
        if uncovered:
            pointer = pointer_child("/parameters", uncovered[0])
            message = (f"{len(uncovered)} trainable parameter(s) under no planned key, "
                       f"first {uncovered[0]!r}")
            if options.strict:
                raise OracleError(model_file, pointer, message)
            warnings.append(f"freeze_oracle: warning: {model_file}: {pointer}: {message}")

    meta = default_meta()
    if base is not None:
        for key, value in base.items():
            meta[key] = copy.deepcopy(value)
    meta["param_plan"] = param_plan
    meta["injections"] = injections
    meta["frozen_sharded_params"] = sorted(sharded)
    meta["boundary_classes"] = boundary_classes
    meta["tied_pairs"] = [list(pair) for pair in plan.tied_pairs]
    meta["special_handlers"] = copy.deepcopy(plan.special_handlers)
    meta["mesh_dim_names"] = list(plan.mesh_dim_names) if plan.mesh_dim_names else None
    meta["covered"] = dict(meta["covered"])
    meta["covered"]["sharding_plan"] = True
    return meta, warnings


def verify(plan: Plan, parameters: dict[str, list[int]], plan_file: str):
    for spec in plan.modules:
        for name, axes in (spec.params or {}).items():
            fqn = join_fqn(spec.fqn, name)
            name_pointer = pointer_child(pointer_child(spec.pointer, "params"), name)
            if fqn not in parameters:
                raise OracleError(plan_file, name_pointer,
                                  f"parameter {fqn!r} is not in the model")
            rank = len(parameters[fqn])
            for placement in axes.values():
                if placement.has_dim and not -rank <= placement.dim < rank:
                    raise OracleError(plan_file, placement.pointer,
                                      f"dim {placement.dim} is out of range for {fqn!r} "
                                      f"of rank {rank}")
    for k, pair in enumerate(plan.tied_pairs):
        for j, name in enumerate(pair):
            if name not in parameters:
                raise OracleError(plan_file, f"/tied_pairs/{k}/{j}",
                                  f"tied parameter {name!r} is not in the model")


def uncovered_parameters(plan: Plan, model: Model) -> list[str]:
    """Upstream's preflight rule: a trainable model parameter is covered when its name is a
    planned FQN or starts with one followed by a dot. The uncovered ones, in model order."""
    keys = {join_fqn(spec.fqn, name) for spec in plan.modules for name in (spec.params or {})}
    out = []
    for fqn in model.parameters:
        if fqn in model.frozen:
            continue
        parts = fqn.split(".")
        if not any(".".join(parts[:k]) in keys for k in range(1, len(parts) + 1)):
            out.append(fqn)
    return out


def encode_meta(meta: dict) -> bytes:
    out = io.StringIO()
    json.dump(meta, out, indent=2, sort_keys=True)
    return out.getvalue().encode("ascii")


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------

def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def run(plan_path: str, model_path: str, base_path: str | None,
        options: Options) -> tuple[int, bytes, list[str]]:
    """Returns (exit code, stdout bytes, stderr lines)."""
    try:
        plan_doc = read_json(_read(plan_path), plan_path)
        model_doc = read_json(_read(model_path), model_path)
        base_doc = read_json(_read(base_path), base_path) if base_path else None
        plan = decode_plan(plan_doc, plan_path)
        model = decode_model(model_doc, model_path)
        if base_path:
            base = _check_base(base_doc, base_path, "")
        else:
            base = plan.meta
        meta, warnings = freeze(plan, model, base, plan_path, options, model_path)
    except OracleError as exc:
        return 1, b"", [exc.render()]
    return 0, encode_meta(meta), warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--base")
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--allow-empty", action="store_true")
    args = parser.parse_args(argv)
    if [args.plan, args.model, args.base].count("-") > 1:
        parser.error("at most one input may be '-'")
    options = Options(verify=not args.no_verify, strict=args.strict,
                      allow_empty=args.allow_empty)
    try:
        code, out, lines = run(args.plan, args.model, args.base, options)
    except OSError as exc:
        print(f"freeze_oracle: error: {exc}", file=sys.stderr)
        return 2
    for line in lines:
        print(line, file=sys.stderr)
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    return code


sys.setrecursionlimit(20000)

if __name__ == "__main__":
    sys.exit(main())
