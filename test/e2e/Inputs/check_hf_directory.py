#!/usr/bin/env python3
"""Checks a Hugging Face model directory against the rules loaders rely on,
with the standard library only:

  check_hf_directory.py DIR

- model.safetensors.index.json (when present) is exactly what transformers'
  save_pretrained writes (json.dumps(index, indent=2, sort_keys=True) + "\\n"),
  its weight_map names every tensor of every model-*.safetensors file once
  and nothing else, and metadata.total_size is the sum of the tensors' bytes;
- every safetensors file has __metadata__ {"format": "pt"};
- the files are model.safetensors alone, or model-0000K-of-0000N.safetensors
  for K = 1..N.
Prints one line per file and the totals; exits 1 with a message otherwise.
"""
import json
import os
import re
import struct
import sys

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4,
         "I16": 2, "I8": 1, "U8": 1, "BOOL": 1, "U16": 2, "U32": 4, "U64": 8,
         "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1}


def fail(message):
    print("check_hf_directory: " + message, file=sys.stderr)
    sys.exit(1)


def header(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(length))


def main():
    directory = sys.argv[1]
    names = sorted(n for n in os.listdir(directory) if n.endswith(".safetensors"))
    if names == ["model.safetensors"]:
        count = 1
    else:
        count = len(names)
        want = ["model-%05d-of-%05d.safetensors" % (k, count) for k in range(1, count + 1)]
        if names != want:
            fail("files %s, expected %s" % (names, want))
    tensors = {}
    total = 0
    for name in names:
        h = header(os.path.join(directory, name))
        if h.get("__metadata__") != {"format": "pt"}:
            fail("%s: __metadata__ is %r" % (name, h.get("__metadata__")))
        h.pop("__metadata__")
        size = 0
        for key, entry in h.items():
            if key in tensors:
                fail("tensor %r is in %s and %s" % (key, tensors[key], name))
            tensors[key] = name
            elements = 1
            for extent in entry["shape"]:
                elements *= extent
            size += elements * SIZES[entry["dtype"]]
        total += size
        print("%s: %d tensors, %d bytes" % (name, len(h), size))
    index_path = os.path.join(directory, "model.safetensors.index.json")
    if count == 1:
        if os.path.exists(index_path):
            fail("one file, but an index exists")
    else:
        with open(index_path, encoding="utf-8") as f:
            text = f.read()
        index = json.loads(text)
        if json.dumps(index, indent=2, sort_keys=True) + "\n" != text:
            fail("the index is not formatted as save_pretrained writes it")
        if index["weight_map"] != tensors:
            fail("weight_map %r differs from the files' tensors %r" % (index["weight_map"], tensors))
        if index["metadata"]["total_size"] != total:
            fail("total_size %r, but the tensors hold %d bytes" % (index["metadata"]["total_size"], total))
        print("index: %d keys, total_size %d" % (len(tensors), total))


main()
