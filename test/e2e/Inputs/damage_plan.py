"""Writes a damaged copy of a binary plan (docs/plan-format.md, "Binary form").

damage_plan.py IN OUT --truncate N   the first N bytes
damage_plan.py IN OUT --flip I       byte I with its bits inverted
damage_plan.py IN OUT --version V    the header's version field set to V
damage_plan.py IN OUT --flip I --section S
                                     byte I of section S (5 + R: rank R's)
"""
import argparse
import struct

parser = argparse.ArgumentParser()
parser.add_argument("input")
parser.add_argument("output")
parser.add_argument("--truncate", type=int)
parser.add_argument("--flip", type=int)
parser.add_argument("--version", type=int)
parser.add_argument("--section", type=int)
args = parser.parse_args()

data = bytearray(open(args.input, "rb").read())
if args.truncate is not None:
    data = data[: args.truncate]
if args.flip is not None:
    at = args.flip
    if args.section is not None:
        # Directory entry S (offset, size, checksum) follows the 80-byte header.
        at += struct.unpack_from("<Q", data, 80 + 24 * args.section)[0]
    data[at] ^= 0xFF
if args.version is not None:
    data[8:12] = struct.pack("<I", args.version)
open(args.output, "wb").write(bytes(data))
