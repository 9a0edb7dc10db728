#!/usr/bin/env python3
"""Writes a small Hugging Face-style Llama-like model directory, with the
Python standard library only (no torch, numpy or safetensors): config.json,
generation_config.json, tokenizer files, bfloat16 weights in several
model-0000K-of-0000N.safetensors shards (greedy packing in key order, as
huggingface_hub does, so layers may straddle files) and
model.safetensors.index.json. The files are written the way the official
libraries write them; aoa's own code is not used, so the directory is an
independent input for aoa-scan / aoa-convert.

  make-hf-model.py DIR [--layers N] [--hidden H] [--heads Q] [--kv-heads K]
                   [--intermediate I] [--vocab V] [--shard-size BYTES] [--seed S]
"""
import argparse
import json
import os
import random
import struct


def bf16_values(count, rng):
    # Exactly representable bfloat16 values k/128 in [-1, 1): no rounding
    # anywhere, so every conversion must give back the same bits.
    out = bytearray(2 * count)
    for i in range(count):
        value = rng.randrange(-128, 128) / 128.0
        (bits,) = struct.unpack("<I", struct.pack("<f", value))
        struct.pack_into("<H", out, 2 * i, bits >> 16)
    return bytes(out)


def tensors(a):
    head_dim = a.hidden // a.heads
    shapes = [("model.embed_tokens.weight", [a.vocab, a.hidden])]
    for layer in range(a.layers):
        p = "model.layers.%d." % layer
        shapes += [
            (p + "input_layernorm.weight", [a.hidden]),
            (p + "self_attn.q_proj.weight", [a.heads * head_dim, a.hidden]),
            (p + "self_attn.k_proj.weight", [a.kv_heads * head_dim, a.hidden]),
            (p + "self_attn.v_proj.weight", [a.kv_heads * head_dim, a.hidden]),
            (p + "self_attn.o_proj.weight", [a.hidden, a.heads * head_dim]),
            (p + "post_attention_layernorm.weight", [a.hidden]),
            (p + "mlp.gate_proj.weight", [a.intermediate, a.hidden]),
            (p + "mlp.up_proj.weight", [a.intermediate, a.hidden]),
            (p + "mlp.down_proj.weight", [a.hidden, a.intermediate]),
        ]
    shapes += [("model.norm.weight", [a.hidden]),
               ("lm_head.weight", [a.vocab, a.hidden])]
    return shapes


def write_safetensors(path, entries):
    # The official writer: sorted by dtype alignment (all BF16 here), then
    # name; packed; header padded with spaces to a multiple of 8.
    entries = sorted(entries, key=lambda e: e[0])
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape, data in entries:
        header[name] = {"dtype": "BF16", "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, _, data in entries:
            f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--intermediate", type=int, default=512)
    ap.add_argument("--vocab", type=int, default=1024)
    ap.add_argument("--shard-size", type=int, default=1000000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    rng = random.Random(a.seed)

    # Greedy packing in key order (huggingface_hub split_state_dict_into_shards).
    shards, current, size = [], [], 0
    for name, shape in tensors(a):
        count = 1
        for extent in shape:
            count *= extent
        data = bf16_values(count, rng)
        if current and size + len(data) > a.shard_size:
            shards.append(current)
            current, size = [], 0
        current.append((name, shape, data))
        size += len(data)
    shards.append(current)

    weight_map, total = {}, 0
    for k, entries in enumerate(shards, 1):
        file = "model-%05d-of-%05d.safetensors" % (k, len(shards))
        write_safetensors(os.path.join(a.dir, file), entries)
        for name, _, data in entries:
            weight_map[name] = file
            total += len(data)
    with open(os.path.join(a.dir, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map},
                           indent=2, sort_keys=True) + "\n")
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": a.hidden, "intermediate_size": a.intermediate,
        "num_hidden_layers": a.layers, "num_attention_heads": a.heads,
        "num_key_value_heads": a.kv_heads, "vocab_size": a.vocab,
        "max_position_embeddings": 2048, "rms_norm_eps": 1e-05,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    }
    with open(os.path.join(a.dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(a.dir, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 1, "eos_token_id": 2}, f, indent=2)
        f.write("\n")
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    vocab.update({"tok%d" % i: i for i in range(3, a.vocab)})
    with open(os.path.join(a.dir, "tokenizer.json"), "w") as f:
        json.dump({"version": "1.0", "model": {"type": "BPE", "vocab": vocab, "merges": []}}, f)
    with open(os.path.join(a.dir, "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}, f, indent=2)
    print("wrote %s: %d tensors in %d files (%d bytes), config.json, tokenizer files"
          % (a.dir, len(weight_map), len(shards), total))


main()
