"""Rewrites a safetensors file in place, keeping its header length and size.

  rewrite_safetensors.py FILE            the tensors' data in reverse order
                                         (same values, other data_offsets)
  rewrite_safetensors.py FILE NAME=AxB   tensor NAME's shape becomes [A, B]
                                         (same bytes, other shape)
"""
import json
import struct
import sys

path = sys.argv[1]
with open(path, "rb") as f:
    blob = f.read()
(length,) = struct.unpack("<Q", blob[:8])
header = json.loads(blob[8:8 + length])
data = blob[8 + length:]
if len(sys.argv) > 2:
    name, shape = sys.argv[2].split("=")
    header[name]["shape"] = [int(d) for d in shape.split("x")]
else:
    names = sorted((k for k in header if k != "__metadata__"),
                   key=lambda k: header[k]["data_offsets"][0], reverse=True)
    moved = b""
    for name in names:
        begin, end = header[name]["data_offsets"]
        header[name]["data_offsets"] = [len(moved), len(moved) + end - begin]
        moved += data[begin:end]
    data = moved + data[len(moved):]
text = json.dumps(header, separators=(",", ":")).encode()
if len(text) > length:
    sys.exit("the rewritten header is longer than the original")
with open(path, "wb") as f:
    f.write(struct.pack("<Q", length) + text + b" " * (length - len(text)) +
            data)
