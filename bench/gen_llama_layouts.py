#!/usr/bin/env python3
"""Writes aoa-layout specs for the run benchmark: a Llama-like model of
LAYERS layers (hidden 4096, intermediate 11008, fused QKV and gate/up, bf16),
tensor parallel TP ways, one file per rank. With the defaults the model
holds 4.04 GB (3.76 GiB) of weights.

Usage: gen_llama_layouts.py OUT_DIR [--layers N] [--tp N ...]
Writes OUT_DIR/llama_tpN.spec.json for each --tp."""
import argparse
import json
import os

HIDDEN, INTERMEDIATE = 4096, 11008


def spec(layers, tp, transposed_down, o_proj_dtype="bfloat16"):
    tensors = {}
    for layer in range(layers):
        p = "model.layers.%d." % layer
        tensors[p + "self_attn.qkv_proj.weight"] = ([HIDDEN, 3 * HIDDEN], [-1, "mp"])
        tensors[p + "self_attn.o_proj.weight"] = ([HIDDEN, HIDDEN], ["mp", -1])
        tensors[p + "mlp.gate_up_fused_proj.weight"] = ([HIDDEN, 2 * INTERMEDIATE], [-1, "mp"])
        if transposed_down:
            tensors[p + "mlp.down_proj_t.weight"] = ([HIDDEN, INTERMEDIATE], [-1, "mp"])
        else:
            tensors[p + "mlp.down_proj.weight"] = ([INTERMEDIATE, HIDDEN], ["mp", -1])
        tensors[p + "input_layernorm.weight"] = ([HIDDEN], [-1])
    return {
        "format": "aoa-layout", "version": 1,
        "mesh": {"shape": [tp], "dim_names": ["mp"]},
        "file_pattern": "model_tp%d_rank{rank:02d}.safetensors" % tp,
        "tensors": {k: {"dtype": (o_proj_dtype if "o_proj" in k else "bfloat16")
                                 if len(s) == 2 else "float32",
                        "global_shape": s, "dims_mapping": m}
                    for k, (s, m) in tensors.items()},
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--layers", type=int, default=10)
    parser.add_argument("--tp", type=int, action="append", default=[])
    parser.add_argument("--transposed-down", action="store_true",
                        help="name the down projection down_proj_t, stored transposed")
    parser.add_argument("--o-proj-dtype", default="bfloat16",
                        help="the attention output projections' dtype (the transform "
                             "benchmark's destination casts them to float16)")
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    suffix = "_t" if args.transposed_down else ""
    for tp in args.tp or [2, 4]:
        path = os.path.join(args.out_dir, "llama_tp%d%s.spec.json" % (tp, suffix))
        with open(path, "w") as f:
            json.dump(spec(args.layers, tp, args.transposed_down, args.o_proj_dtype),
                      f, indent=1)


if __name__ == "__main__":
    main()
