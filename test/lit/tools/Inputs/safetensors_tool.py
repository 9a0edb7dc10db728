#!/usr/bin/env python3
"""Reads, writes and damages safetensors files for the checkpoint tool tests,
with the standard library only (no numpy, no safetensors package).

  safetensors_tool.py dump FILE [NAME ...]
      prints `NAME DTYPE [SHAPE]: v0 v1 ...` per tensor (all, or the NAMEs),
      in header order; values in decimal (%g), bools as 0/1
  safetensors_tool.py write FILE SPEC.json
      SPEC = {NAME: {"dtype": "F32", "shape": [2, 4], "values": [..] | "iota"}}
      writes the tensors in SPEC order (iota: element i is i)
  safetensors_tool.py flip FILE NAME INDEX [MASK]
      XORs MASK (default 1) into the lowest byte of element INDEX (row-major)
      of tensor NAME
  safetensors_tool.py truncate FILE BYTES
      removes the last BYTES bytes of the file
"""
import json
import os
import struct
import sys

FORMATS = {"F64": "d", "F32": "f", "F16": "e", "I64": "q", "I32": "i",
           "I16": "h", "I8": "b", "U8": "B", "BOOL": "?"}
SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4,
         "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}


def read_header(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    header.pop("__metadata__", None)
    return 8 + length, header


def decode(dtype, data):
    count = len(data) // SIZES[dtype]
    if dtype == "BF16":
        halves = struct.unpack("<%dH" % count, data)
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0]
                for h in halves]
    values = struct.unpack("<%d%s" % (count, FORMATS[dtype]), data)
    return [int(v) if dtype == "BOOL" else v for v in values]


def encode(dtype, values):
    if dtype == "BF16":
        out = b""
        for v in values:
            (bits,) = struct.unpack("<I", struct.pack("<f", v))
            out += struct.pack("<H", bits >> 16)  # exact for iota up to 256
        return out
    if dtype in ("F64", "F32", "F16"):
        values = [float(v) for v in values]
    elif dtype == "BOOL":
        values = [bool(v) for v in values]
    return struct.pack("<%d%s" % (len(values), FORMATS[dtype]), *values)


def dump(path, names):
    data_start, header = read_header(path)
    with open(path, "rb") as f:
        blob = f.read()
    for name, entry in header.items():
        if names and name not in names:
            continue
        begin, end = entry["data_offsets"]
        values = decode(entry["dtype"],
                        blob[data_start + begin:data_start + end])
        print("%s %s %s: %s" % (name, entry["dtype"], entry["shape"],
                                " ".join("%g" % v for v in values)))


def write(path, spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    header, data = {}, b""
    for name, tensor in spec.items():
        count = 1
        for extent in tensor["shape"]:
            count *= extent
        values = tensor["values"]
        if values == "iota":
            values = list(range(count))
        if len(values) != count:
            sys.exit("%s: %d values for shape %s" % (name, len(values),
                                                     tensor["shape"]))
        blob = encode(tensor["dtype"], values)
        header[name] = {"dtype": tensor["dtype"], "shape": tensor["shape"],
                        "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def flip(path, name, index, mask):
    data_start, header = read_header(path)
    entry = header[name]
    offset = data_start + entry["data_offsets"][0] + index * SIZES[entry["dtype"]]
    if offset >= data_start + entry["data_offsets"][1]:
        sys.exit("%s: element %d is past the end of %s" % (path, index, name))
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([byte ^ mask]))


def main(argv):
    command = argv[1]
    if command == "dump":
        dump(argv[2], argv[3:])
    elif command == "write":
        write(argv[2], argv[3])
    elif command == "flip":
        flip(argv[2], argv[3], int(argv[4]),
             int(argv[5], 0) if len(argv) > 5 else 1)
    elif command == "truncate":
        size = os.path.getsize(argv[2])
        os.truncate(argv[2], size - int(argv[3]))
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main(sys.argv)
