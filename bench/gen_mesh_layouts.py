#!/usr/bin/env python3
"""Writes two aoa-layout specs of one fixed MoE model (DeepSeek-like, small:
LAYERS layers of fused QKV, attention output, a norm, a router and stacked
experts; embeddings and lm_head) on a data x pipeline x expert x tensor
parallel mesh of RANKS processes, for bench/plan_growth.sh.

The model does not change with RANKS: the mesh's data-parallel axis does
(dp = RANKS / (pp * ep * tp)), so every rank holds the same share of the
model at every world size and the shard count grows with RANKS.

Usage: gen_mesh_layouts.py OUT_DIR --ranks N [--layers N]
           [--src-mesh PP,EP,TP] [--dst-mesh PP,EP,TP]
Writes OUT_DIR/src.spec.json and OUT_DIR/dst.spec.json."""
import argparse
import json
import os

HIDDEN, EXPERT_FFN, EXPERTS, VOCAB = 2048, 1024, 64, 32768


def model_tensors(layers):
    """(key, dtype, global shape, dims_mapping, layer or None, where)."""
    out = [("model.embed_tokens.weight", "bfloat16", [VOCAB, HIDDEN],
            ["tp", -1], None, "first")]
    for layer in range(layers):
        p = "model.layers.%d." % layer
        out += [
            (p + "input_layernorm.weight", "float32", [HIDDEN], [-1], layer, None),
            (p + "self_attn.qkv_proj.weight", "bfloat16", [3 * HIDDEN, HIDDEN],
             ["tp", -1], layer, None),
            (p + "self_attn.o_proj.weight", "bfloat16", [HIDDEN, HIDDEN],
             [-1, "tp"], layer, None),
            (p + "mlp.gate.weight", "float32", [EXPERTS, HIDDEN], [-1, -1], layer, None),
            (p + "mlp.experts.gate_up_proj", "bfloat16",
             [EXPERTS, 2 * EXPERT_FFN, HIDDEN], ["ep", "tp", -1], layer, None),
            (p + "mlp.experts.down_proj", "bfloat16", [EXPERTS, HIDDEN, EXPERT_FFN],
             ["ep", -1, "tp"], layer, None),
        ]
    out += [("model.norm.weight", "float32", [HIDDEN], [-1], None, "last"),
            ("lm_head.weight", "bfloat16", [VOCAB, HIDDEN], ["tp", -1], None, "last")]
    return out


def spec(ranks, layers, pp, ep, tp):
    group = pp * ep * tp
    if ranks % group:
        raise SystemExit("--ranks %d is not a multiple of pp*ep*tp = %d" % (ranks, group))
    tensors = {}
    for key, dtype, shape, mapping, layer, where in model_tensors(layers):
        # Layers split evenly into contiguous stages (numpy's array_split).
        stage = where if layer is None else layer * pp // layers
        tensors[key] = {"dtype": dtype, "global_shape": shape,
                        "dims_mapping": mapping, "select": {"pp": stage}}
    return {"format": "aoa-layout", "version": 1,
            "mesh": {"shape": [ranks // group, pp, ep, tp],
                     "dim_names": ["dp", "pp", "ep", "tp"]},
            "file_pattern": "rank{rank:05d}.safetensors",
            "tensors": tensors}


def mesh(text):
    pp, ep, tp = (int(v) for v in text.split(","))
    return pp, ep, tp


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--src-mesh", type=mesh, default=(2, 2, 2),
                        help="PP,EP,TP of the source (default 2,2,2)")
    parser.add_argument("--dst-mesh", type=mesh, default=(4, 2, 1),
                        help="PP,EP,TP of the destination (default 4,2,1)")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name, (pp, ep, tp) in (("src", args.src_mesh), ("dst", args.dst_mesh)):
        with open(os.path.join(args.out_dir, name + ".spec.json"), "w") as f:
            json.dump(spec(args.ranks, args.layers, pp, ep, tp), f, indent=1)


if __name__ == "__main__":
    main()
