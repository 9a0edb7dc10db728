#!/usr/bin/env python3
"""Executes --emit=mappings answers on labelled data, independently of the
compiler, so lit tests can check where every element lands.

Every source element is labelled `key[i,j]`. Each entry's source region is
cut out, transformed by its postprocess list (permutations, reshape/flatten
markers; casts keep labels) and placed at its target region. Every target
element must be written exactly once.

  apply_mappings.py SRC_META MAPPINGS --print KEY [--print KEY ...]
      prints each row of KEY's assembled tensor: `KEY[i]: label label ...`
  apply_mappings.py SRC_META MAPPINGS --round-trip BACK_MAPPINGS
      applies MAPPINGS, then BACK_MAPPINGS to the result, and checks that
      every source tensor BACK_MAPPINGS produces equals the original.
"""
import argparse
import json
import sys
from functools import reduce


def volume(shape):
    return reduce(lambda a, b: a * b, shape, 1)


def strides(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return list(reversed(out))


def coords(shape):
    """All coordinates of `shape` in row-major order."""
    if not shape:
        yield ()
        return
    for i in range(shape[0]):
        for rest in coords(shape[1:]):
            yield (i,) + rest


class Tensor:
    def __init__(self, shape, data=None):
        self.shape = list(shape)
        self.data = data if data is not None else [None] * volume(shape)

    def index(self, c):
        return sum(a * s for a, s in zip(c, strides(self.shape)))

    def region(self, offset, shape):
        return Tensor(shape, [self.data[self.index([o + x for o, x in zip(offset, c)])]
                              for c in coords(shape)])

    def permute(self, perm):
        shape = [self.shape[p] for p in perm]
        out = Tensor(shape)
        for c in coords(shape):
            old = [0] * len(shape)
            for i, p in enumerate(perm):
                old[p] = c[i]
            out.data[out.index(c)] = self.data[self.index(old)]
        return out


def apply_postprocess(t, items):
    for item in items or []:
        if item.startswith("["):
            perm = json.loads(item)
            if not perm:
                perm = list(reversed(range(len(t.shape))))
            t = t.permute(perm)
        elif item.startswith("reshape:"):
            canon = json.loads(item[len("reshape:"):])
            t = Tensor([t.shape[0] // canon[1]] + canon[1:], t.data)
        elif item.startswith("flatten:"):
            canon = json.loads(item[len("flatten:"):])
            t = Tensor([t.shape[0] * canon[1], volume(canon[2:])], t.data)
        # dtype names: labels are unchanged by casts
    return t


def apply(sources, mappings):
    """sources: key -> Tensor. Returns key -> Tensor of the targets."""
    targets = {}
    for m in mappings:
        q = m["query"]
        t = targets.setdefault(q["key"], Tensor(q["global_shape"]))
        for e in m["entries"]:
            src, dst = e["source"], e["target"]
            if src["key"] not in sources:
                sys.exit("entry reads unknown source %s" % src["key"])
            piece = sources[src["key"]].region(src["global_offset"], src["local_shape"])
            piece = apply_postprocess(piece, e["postprocess"])
            if piece.shape != dst["local_shape"]:
                sys.exit("%s: transformed source shape %s != target %s"
                         % (dst["key"], piece.shape, dst["local_shape"]))
            for c in coords(piece.shape):
                at = t.index([o + x for o, x in zip(dst["global_offset"], c)])
                if t.data[at] is not None and t.data[at] != piece.data[piece.index(c)]:
                    sys.exit("%s element %d written twice" % (dst["key"], at))
                t.data[at] = piece.data[piece.index(c)]
    return targets


def labelled_sources(meta):
    out = {}
    for key, info in meta["tensors"].items():
        shape = info["global_shape"]
        out[key] = Tensor(shape, ["%s[%s]" % (key, ",".join(map(str, c))) for c in coords(shape)])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src_meta")
    ap.add_argument("mappings")
    ap.add_argument("--print", action="append", default=[])
    ap.add_argument("--round-trip")
    ap.add_argument("--strip", default="", help="prefix removed from printed labels")
    args = ap.parse_args()
    sources = labelled_sources(json.load(open(args.src_meta)))
    targets = apply(sources, json.load(open(args.mappings))["mappings"])
    for key, t in targets.items():
        if None in t.data and not all(x is None for x in t.data):
            sys.exit("%s: elements %s not written" % (key, [i for i, x in enumerate(t.data) if x is None][:8]))
    for key in args.print:
        t = targets[key]
        rows = t.shape[0] if t.shape else 1
        width = len(t.data) // rows
        for r in range(rows):
            labels = [x[len(args.strip):] if x.startswith(args.strip) else x
                      for x in t.data[r * width:(r + 1) * width]]
            print("%s[%d]: %s" % (key[len(args.strip):], r, " ".join(labels)))
    if args.round_trip:
        back = apply(targets, json.load(open(args.round_trip))["mappings"])
        bad = [k for k, t in back.items() if t.data != sources[k].data]
        print("round trip: %d tensors, %d differ %s" % (len(back), len(bad), bad[:3]))


if __name__ == "__main__":
    main()
