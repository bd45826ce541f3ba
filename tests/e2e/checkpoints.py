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
