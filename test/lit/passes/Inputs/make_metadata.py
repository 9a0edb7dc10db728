#!/usr/bin/env python3
"""Writes aoa-metadata v1 for the lit tests: a tensor-parallel layout of a
small Llama-like or ERNIE-like model, or explicit tensors.

  make_metadata.py llama --layers 4 --tp 2
  make_metadata.py ernie --layers 4 --tp 1
  make_metadata.py tensors NAME:DTYPE:D0xD1[:AXIS:PARTS] ...

AXIS and PARTS may be comma lists (a grid: `0,1:2,2` is 2 x 2 shards, one
per rank, row-major), and PARTS of one axis may list the sizes of uneven
shards joined by '+' (`0:4+6`).
"""
import argparse
import itertools
import json
import sys

STATES = [".w_0", ".moment1_0", ".moment2_0"]
BETA = [".beta1_pow_acc_0", ".beta2_pow_acc_0"]


def sharded(key, dtype, shape, axis, parts):
    """A tensor split evenly into `parts` shards along `axis`, shard r on rank r."""
    shards = []
    for r in range(parts):
        offset = [0] * len(shape)
        local = list(shape)
        if axis is not None:
            local[axis] = shape[axis] // parts
            offset[axis] = r * local[axis]
        shards.append({"rank": r, "file": "rank%05d.safetensors" % r,
                       "name": key, "global_offset": offset, "local_shape": local})
    return {"dtype": dtype, "global_shape": list(shape), "shards": shards}


def with_states(tensors, key, dtype, shape, axis, parts):
    tensors[key] = sharded(key, dtype, shape, axis, parts)
    for s in STATES:
        tensors[key + s] = sharded(key + s, "float32", shape, axis, parts)
    for s in BETA:
        tensors[key + s] = sharded(key + s, "float32", [1], None, parts)


def llama(layers, tp, hidden=8, inter=8):
    tensors = {}
    for i in range(layers):
        p = "llama.layers.%d." % i
        with_states(tensors, p + "mlp.gate_up_fused_proj.weight", "bfloat16",
                    [hidden, 2 * inter], 1, tp)
        with_states(tensors, p + "mlp.down_proj.weight", "bfloat16", [inter, hidden], 0, tp)
        tensors[p + "input_layernorm.weight"] = sharded(
            p + "input_layernorm.weight", "float32", [hidden], None, tp)
    return tensors


def ernie(layers, tp, heads=20, kv=5, head_dim=2, hidden=10, inter=10):
    tensors = {}
    qkv = [hidden, (heads + 2 * kv) * head_dim]
    for prefix, count in (("ernie.layers.%d.", layers), ("ernie.mtp_block.%d.", 1)):
        for i in range(count):
            p = prefix % i
            for s in [""] + STATES:
                key = p + "self_attn.qkv_proj.weight" + s
                tensors[key] = sharded(key, "bfloat16" if not s else "float32", qkv, 1, tp)
                key = p + "mlp.up_gate_proj.weight" + s
                tensors[key] = sharded(key, "bfloat16" if not s else "float32",
                                       [hidden, 2 * inter], 1, tp)
    for s in [""] + STATES:
        key = "ernie.layers.1.mlp.shared_experts.up_gate_proj.weight" + s
        tensors[key] = sharded(key, "bfloat16" if not s else "float32",
                               [hidden, 2 * inter], 1, tp)
    return tensors


def grid(key, dtype, shape, axes, parts):
    """Shards cut along every axis of `axes`; parts[i] is a count of equal
    shards or a list of sizes. Shard r (row-major over the grid) on rank r."""
    cuts = []
    for axis, p in zip(axes, parts):
        sizes = p if isinstance(p, list) else [shape[axis] // p] * p
        offsets = [sum(sizes[:i]) for i in range(len(sizes))]
        cuts.append(list(zip(offsets, sizes)))
    shards = []
    for r, cell in enumerate(itertools.product(*cuts)):
        offset, local = [0] * len(shape), list(shape)
        for axis, (o, n) in zip(axes, cell):
            offset[axis], local[axis] = o, n
        shards.append({"rank": r, "file": "rank%05d.safetensors" % r,
                       "name": key, "global_offset": offset, "local_shape": local})
    return {"dtype": dtype, "global_shape": list(shape), "shards": shards}


def explicit(specs):
    tensors = {}
    for spec in specs:
        parts = spec.split(":")
        key, dtype, shape = parts[0], parts[1], [int(d) for d in parts[2].split("x")]
        if len(parts) > 4 and ("," in parts[3] or "+" in parts[4]):
            axes = [int(a) for a in parts[3].split(",")]
            counts = [[int(n) for n in p.split("+")] if "+" in p else int(p)
                      for p in parts[4].split(",")]
            tensors[key] = grid(key, dtype, shape, axes, counts)
            continue
        axis = int(parts[3]) if len(parts) > 3 else None
        count = int(parts[4]) if len(parts) > 4 else 1
        tensors[key] = sharded(key, dtype, shape, axis, count)
    return tensors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model", choices=["llama", "ernie", "tensors"])
    parser.add_argument("specs", nargs="*")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--tp", type=int, default=1)
    args = parser.parse_args()
    if args.model == "llama":
        tensors = llama(args.layers, args.tp)
    elif args.model == "ernie":
        tensors = ernie(args.layers, args.tp)
    else:
        tensors = explicit(args.specs)
    json.dump({"format": "aoa-metadata", "version": 1, "tensors": tensors},
              sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
