"""Small safetensors files and sharded indexes for the tests, made here (nothing is
downloaded). The tensor data are never written: each file is truncated to its full size,
so a checkpoint of hundreds of GB is a sparse file of a few KB on disk."""

import json
import os
import struct

ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "U16": 2, "I32": 4, "U32": 4, "I64": 8,
            "U64": 8, "F16": 2, "BF16": 2, "F32": 4, "F64": 8, "C64": 8, "F8_E4M3": 1,
            "F8_E5M2": 1, "F8_E8M0": 1}


def header_of(tensors, metadata=None):
    """The header object: name -> {dtype, shape, data_offsets}, laid out back to back in
    the order given. `tensors` maps a name to (dtype, shape)."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    for name, (dtype, shape) in tensors.items():
        n = ITEMSIZE.get(dtype, 1)
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    return header, offset


def write_raw(path, header_text, data_size, length=None):
    """An 8-byte little-endian length (len(header_text) unless given), the header bytes,
    then `data_size` bytes of data as a hole."""
    raw = header_text.encode() if isinstance(header_text, str) else header_text
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw) if length is None else length))
        f.write(raw)
        f.truncate(8 + len(raw) + data_size)
    return path


def write_safetensors(path, tensors, metadata=None):
    header, data_size = header_of(tensors, metadata)
    return write_raw(path, json.dumps(header), data_size)


def write_sharded(directory, shards, index_name="model.safetensors.index.json"):
    """`shards` maps a shard file name to its tensors; writes every shard and the index,
    whose weight_map names each tensor's shard. Returns the index's path."""
    os.makedirs(directory, exist_ok=True)
    weight_map = {}
    total = 0
    for shard, tensors in shards.items():
        write_safetensors(os.path.join(directory, shard), tensors)
        for name in tensors:
            weight_map[name] = shard
        total += header_of(tensors)[1]
    index = os.path.join(directory, index_name)
    with open(index, "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    return index


def llama_2_7b_shapes():
    """Llama-2-7B's tensors (vocabulary 32000, hidden 4096, 32 layers, MLP 11008; 6,738,415,616
    elements) by name, in the order its modules register them."""
    h, i, v = 4096, 11008, 32000
    shapes = {"model.embed_tokens.weight": [v, h]}
    for n in range(32):
        p = f"model.layers.{n}."
        shapes.update({p + f"self_attn.{x}_proj.weight": [h, h] for x in "qkvo"})
        shapes.update({p + "mlp.gate_proj.weight": [i, h], p + "mlp.up_proj.weight": [i, h],
                       p + "mlp.down_proj.weight": [h, i], p + "input_layernorm.weight": [h],
                       p + "post_attention_layernorm.weight": [h]})
    shapes.update({"model.norm.weight": [h], "lm_head.weight": [v, h]})
    return shapes
