#!/usr/bin/env python3
"""Loads one rank's shards of a converted checkpoint straight into memory.

What a trainer does at start-up instead of converting the checkpoint on
disk first: compile the statements against the source checkpoint and the
destination layout, then load only this rank's tensors (numpy arrays; only
the source bytes they need are read, nothing is written). Copy it and hand
the arrays to your framework (torch.from_numpy, jax.numpy.asarray, ...);
bfloat16 and FP8 tensors come as their raw uint16 / uint8 bits, with the real
dtype in tensors.dtypes.

  PYTHONPATH=build/python python3 examples/python/load_rank.py \\
      examples/hf_llama_fused_qkv_ffn.aoa build/quickstart/hf 1 \\
      --layout examples/layouts/hf_llama_fused_tp4.json
"""
import argparse
import sys

import aoa


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", help="the statements (Paddle JSON or .aoa)")
    parser.add_argument("src", help="the source checkpoint directory")
    parser.add_argument("rank", type=int, help="the destination rank to load")
    parser.add_argument("--layout", help="a layout spec placing the outputs "
                        "(default: examples/layouts/hf_llama_fused_tp4.json)",
                        default="examples/layouts/hf_llama_fused_tp4.json")
    parser.add_argument("--reverse", action="store_true",
                        help="apply the statements in reverse")
    args = parser.parse_args()

    try:
        plan = aoa.compile(args.config, args.src, layout=args.layout,
                           reverse=args.reverse)
        tensors = aoa.load(plan, args.rank, args.src)
    except aoa.Error as error:
        print(f"load_rank: error: {error}", file=sys.stderr)
        return 1
    print(f"rank {args.rank} of {plan.ranks}: {len(tensors)} tensors")
    for name, array in sorted(tensors.items()):
        print(f"  {name}: {tensors.dtypes[name]} {list(array.shape)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
