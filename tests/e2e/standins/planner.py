"""Look-alikes of hyper_parallel's placements, mesh axis names, Target, the injection
decorators, ModuleShardingSpec and ShardingPlan.

Field names, order, defaults and value types follow upstream's classes
(hyper_parallel.distributed.recipe_spec.ModuleShardingSpec, distributed.plan.ShardingPlan,
distributed.tensor_parallel.head_count.TpLocalAttrPlan), so an exporter that handles these
handles what a real planner returns: dataclasses all the way down, a frozen dataclass in
_tp_local_attr_plan, a tuple in _deferred_bias_params, str-enum axis keys, and
inner_wrapper as a registry name, a decorated function or a Target.
"""
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Tuple, Union


class Placement:
    pass


class Shard(Placement):
    def __init__(self, dim, uneven_shard=False):
        self.dim = dim
        self.uneven_shard = uneven_shard


class StridedShard(Shard):
    # A subclass of Shard upstream too: dispatching on isinstance(Shard) would lose it.
    def __init__(self, dim, split_factor, uneven_shard=False):
        super().__init__(dim, uneven_shard)
        self.split_factor = split_factor


class RaggedShard(Shard):
    def __init__(self, dim, local_units):
        super().__init__(dim)
        self.local_units = local_units


class Replicate(Placement):
    pass


class Partial(Placement):
    def __init__(self, reduce_op="sum"):
        self.reduce_op = reduce_op


class MeshAxisName(str, Enum):
    """A str enum, as upstream's: equal to "tp" as a dict key, but str() is 'MeshAxisName.TP'."""
    TP = "tp"
    CP = "cp"
    EP = "ep"
    PP = "pp"
    DP = "dp"
    DP_REPLICATE = "dp_replicate"
    DP_SHARD = "dp_shard"
    DP_CP = "dp_cp"
    EP_SHARD = "ep_shard"


TP, CP, EP, DP = MeshAxisName.TP, MeshAxisName.CP, MeshAxisName.EP, MeshAxisName.DP


class Target:
    """Hydra-style reference to a callable plus its keyword arguments."""

    def __init__(self, target, **kwargs):
        self._target_path = target
        self.kwargs = kwargs

    def to_dict(self):
        return {"_target_": self._target_path, **self.kwargs}


@dataclass(frozen=True)
class InjectionMeta:
    kind: str
    context: frozenset


def _injection_decorator(kind, context):
    def decorate(fn):
        # Upstream checks the signature, stamps the function and returns it unchanged:
        # the decorated function keeps its own __name__.
        fn._injection_meta = InjectionMeta(kind, frozenset(context))
        return fn
    return decorate


inner_wrapper = _injection_decorator(
    "inner_wrapper", ("target_module", "mesh", "tp_mesh", "cp_mesh", "ep_mesh"))
local_compute = _injection_decorator("local_compute", ("mesh", "tp_mesh", "cp_mesh", "ep_mesh"))


@dataclass(frozen=True)
class TpLocalAttrPlan:
    """What the planner fills into _tp_local_attr_plan on TP boundaries."""
    auto_divide: Tuple[str, ...] = ()
    user_divide: Tuple[str, ...] = ()


NamedPlacement = Dict[MeshAxisName, Placement]


@dataclass
class ModuleShardingSpec:
    params: Optional[Dict[str, NamedPlacement]] = None
    in_src: Optional[Dict[str, NamedPlacement]] = None
    in_dst: Optional[Dict[str, NamedPlacement]] = None
    out_src: Optional[Dict[str, NamedPlacement]] = None
    out_dst: Optional[Dict[str, NamedPlacement]] = None
    out_names: Optional[List[str]] = None
    tp_divide_attrs: Optional[List[str]] = None
    # Filled in by the planner after construction, as upstream does.
    _tp_local_attr_plan: Optional[TpLocalAttrPlan] = field(
        default=None, init=False, repr=False, compare=False)
    _deferred_bias_params: Tuple[str, ...] = field(
        default=(), init=False, repr=False, compare=False)
    is_boundary: bool = True
    region_dispatch: Optional[bool] = None
    inner_target: Optional[str] = None
    # A registry name ("sdpa_hf"), an @inner_wrapper function, or a Target.
    inner_wrapper: Optional[Union[str, Callable]] = None
    # "first_input", a NamedPlacement, or {name: NamedPlacement}.
    inner_out_src: Optional[Union[str, Dict]] = None
    local_compute_fn: Optional[Callable] = None
    _is_terminal: bool = False
    _needs_cp_attn: bool = False
    _resolved_inner_wrapper: Optional[str] = None
    _resolved_inner_target: Optional[str] = None
    _head_count_owner: Optional[str] = None
    _ep_stack: Dict[str, List[str]] = field(default_factory=dict)
    _ep_size: int = 0


@dataclass
class ShardingPlan:
    modules: Dict[str, ModuleShardingSpec] = field(default_factory=dict)
    sequence_parallel: bool = True
    loss_parallel: bool = False
    special_handlers: Dict[str, str] = field(default_factory=dict)
    mesh_dim_names: Tuple[str, ...] = ()
    tied_pairs: List[Tuple[str, str]] = field(default_factory=list)


def parse_placement(text: str) -> Placement:
    """A canonical placement string as the live object upstream's parser returns."""
    if text == "R":
        return Replicate()
    kind, _, rest = text.partition("(")
    args = rest[:-1]
    if kind == "P":
        return Partial(args)
    numbers = [int(part) for part in args.split(",")]
    dim, uneven = numbers[0], numbers[0] < 0
    dim = -dim - 1 if uneven else dim
    if kind == "SS":
        return StridedShard(dim, numbers[1], uneven_shard=uneven)
    assert kind == "S", text
    return Shard(dim, uneven_shard=uneven)

