#!/usr/bin/env python3
"""Writes a Hugging Face-style sharded checkpoint directory of tiny tensors,
the input of the scan benchmark (bench/scan_bench.sh), with the standard
library only:

  gen_hf_directory.py DIR [--files N] [--tensors N] [--links]

DIR/model-0000K-of-0000N.safetensors hold the tensors (bfloat16 [8, 8],
128 bytes each, zeros) in order, an equal share per file;
DIR/model.safetensors.index.json is written as transformers writes it
(json.dumps(indent=2, sort_keys=True)); DIR/config.json and
DIR/tokenizer.json are small stand-ins. Tensor names look like a MoE
model's: model.layers.L.mlp.experts.E.{gate,up,down}_proj.weight. With
--links the files go to DIR/blobs/ and DIR/snapshot/ holds symbolic links to
them (../blobs/NAME), as a Hub cache does; scan DIR/snapshot then.
"""
import argparse
import json
import os
import struct

PROJECTIONS = ["gate_proj", "up_proj", "down_proj"]
EXPERTS_PER_LAYER = 64


def tensor_name(i):
    expert = i // len(PROJECTIONS)
    layer, expert = divmod(expert, EXPERTS_PER_LAYER)
    return "model.layers.%d.mlp.experts.%d.%s.weight" % (
        layer, expert, PROJECTIONS[i % len(PROJECTIONS)])


def write_safetensors(path, names):
    header, offset = {}, 0
    for name in names:
        header[name] = {"dtype": "BF16", "shape": [8, 8],
                        "data_offsets": [offset, offset + 128]}
        offset += 128
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + bytes(offset))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory")
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--tensors", type=int, default=100000)
    parser.add_argument("--links", action="store_true")
    args = parser.parse_args()

    data_dir = os.path.join(args.directory, "blobs") if args.links else args.directory
    os.makedirs(data_dir, exist_ok=True)
    weight_map, total = {}, 0
    per_file = -(-args.tensors // args.files)
    names = [tensor_name(i) for i in range(args.tensors)]
    files = []
    for k in range(args.files):
        chunk = names[k * per_file:(k + 1) * per_file]
        name = "model-%05d-of-%05d.safetensors" % (k + 1, args.files)
        write_safetensors(os.path.join(data_dir, name), chunk)
        files.append(name)
        for tensor in chunk:
            weight_map[tensor] = name
        total += 128 * len(chunk)
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    others = {
        "model.safetensors.index.json": json.dumps(index, indent=2, sort_keys=True) + "\n",
        "config.json": json.dumps({"model_type": "bench", "num_hidden_layers":
                                   len(names) // (3 * EXPERTS_PER_LAYER) + 1}, indent=2) + "\n",
        "tokenizer.json": json.dumps({"version": "1.0", "model": {"type": "BPE"}}) + "\n",
    }
    for name, text in others.items():
        with open(os.path.join(data_dir, name), "w") as f:
            f.write(text)
        files.append(name)
    if args.links:
        snapshot = os.path.join(args.directory, "snapshot")
        os.makedirs(snapshot, exist_ok=True)
        for name in files:
            link = os.path.join(snapshot, name)
            if not os.path.lexists(link):
                os.symlink(os.path.join("..", "blobs", name), link)
    print("%s: %d files, %d tensors, %d bytes of tensor data" % (
        args.directory, args.files, len(names), total))


if __name__ == "__main__":
    main()
