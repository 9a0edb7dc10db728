#!/usr/bin/env python3
"""Writes an `aoa-compile --queries` file on one line: COUNT queries for rows
of the float32 [10, 4] tensor KEY (query i asks for row i % 10), all of the
same length. `--bad-dtype I` gives query I the unknown dtype "fp32";
`--bad-shape I` gives it the global shape [10, 5].

  make_queries.py KEY COUNT [--bad-dtype I] [--bad-shape I]
"""
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("key")
parser.add_argument("count", type=int)
parser.add_argument("--bad-dtype", type=int, default=-1)
parser.add_argument("--bad-shape", type=int, default=-1)
args = parser.parse_args()

queries = []
for i in range(args.count):
    shape = "[10, 5]" if i == args.bad_shape else "[10, 4]"
    dtype = "fp32   " if i == args.bad_dtype else "float32"
    queries.append('{"key": "%s", "global_offset": [%d, 0], "local_shape": [1, 4], '
                   '"global_shape": %s, "dtype": "%s"}' % (args.key, i % 10, shape, dtype.strip()))
print('{"queries": [' + ", ".join(queries) + "]}")
