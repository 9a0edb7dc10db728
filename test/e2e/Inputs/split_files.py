"""Rewrites shard metadata so that each rank's shards go to PARTS files
(key i to part i % PARTS): several destination files per rank, for the
tests of resuming an interrupted mpi run.

  split_files.py METADATA PARTS -o OUT
"""
import argparse
import json

parser = argparse.ArgumentParser()
parser.add_argument("metadata")
parser.add_argument("parts", type=int)
parser.add_argument("-o", dest="out", required=True)
args = parser.parse_args()
with open(args.metadata) as f:
    metadata = json.load(f)
for i, tensor in enumerate(metadata["tensors"].values()):
    for shard in tensor["shards"]:
        shard["file"] = "part%d-rank%d.safetensors" % (i % args.parts, shard["rank"])
with open(args.out, "w") as f:
    json.dump(metadata, f, indent=1)
