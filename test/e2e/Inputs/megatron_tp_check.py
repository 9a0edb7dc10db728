#!/usr/bin/env python3
"""Checks a fused tensor-parallel checkpoint against Megatron-style
tensor parallelism, from first principles (not from AOA's semantics): what
each rank must hold of a Hugging Face Llama model whose q/k/v are fused into
self_attn.qkv_proj and gate/up into mlp.gate_up_proj (Linear weights
[out, in]).

  megatron_tp_check.py SRC_DIR DST_DIR --tp N --heads H --kv-heads G

SRC_DIR holds the HF checkpoint (any layout: it is assembled whole), DST_DIR
the converted one. Rank r must store, as its shard of:
  qkv_proj        for each KV group g it owns (G/N consecutive groups): the
                  rows of query heads g*H/G .. (g+1)*H/G-1, then key head g,
                  then value head g (column-parallel, whole groups)
  gate_up_proj    gate rows r*I/N .. (r+1)*I/N-1, then the same up rows
  o_proj, down_proj   columns r*C/N .. (r+1)*C/N-1 (row-parallel)
  embed_tokens, lm_head   rows r*V/N .. (r+1)*V/N-1 (vocab-parallel)
  norms           the whole vector
Prints one line per checked key kind and exits 1 at the first difference.
"""
import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expected_checkpoint as ec  # noqa: E402


def rows(t, begin, end):
    width = ec.volume(t.shape[1:])
    return t.data[begin * width:end * width]


def cols(t, begin, end):
    out = []
    for r in range(t.shape[0]):
        out += t.data[r * t.shape[1] + begin:r * t.shape[1] + end]
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--tp", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--kv-heads", type=int, required=True)
    a = p.parse_args()
    src = ec.load_checkpoint(a.src)
    meta = json.load(open(os.path.join(a.dst, "metadata.json")))
    files = {}
    n, H, G = a.tp, a.heads, a.kv_heads
    checked = {}

    def expected(key, rank):
        m = re.match(r"model\.layers\.(\d+)\.(.*)$", key)
        if m:
            pre, rest = "model.layers.%s." % m.group(1), m.group(2)
            if rest == "self_attn.qkv_proj.weight":
                q, k, v = (src[pre + "self_attn.%s_proj.weight" % x] for x in "qkv")
                d = q.shape[0] // H
                out = []
                for g in range(rank * G // n, (rank + 1) * G // n):
                    per = H // G
                    out += rows(q, g * per * d, (g + 1) * per * d)
                    out += rows(k, g * d, (g + 1) * d)
                    out += rows(v, g * d, (g + 1) * d)
                return "column-parallel fused qkv", out
            if rest == "mlp.gate_up_proj.weight":
                gate, up = src[pre + "mlp.gate_proj.weight"], src[pre + "mlp.up_proj.weight"]
                i = gate.shape[0] // n
                return "column-parallel fused gate/up", (
                    rows(gate, rank * i, (rank + 1) * i) + rows(up, rank * i, (rank + 1) * i))
            if rest in ("self_attn.o_proj.weight", "mlp.down_proj.weight"):
                t = src[key]
                c = t.shape[1] // n
                return "row-parallel", cols(t, rank * c, (rank + 1) * c)
            if rest.endswith("layernorm.weight"):
                return "replicated", src[key].data
        if key in ("model.embed_tokens.weight", "lm_head.weight"):
            t = src[key]
            v = t.shape[0] // n
            return "vocab-parallel", rows(t, rank * v, (rank + 1) * v)
        if key == "model.norm.weight":
            return "replicated", src[key].data
        ec.fail("%s: not a key of a fused Llama checkpoint" % key)

    for key, info in meta["tensors"].items():
        ranks = sorted(s["rank"] for s in info["shards"])
        if ranks != list(range(n)):
            ec.fail("%s: stored by ranks %s, not one shard on each of 0..%d" % (key, ranks, n - 1))
        for s in info["shards"]:
            if s["file"] not in files:
                files[s["file"]] = ec.read_safetensors(os.path.join(a.dst, s["file"]))
            stored = files[s["file"]][s["name"]][2]
            kind, want = expected(key, s["rank"])
            if stored != want:
                ec.fail("%s: rank %d does not hold its Megatron %s shard" % (key, s["rank"], kind))
            checked[kind] = checked.get(kind, 0) + 1
    for kind in sorted(checked):
        print("megatron: %s: %d shards hold what they must" % (kind, checked[kind]))


if __name__ == "__main__":
    try:
        main()
    except ec.OracleError as e:
        print("megatron_tp_check.py: error: %s" % e, file=sys.stderr)
        sys.exit(1)
