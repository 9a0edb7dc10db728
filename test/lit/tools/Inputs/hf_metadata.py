#!/usr/bin/env python3
"""Writes aoa-metadata v1 for a small Hugging Face-style model, every key
whole on rank 0 in one file (the key list aoa-layout --src places).

  hf_metadata.py dense --layers 4 [--hidden 8 --heads 4 --kv-heads 2 ...]
  hf_metadata.py moe --layers 2 --experts 4 --dense-layers 1 [...]

dense: Llama/Qwen2 names (self_attn.{q,k,v,o}_proj, mlp.{gate,up,down}_proj,
input/post_attention layernorms, model.norm, embed_tokens, lm_head), Linear
weights [out, in]. moe: the same attention, and per layer after the first
--dense-layers a router (mlp.gate.weight [E, hidden]), experts
mlp.experts.E.{gate,up,down}_proj and mlp.shared_experts.{gate,up,down}_proj
(DeepSeek/Qwen-MoE names).
"""
import argparse
import json
import sys


def tensor(key, shape, dtype):
    return key, {"dtype": dtype, "global_shape": list(shape), "shards": [
        {"rank": 0, "file": "model.safetensors", "name": key,
         "global_offset": [0] * len(shape), "local_shape": list(shape)}]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["dense", "moe"])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=8)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--kv-heads", type=int, default=4)
    parser.add_argument("--head-dim", type=int, default=2)
    parser.add_argument("--intermediate", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=16)
    parser.add_argument("--experts", type=int, default=4)
    parser.add_argument("--moe-intermediate", type=int, default=4)
    parser.add_argument("--dense-layers", type=int, default=1)
    parser.add_argument("--qkv-bias", action="store_true")
    parser.add_argument("--tied", action="store_true", help="no lm_head")
    parser.add_argument("--dtype", default="bfloat16")
    args = parser.parse_args()

    h, d = args.hidden, args.head_dim
    q, kv = args.heads * d, args.kv_heads * d
    keys = [tensor("model.embed_tokens.weight", [args.vocab, h], args.dtype)]
    for layer in range(args.layers):
        p = "model.layers.%d." % layer
        keys.append(tensor(p + "input_layernorm.weight", [h], args.dtype))
        for name, rows in (("q", q), ("k", kv), ("v", kv)):
            keys.append(tensor(p + "self_attn.%s_proj.weight" % name, [rows, h], args.dtype))
            if args.qkv_bias:
                keys.append(tensor(p + "self_attn.%s_proj.bias" % name, [rows], args.dtype))
        keys.append(tensor(p + "self_attn.o_proj.weight", [h, q], args.dtype))
        keys.append(tensor(p + "post_attention_layernorm.weight", [h], args.dtype))
        if args.kind == "dense" or layer < args.dense_layers:
            i = args.intermediate
            keys.append(tensor(p + "mlp.gate_proj.weight", [i, h], args.dtype))
            keys.append(tensor(p + "mlp.up_proj.weight", [i, h], args.dtype))
            keys.append(tensor(p + "mlp.down_proj.weight", [h, i], args.dtype))
            continue
        i = args.moe_intermediate
        keys.append(tensor(p + "mlp.gate.weight", [args.experts, h], args.dtype))
        for e in range(args.experts):
            x = p + "mlp.experts.%d." % e
            keys.append(tensor(x + "gate_proj.weight", [i, h], args.dtype))
            keys.append(tensor(x + "up_proj.weight", [i, h], args.dtype))
            keys.append(tensor(x + "down_proj.weight", [h, i], args.dtype))
        for name, shape in (("gate", [i, h]), ("up", [i, h]), ("down", [h, i])):
            keys.append(tensor(p + "mlp.shared_experts.%s_proj.weight" % name, shape, args.dtype))
    keys.append(tensor("model.norm.weight", [h], args.dtype))
    if not args.tied:
        keys.append(tensor("lm_head.weight", [args.vocab, h], args.dtype))

    out = sys.stdout
    out.write('{"format": "aoa-metadata", "version": 1, "tensors": {\n')
    out.write(",\n".join(json.dumps(k) + ": " + json.dumps(v) for k, v in keys))
    out.write("}}\n")


if __name__ == "__main__":
    main()
