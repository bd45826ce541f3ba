"""Look-alikes of hyper_parallel's placements, mesh axis names, Target and ShardingPlan."""
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional


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
    TP = "tp"
    CP = "cp"
    EP = "ep"
    DP = "dp"


class Target:
    """Hydra-style reference to a callable plus its keyword arguments."""

    def __init__(self, target, **kwargs):
        self.target = target
        self.kwargs = kwargs

    def to_dict(self):
        return {"_target_": self.target, **self.kwargs}


@dataclass
class ModuleShardingSpec:
    params: Optional[dict] = None
    in_src: Optional[dict] = None
    in_dst: Optional[dict] = None
    out_src: Optional[dict] = None
    out_dst: Optional[dict] = None
    out_names: Optional[list] = None
    tp_divide_attrs: Optional[list] = None
    is_boundary: Optional[bool] = None
    region_dispatch: Optional[str] = None
    inner_wrapper: Any = None
    inner_target: Optional[str] = None
    inner_out_src: Any = None
    local_compute_fn: Any = None
    # Filled in by the planner after construction, as upstream does.
    _deferred_bias_params: Optional[list] = field(default=None, init=False)
    _ep_stack: Optional[dict] = field(default=None, init=False)
    _ep_size: Optional[int] = field(default=None, init=False)
    _tp_local_attr_plan: Optional[dict] = field(default=None, init=False)
    _is_terminal: Optional[bool] = field(default=None, init=False)
    _needs_cp_attn: Optional[bool] = field(default=None, init=False)
    _resolved_inner_wrapper: Any = field(default=None, init=False)
    _resolved_inner_target: Any = field(default=None, init=False)
    _head_count_owner: Optional[str] = field(default=None, init=False)


@dataclass
class ShardingPlan:
    modules: dict = field(default_factory=dict)
    tied_pairs: list = field(default_factory=list)
    special_handlers: dict = field(default_factory=dict)
    mesh_dim_names: tuple = ()
    sequence_parallel: bool = False
    loss_parallel: bool = False
