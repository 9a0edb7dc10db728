#!/usr/bin/env python3
"""Differential tester: random AOA conversions run by aoa-compile + aoa-run and
by the naive reference interpreter (aoaref.py), compared byte for byte.

  difftest.py --cases N --seed S [--build DIR] [--features LIST] [--jobs J]
              [--keep DIR] [--no-shrink] [--self-check]

Each case is generated from (seed, case index) alone, so `--seed S --case I`
re-runs one case. On the first failure the case is shrunk (statements, keys,
layouts, ranks) while it still fails the same way and printed as a reproducer:
the statements, both metadata files and the commands. See docs/testing.md.
"""
import argparse
import copy
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aoaref  # noqa: E402

FLOATS = ["float32", "bfloat16", "float16", "float64"]
INTS = ["int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool"]
FP8 = ["float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"]

# Every generator feature; DEFAULT_FEATURES is what ctest runs.
ALL_FEATURES = {
    "rename": "A -> B, and A -> B, axis=k (alias)",
    "permute": "A -> B, permute='[...]' and A^T -> B",
    "cast": "float casts: dtype='x' and src_dtype/dst_dtype",
    "chain": "several attributes on one statement, and statements reading earlier results",
    "concat": "A1, ..., An -> B, axis=k",
    "split": "A -> B1, ..., Bn, axis=k",
    "remove": "A -> _",
    "ids": "$LAYER_ID / $EXPERT_ID templates",
    "star": "experts.*.w on the left",
    "fused_ffn": "fused_ffn, all three forms",
    "fused_qkv": "fused_qkv, both forms",
    "fused_qkv_old": "fused_qkv_old, all three forms",
    "reverse": "aoa_config_reverse / --reverse",
    "uneven": "uneven tensor-parallel splits",
    "replicas": "replicated shards",
    "flat": "sharding-stage-1 flat ranges",
    "tp2d": "shards split along two axes",
    "intdtype": "integer and bool tensors moved without casts",
    "invalid": "statements the compiler must refuse (known invalid)",
    "intcast": "casts to/from integer and bool dtypes (values without a result must stop aoa-run)",
    "fusedperm": "fused macros whose source went through ^T/permute",
    "fp8": "float8_e4m3fn, float8_e5m2 and float8_e8m0fnu tensors, moved and cast (PyTorch's rules)",
}
# Features a known open bug keeps out of the ctest run (none today).
OFF_BY_DEFAULT = set()
DEFAULT_FEATURES = sorted(set(ALL_FEATURES) - OFF_BY_DEFAULT)


# ---------------------------------------------------------------- layouts

def make_layout(rng, shape, feats, req=None, nranks=4):
    """A layout spec for one key. req = (axis, t): t even shards along axis
    (the fused macros count them)."""
    rank = len(shape)
    spec = {"cuts": [[0, n] for n in shape], "replicas": 1, "flat": 0,
            "ranks": None}
    if req is not None:
        axis, t = req
        spec["cuts"][axis] = [shape[axis] * i // t for i in range(t + 1)]
        if "tp2d" in feats and rank > 1 and rng.random() < 0.3:
            other = rng.choice([a for a in range(rank) if a != axis])
            if shape[other] >= 2:
                spec["cuts"][other] = [0, shape[other] // 2, shape[other]]
    else:
        kind = rng.choice(["whole", "tp", "tp", "tp2d", "flat"])
        if kind == "flat" and "flat" not in feats:
            kind = "tp"
        if kind == "tp2d" and "tp2d" not in feats:
            kind = "tp"
        axes = []
        if kind == "tp":
            axes = [rng.randrange(rank)]
        elif kind == "tp2d":
            axes = rng.sample(range(rank), min(2, rank))
        for axis in axes:
            n = shape[axis]
            if n < 2:
                continue
            parts = rng.randint(2, min(4, n))
            if "uneven" in feats and rng.random() < 0.4:
                points = sorted(rng.sample(range(1, n), parts - 1))
                spec["cuts"][axis] = [0] + points + [n]
            elif n % parts == 0:
                spec["cuts"][axis] = [n * i // parts for i in range(parts + 1)]
        if kind == "flat":
            total = aoaref.prod(shape)
            if total >= 2:
                spec["flat"] = rng.randint(2, min(4, total))
    if "replicas" in feats and rng.random() < 0.25:
        spec["replicas"] = 2
    nshards = spec["replicas"] * (spec["flat"] or 1) * aoaref.prod(len(c) - 1 for c in spec["cuts"])
    spec["ranks"] = [rng.randrange(nranks) for _ in range(nshards)]
    return spec


def layout_shards(key, shape, spec):
    boxes = []
    import itertools
    for idx in itertools.product(*[range(len(c) - 1) for c in spec["cuts"]]):
        off = [spec["cuts"][a][i] for a, i in enumerate(idx)]
        loc = [spec["cuts"][a][i + 1] - spec["cuts"][a][i] for a, i in enumerate(idx)]
        boxes.append((off, loc, None))
    if spec["flat"]:
        total = aoaref.prod(shape)
        f = spec["flat"]
        boxes = [([0] * len(shape), list(shape), [total * i // f, total * (i + 1) // f]) for i in range(f)]
    shards = []
    slots = {}
    i = 0
    for _rep in range(spec["replicas"]):
        for off, loc, fr in boxes:
            r = spec["ranks"][i % len(spec["ranks"])]
            i += 1
            slot = slots.get(r, 0)
            slots[r] = slot + 1
            s = {"rank": r, "file": "r%d_%d.safetensors" % (r, slot), "name": key,
                 "global_offset": off, "local_shape": loc}
            if fr:
                s["flat_range"] = fr
            shards.append(s)
    # ranks must be dense from 0
    return shards


def metadata(tensors):
    out = {}
    for key, t in sorted(tensors.items()):
        out[key] = {"dtype": t["dtype"], "global_shape": t["shape"],
                    "shards": layout_shards(key, t["shape"], t["layout"])}
    used = sorted({s["rank"] for v in out.values() for s in v["shards"]})
    remap = {r: i for i, r in enumerate(used)}
    for v in out.values():
        for s in v["shards"]:
            s["rank"] = remap[s["rank"]]
            s["file"] = "r%d_%s" % (s["rank"], s["file"].split("_", 1)[1])
    return {"format": "aoa-metadata", "version": 1, "tensors": out}


# ---------------------------------------------------------------- generator

class Gen:
    def __init__(self, rng, feats):
        self.rng, self.feats = rng, feats
        self.src = {}        # key -> {"dtype", "shape", "req"}
        self.dst_req = {}    # dst key -> (axis, t)
        self.pool = {}       # name -> (dtype, shape): results not yet read
        self.stmts = []
        self.n = 0
        self.expect_error = None
        self.reverse = "reverse" in feats and rng.random() < 0.3
        self.no_take = set()   # results a later statement must not read

    def name(self, base):
        self.n += 1
        return "%s%d.w" % (base, self.n)

    def dtype(self):
        if "intdtype" in self.feats and self.rng.random() < 0.2:
            return self.rng.choice(INTS)
        if "fp8" in self.feats and self.rng.random() < 0.15:
            return self.rng.choice(FP8)
        return self.rng.choice(FLOATS)

    def shape(self, rank=None, lo=1, hi=6):
        rank = rank or self.rng.choice([1, 2, 2, 2, 3])
        return [self.rng.randint(lo, hi) for _ in range(rank)]

    def new_src(self, shape=None, dtype=None, req=None, name=None):
        name = name or self.name("s")
        self.src[name] = {"dtype": dtype or self.dtype(), "shape": list(shape or self.shape()), "req": req}
        return name

    def take(self, pred=lambda d, s: True):
        """A name to read: an earlier result (chain) or a new source key."""
        if "chain" in self.feats and self.pool and self.rng.random() < 0.4:
            cands = [n for n, (d, s) in self.pool.items() if pred(d, s) and n not in self.no_take]
            if cands:
                n = self.rng.choice(sorted(cands))
                d, s = self.pool.pop(n)
                return n, d, list(s)
        return None

    def operand(self, shape=None, dtype=None):
        got = self.take(lambda d, s: (shape is None or s == shape) and (dtype is None or d == dtype))
        if got:
            return got
        d = dtype or self.dtype()
        s = list(shape) if shape is not None else self.shape()
        return self.new_src(s, d), d, s

    def out(self, d, s):
        n = self.name("o")
        self.pool[n] = (d, list(s))
        return n

    def perm_attr(self, rank):
        p = list(range(rank))
        self.rng.shuffle(p)
        if self.rng.random() < 0.2:
            return "[]", list(range(rank - 1, -1, -1))
        return "[%s]" % ", ".join(map(str, p)) if self.rng.random() < 0.5 else "[%s]" % ",".join(map(str, p)), p

    # statement kinds
    def s_rename(self):
        a, d, s = self.operand()
        b = self.out(d, s)
        if self.rng.random() < 0.2:
            self.stmts.append("%s -> %s, axis=%d" % (a, b, self.rng.randrange(len(s))))
        else:
            self.stmts.append("%s -> %s" % (a, b))

    def s_permute(self):
        got = self.take(lambda d, s: len(s) > 1)
        if got:
            a, d, s = got
        else:
            s = self.shape(self.rng.choice([1, 2, 2, 3, 3]))
            d = self.dtype()
            a = self.new_src(s, d)
        if self.rng.random() < 0.4:
            b = self.out(d, s[::-1])
            self.stmts.append("%s^T -> %s" % (a, b))
        else:
            txt, p = self.perm_attr(len(s))
            b = self.out(d, [s[i] for i in p])
            self.stmts.append("%s -> %s, permute='%s'" % (a, b, txt))

    def cast_pair(self):
        kinds = list(FLOATS)
        if "fp8" in self.feats:
            kinds += FP8
        if "intcast" in self.feats:
            kinds += INTS
        return self.rng.choice(kinds), self.rng.choice(kinds)

    def s_cast(self):
        sd, dd = self.cast_pair()
        a, d, s = self.operand(dtype=sd)
        b = self.out(dd, s)
        if self.reverse or self.rng.random() < 0.4:
            self.stmts.append("%s -> %s, src_dtype='%s', dst_dtype='%s'" % (a, b, sd, dd))
        else:
            self.stmts.append("%s -> %s, dtype='%s'" % (a, b, dd))

    def s_chain(self):
        a, d, s = self.operand(dtype=None if "intcast" in self.feats else self.rng.choice(FLOATS))
        attrs = []
        cur_d, cur_s = d, s
        for _ in range(self.rng.randint(2, 3)):
            k = self.rng.choice(["permute", "cast"])
            if k == "permute" and "permute" in self.feats:
                txt, p = self.perm_attr(len(cur_s))
                if any("permute" in x for x in attrs):
                    continue
                attrs.append("permute='%s'" % txt)
                cur_s = [cur_s[i] for i in p]
            elif k == "cast" and "cast" in self.feats:
                if any("dtype" in x for x in attrs):
                    continue
                _, dd = self.cast_pair()
                if self.reverse:
                    attrs.append("src_dtype='%s', dst_dtype='%s'" % (cur_d, dd))
                else:
                    attrs.append("dtype='%s'" % dd)
                cur_d = dd
        b = self.out(cur_d, cur_s)
        self.stmts.append("%s -> %s%s" % (a, b, "".join(", " + x for x in attrs)))

    def s_concat(self):
        d = self.dtype()
        s = self.shape()
        axis = self.rng.randrange(len(s))
        names = []
        total = 0
        for _ in range(self.rng.randint(2, 3)):
            part = list(s)
            part[axis] = self.rng.randint(1, 4) if not self.reverse or not names else part_len
            part_len = part[axis]
            total += part[axis]
            names.append(self.operand(part, d)[0])
        s[axis] = total
        b = self.out(d, s)
        ax = axis - len(s) if self.rng.random() < 0.2 else axis
        self.stmts.append("%s -> %s, axis=%d" % (", ".join(names), b, ax))

    def s_split(self):
        n = self.rng.randint(2, 3)
        a, d, s = self.operand()
        axis = self.rng.randrange(len(s))
        if s[axis] % n:
            if a in self.src and a not in self.dst_req:
                s[axis] = n * self.rng.randint(1, 3)
                self.src[a]["shape"] = list(s)
            else:
                self.pool[a] = (d, s)
                return
        part = list(s)
        part[axis] //= n
        outs = [self.out(d, part) for _ in range(n)]
        self.stmts.append("%s -> %s, axis=%d" % (a, ", ".join(outs), axis))

    def s_remove(self):
        a = self.new_src()
        self.stmts.append("%s -> _" % a)

    def s_ids(self):
        layers = sorted(self.rng.sample(range(4), self.rng.randint(1, 3)))
        experts = sorted(self.rng.sample(range(3), self.rng.randint(1, 2))) if self.rng.random() < 0.5 else None
        self.n += 1
        pre = "m%d" % self.n
        d = self.dtype()
        s = self.shape()
        kind = self.rng.choice(["rename", "permute", "concat"])
        tmpl_e = ".experts.$EXPERT_ID" if experts else ""
        combos = [(l, e) for l in layers for e in (experts or [None])]
        outs = []
        if kind == "concat":
            axis = self.rng.randrange(len(s))
            for l, e in combos:
                for part in ("a", "b"):
                    k = "%s.layers.%d%s.%s" % (pre, l, ".experts.%d" % e if e is not None else "", part)
                    self.new_src(s, d, name=k)
                s2 = list(s)
                s2[axis] *= 2
                outs.append(("%s.out.%d%s.ab" % (pre, l, ".e%d" % e if e is not None else ""), s2))
            self.stmts.append("%s.layers.$LAYER_ID%s.a, %s.layers.$LAYER_ID%s.b -> %s.out.$LAYER_ID%s.ab, axis=%d" % (
                pre, tmpl_e, pre, tmpl_e, pre, ".e$EXPERT_ID" if experts else "", axis))
        else:
            s2 = list(s)
            attr = ""
            suffix = ""
            if kind == "permute" and len(s) > 1:
                if self.rng.random() < 0.5:
                    suffix = "^T"
                    s2 = s[::-1]
                else:
                    txt, p = self.perm_attr(len(s))
                    attr = ", permute='%s'" % txt
                    s2 = [s[i] for i in p]
            for l, e in combos:
                k = "%s.layers.%d%s.w" % (pre, l, ".experts.%d" % e if e is not None else "")
                self.new_src(s, d, name=k)
                outs.append(("%s.out.%d%s.w" % (pre, l, ".e%d" % e if e is not None else ""), s2))
            self.stmts.append("%s.layers.$LAYER_ID%s.w%s -> %s.out.$LAYER_ID%s.w%s" % (
                pre, tmpl_e, suffix, pre, ".e$EXPERT_ID" if experts else "", attr))
        for k, sh in outs:
            self.pool[k] = (d, sh)
            if self.reverse:
                # reverse mode matches the template against the source keys:
                # the statement's right names must all be stored
                self.no_take.add(k)

    def s_star(self):
        self.n += 1
        pre = "x%d" % self.n
        d = self.dtype()
        s = self.shape()
        axis = self.rng.randrange(len(s))
        ids = sorted(self.rng.sample(range(12), self.rng.randint(2, 3)))
        for i in ids:
            self.new_src(s, d, name="%s.experts.%d.w" % (pre, i))
        s2 = list(s)
        s2[axis] *= len(ids)
        b = self.out(d, s2)
        self.stmts.append("%s.experts.*.w -> %s, axis=%d" % (pre, b, axis))

    def fused_source(self, shape, axis, t, d):
        """A name whose shard count along `axis` is t: a source key stored
        t-way along it, optionally reached through a rename or (fusedperm)
        a permutation."""
        rank = len(shape)
        mode = "direct"
        if "fusedperm" in self.feats and rank >= 2 and self.rng.random() < 0.5:
            mode = self.rng.choice(["T-same", "T-before", "permute-before"])
        elif "chain" in self.feats and self.rng.random() < 0.2:
            mode = "rename-before"
        if mode == "direct":
            return self.new_src(shape, d, req=(axis, t)), ""
        if mode == "rename-before":
            a = self.new_src(shape, d, req=(axis, t))
            b = self.name("f")
            self.stmts.append("%s -> %s" % (a, b))
            return b, ""
        if mode == "T-same":
            a = self.new_src(shape[::-1], d, req=(rank - 1 - axis, t))
            return a, "^T"
        if mode == "T-before":
            a = self.new_src(shape[::-1], d, req=(rank - 1 - axis, t))
            b = self.name("f")
            self.stmts.append("%s^T -> %s" % (a, b))
            return b, ""
        p = list(range(rank))
        self.rng.shuffle(p)
        src_shape = [0] * rank
        for i, q in enumerate(p):
            src_shape[q] = shape[i]
        a = self.new_src(src_shape, d, req=(p[axis], t))
        b = self.name("f")
        self.stmts.append("%s -> %s, permute='[%s]'" % (a, b, ", ".join(map(str, p))))
        return b, ""

    def fused_dims(self, axis_len):
        rank = self.rng.choice([1, 2, 2, 3]) if self.rng.random() < 0.9 else 2
        s = self.shape(rank, 1, 3)
        axis = self.rng.randrange(rank)
        s[axis] = axis_len
        return s, axis

    def axis_attr(self, axis, rank):
        if axis == 1 and self.rng.random() < 0.5:
            return ""
        return ", axis=%d" % axis

    def s_fused_ffn(self):
        form = self.rng.choice(["FD", "FD", "Fgu", "guD"])
        d = self.rng.choice(FLOATS)
        k = self.rng.randint(1, 2)
        ts, td = self.rng.randint(1, 4), self.rng.randint(1, 4)
        if form == "FD":
            n = ts * td // math.gcd(ts, td)
            shape, axis = self.fused_dims(2 * n * k)
            f, sfx = self.fused_source(shape, axis, ts, d)
            if self.rng.random() < 0.2 and f in self.src and not sfx:
                dst = f   # F -> F, fused_ffn
            else:
                dst = self.name("o")
            self.dst_req[dst] = (axis, td)
            self.no_take.add(dst)
            self.pool[dst] = (d, shape)
            self.stmts.append("%s%s -> %s, fused_ffn%s" % (f, sfx, dst, self.axis_attr(axis, len(shape))))
        elif form == "Fgu":
            shape, axis = self.fused_dims(2 * ts * k)
            f, sfx = self.fused_source(shape, axis, ts, d)
            half = list(shape)
            half[axis] //= 2
            g, u = self.out(d, half), self.out(d, half)
            self.stmts.append("%s%s -> %s, %s, fused_ffn%s" % (f, sfx, g, u, self.axis_attr(axis, len(shape))))
        else:
            shape, axis = self.fused_dims(td * k)
            g = self.new_src(shape, d)
            u = self.new_src(shape, d)
            full = list(shape)
            full[axis] *= 2
            dst = self.name("o")
            self.dst_req[dst] = (axis, td)
            self.no_take.add(dst)
            self.pool[dst] = (d, full)
            self.stmts.append("%s, %s -> %s, fused_ffn%s" % (g, u, dst, self.axis_attr(axis, len(shape))))

    def heads(self, need_div=1):
        G = self.rng.choice([1, 2, 4])
        hpg = self.rng.randint(1, 3)
        return G * hpg, G, self.rng.randint(1, 2)

    def s_fused_qkv(self, old):
        d = self.rng.choice(FLOATS)
        H, G, hd = self.heads()
        divs = [t for t in (1, 2, 4) if G % t == 0]
        ts, td = self.rng.choice(divs), self.rng.choice(divs)
        tag = "fused_qkv_old" if old else "fused_qkv"
        forms = ["Fqkv", "qkvF"] + (["FD", "FD"] if old else [])
        if old and self.reverse and H != G:
            # reversed, q, k, v -> D splits the concatenation of q, k, v
            # evenly into three (only even splits exist)
            forms.remove("qkvF")
        form = self.rng.choice(forms)
        attrs = ", %s, num_heads=%d, num_key_value_groups=%d" % (tag, H, G)
        shape, axis = self.fused_dims((H + 2 * G) * hd)
        attrs += self.axis_attr(axis, len(shape))
        if form == "FD":
            f, sfx = self.fused_source(shape, axis, ts, d)
            dst = self.name("o")
            self.dst_req[dst] = (axis, td)
            self.no_take.add(dst)
            self.pool[dst] = (d, shape)
            self.stmts.append("%s%s -> %s%s" % (f, sfx, dst, attrs))
        elif form == "Fqkv":
            if old:
                f, sfx = self.fused_source(shape, axis, ts, d)
            else:
                f, sfx = self.new_src(shape, d), ""
            outs = []
            for n in (H, G, G):
                s = list(shape)
                s[axis] = n * hd
                outs.append(self.out(d, s))
            self.stmts.append("%s%s -> %s%s" % (f, sfx, ", ".join(outs), attrs))
        else:
            ins = []
            for n in (H, G, G):
                s = list(shape)
                s[axis] = n * hd
                ins.append(self.new_src(s, d))
            dst = self.name("o")
            if old:
                self.dst_req[dst] = (axis, td)
            self.no_take.add(dst)
            self.pool[dst] = (d, shape)
            self.stmts.append("%s -> %s%s" % (", ".join(ins), dst, attrs))

    def s_invalid(self):
        kind = self.rng.choice(["split", "concat", "permute", "unknown", "axis"])
        a, d, s = self.operand()
        if kind == "split":
            axis = self.rng.randrange(len(s))
            n = s[axis] + 1
            self.stmts.append("%s -> %s, axis=%d" % (a, ", ".join(self.name("bad") for _ in range(n)), axis))
        elif kind == "concat":
            b = self.new_src([x + 1 for x in s] + [2], d)
            self.stmts.append("%s, %s -> %s, axis=0" % (a, b, self.name("bad")))
        elif kind == "permute":
            self.stmts.append("%s -> %s, permute='[%s]'" % (a, self.name("bad"), ", ".join(["0"] * (len(s) + 1))))
        elif kind == "unknown":
            self.stmts.append("nosuch%d.w -> %s" % (self.n, self.name("bad")))
        else:
            b = self.new_src(s, d)
            self.stmts.append("%s, %s -> %s, axis=%d" % (a, b, self.name("bad"), len(s) + 2))
        self.expect_error = "invalid statement (%s)" % kind

    def generate(self):
        kinds = [k for k in ["rename", "permute", "cast", "chain", "concat", "split", "remove", "ids", "star",
                             "fused_ffn", "fused_qkv", "fused_qkv_old"] if k in self.feats]
        if self.reverse:
            kinds = [k for k in kinds if k not in ("remove", "star")]
        for _ in range(self.rng.randint(1, 4)):
            if not kinds:
                break
            k = self.rng.choice(kinds)
            if k in ("fused_qkv", "fused_qkv_old"):
                self.s_fused_qkv(k == "fused_qkv_old")
            else:
                getattr(self, "s_" + k)()
        if "invalid" in self.feats and not self.reverse and self.rng.random() < 0.08:
            self.s_invalid()
        # outputs: every unread result, plus some untouched source keys
        dst = {}
        for n, (d, s) in self.pool.items():
            dst[n] = {"dtype": d, "shape": s, "req": self.dst_req.get(n)}
        if self.rng.random() < 0.3 and not self.reverse:
            k = self.new_src()
            dst[k] = {"dtype": self.src[k]["dtype"], "shape": self.src[k]["shape"], "req": None}
        if not dst:
            k = self.new_src()
            dst[k] = {"dtype": self.src[k]["dtype"], "shape": self.src[k]["shape"], "req": None}
        src = self.src
        if self.reverse:
            # the checkpoint side of the statements is now the destination
            src, dst = dst, {k: v for k, v in self.src.items()}
        nr_src, nr_dst = self.rng.randint(1, 4), self.rng.randint(1, 4)
        for tensors, nr in ((src, nr_src), (dst, nr_dst)):
            for k, t in tensors.items():
                t["layout"] = make_layout(self.rng, t["shape"], self.feats, t.pop("req", None), nr)
        return {"statements": self.stmts, "reverse": self.reverse,
                "reverse_via": self.rng.choice(["json", "flag"]),
                "src": src, "dst": dst, "expect_error": self.expect_error,
                "fill_seed": self.rng.randrange(1 << 30)}


def generate(seed, index, feats):
    rng = random.Random("%d/%d" % (seed, index))
    return Gen(rng, feats).generate()


# ---------------------------------------------------------------- running

class Tools:
    def __init__(self, build):
        self.bin = os.path.join(build, "bin")

    def __call__(self, name):
        return os.path.join(self.bin, name)


def dump_metadata(meta, f):
    """One shard per line, like aoa's own writer: short reproducers."""
    f.write('{"format": "aoa-metadata", "version": 1, "tensors": {\n')
    keys = sorted(meta["tensors"])
    for i, k in enumerate(keys):
        t = meta["tensors"][k]
        f.write('%s: {"dtype": "%s", "global_shape": %s, "shards": [\n' % (
            json.dumps(k), t["dtype"], json.dumps(t["global_shape"])))
        f.write(",\n".join("  " + json.dumps(s) for s in t["shards"]))
        f.write("]}%s\n" % ("," if i + 1 < len(keys) else ""))
    f.write("}}\n")


def write_case(case, work):
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "src.layout.json"), "w") as f:
        dump_metadata(metadata(case["src"]), f)
    with open(os.path.join(work, "dst.json"), "w") as f:
        dump_metadata(metadata(case["dst"]), f)
    cfg = {"aoa_statements": case["statements"]}
    if case["reverse"] and case["reverse_via"] == "json":
        cfg["aoa_config_reverse"] = True
    with open(os.path.join(work, "case.json"), "w") as f:
        json.dump(cfg, f, indent=1)


def commands(case, tools, work):
    rev = ["--reverse"] if case["reverse"] and case["reverse_via"] == "flag" else []
    j = lambda p: os.path.join(work, p)  # noqa: E731
    return [
        [tools("aoa-shard"), j("src.layout.json"), "--fill=random:%d" % case["fill_seed"], "-o", j("src")],
        [tools("aoa-compile"), j("case.json"), "--src", j("src/metadata.json"), "--dst", j("dst.json"),
         "-o", j("plan")] + rev,
        [tools("aoa-run"), j("plan"), "--src-dir", j("src"), "--dst-dir", j("out"), "--progress=none"],
    ], rev


def run_case(case, tools, work, corrupt=False, shrinking=False):
    """Returns (status, detail): status 'ok', or a failure class."""
    shutil.rmtree(work, ignore_errors=True)
    write_case(case, work)
    (shard, comp, run), rev = commands(case, tools, work)
    p = subprocess.run(shard, capture_output=True, text=True)
    if p.returncode != 0:
        return "shard-failed", p.stderr
    # the reference's opinion first
    try:
        expected, _ = aoaref.compute(os.path.join(work, "case.json"), os.path.join(work, "src"),
                                     os.path.join(work, "dst.json"), bool(rev))
        ref_error = None
    except aoaref.AoaError as e:
        expected, ref_error = None, str(e)
    if ref_error and shrinking:
        return "invalid-candidate", ref_error
    if ref_error and not case["expect_error"] and "intcast" not in case.get("features", ()):
        return "generator-bug", "the reference interpreter calls a generated case invalid: %s" % ref_error
    p = subprocess.run(comp, capture_output=True, text=True)
    if p.returncode != 0:
        if ref_error:
            if p.returncode == 1 and "error" in p.stderr:
                return "refused-ok", "refused as expected (%s)" % ref_error
            return "bad-refusal", "exit %d, stderr: %s" % (p.returncode, p.stderr[-2000:])
        return "refused", p.stderr[-3000:]
    p = subprocess.run(run, capture_output=True, text=True)
    if p.returncode != 0:
        if ref_error:
            if "error" in p.stderr and not os.path.exists(os.path.join(work, "out", "metadata.json")):
                return "refused-ok", "aoa-run stopped as expected (%s)" % ref_error
            return "bad-refusal", "aoa-run exit %d: %s" % (p.returncode, p.stderr[-2000:])
        return "run-failed", p.stderr[-3000:]
    if ref_error:
        return "accepted-invalid", "the reference says: %s; aoa-compile and aoa-run succeeded" % ref_error
    if corrupt:
        corrupt_one(os.path.join(work, "out"))
    problems = aoaref.check(expected, os.path.join(work, "out"))
    if problems:
        return "mismatch", "\n".join(problems[:10])
    return "ok", ""


def corrupt_one(out):
    """Flips the lowest bit of the first byte of the first tensor's data."""
    import struct
    names = sorted(f for f in os.listdir(out) if f.endswith(".safetensors"))
    path = os.path.join(out, names[0])
    with open(path, "r+b") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        f.seek(8 + n)
        b = f.read(1)
        if not b:
            return
        f.seek(8 + n)
        f.write(bytes([b[0] ^ 1]))


# ---------------------------------------------------------------- shrinking

def referenced(case):
    text = " ".join(case["statements"])
    return text


def shrink_candidates(case):
    st = case["statements"]
    for i in range(len(st)):
        c = copy.deepcopy(case)
        del c["statements"][i]
        yield "drop statement %d" % i, c
    for side in ("dst", "src"):
        for k in sorted(case[side]):
            if len(case[side]) > 1:
                c = copy.deepcopy(case)
                del c[side][k]
                yield "drop %s key %s" % (side, k), c
    for side in ("dst", "src"):
        for k in sorted(case[side]):
            lay = case[side][k]["layout"]
            if lay["replicas"] > 1:
                c = copy.deepcopy(case)
                c[side][k]["layout"]["replicas"] = 1
                yield "no replicas for %s %s" % (side, k), c
            if lay["flat"]:
                c = copy.deepcopy(case)
                c[side][k]["layout"]["flat"] = 0
                yield "no flat range for %s %s" % (side, k), c
            if any(len(cu) > 2 for cu in lay["cuts"]):
                c = copy.deepcopy(case)
                c[side][k]["layout"]["cuts"] = [[0, n] for n in c[side][k]["shape"]]
                yield "whole %s %s" % (side, k), c
            if any(r != 0 for r in lay["ranks"]):
                c = copy.deepcopy(case)
                c[side][k]["layout"]["ranks"] = [0] * len(lay["ranks"])
                yield "rank 0 only for %s %s" % (side, k), c
    if case["reverse"] and case["reverse_via"] == "json":
        c = copy.deepcopy(case)
        c["reverse_via"] = "flag"
        yield "--reverse instead of the JSON flag", c


def shrink(case, status, tools, work, log):
    steps = 0
    changed = True
    while changed and steps < 200:
        changed = False
        for what, cand in shrink_candidates(case):
            steps += 1
            s, _ = run_case(cand, tools, work,
                            shrinking=status not in ("accepted-invalid", "bad-refusal"))
            if s == status:
                log("  shrink: %s" % what)
                case = cand
                changed = True
                break
    return case


def reproducer(case, tools, work, status, detail):
    write_case(case, work)
    (shard, comp, run), rev = commands(case, tools, work)
    out = []
    out.append("==== difftest reproducer (%s) ====" % status)
    out.append(detail)
    out.append("-- statements (%s%s):" % (work + "/case.json", ", reverse mode" if case["reverse"] else ""))
    for s in case["statements"]:
        out.append("  " + s)
    for name in ("src.layout.json", "dst.json"):
        out.append("-- %s:" % name)
        with open(os.path.join(work, name)) as f:
            out.append(f.read())
    out.append("-- commands:")
    for c in (shard, comp, run):
        out.append("  " + " ".join(c))
    here = os.path.abspath(__file__)
    out.append("  python3 %s %s --src-dir %s --dst %s%s --check %s" % (
        os.path.join(os.path.dirname(here), "aoaref.py"), os.path.join(work, "case.json"), os.path.join(work, "src"), os.path.join(work, "dst.json"),
        " --reverse" if rev else "", os.path.join(work, "out")))
    out.append("==== end of reproducer ====")
    return "\n".join(out)


# ---------------------------------------------------------------- main

def parse_features(text):
    feats = set(DEFAULT_FEATURES)
    if not text:
        return feats
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if item == "all":
            feats = set(ALL_FEATURES)
        elif item == "none":
            feats = set()
        elif item[0] in "+-":
            if item[1:] not in ALL_FEATURES:
                raise SystemExit("unknown feature %r (known: %s)" % (item[1:], ", ".join(sorted(ALL_FEATURES))))
            (feats.add if item[0] == "+" else feats.discard)(item[1:])
        else:
            if item not in ALL_FEATURES:
                raise SystemExit("unknown feature %r (known: %s)" % (item, ", ".join(sorted(ALL_FEATURES))))
            feats.add(item)
    return feats


def worker(args):
    seed, index, feats, build, work, corrupt = args
    tools = Tools(build)
    try:
        case = generate(seed, index, feats)
        case["features"] = sorted(feats)
        status, detail = run_case(case, tools, work, corrupt)
    except Exception:
        status, detail = "tester-crash", traceback.format_exc()
    shutil.rmtree(work, ignore_errors=True)
    return index, status, detail


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--case", type=int, help="run only this case index")
    ap.add_argument("--build", default=os.path.join(here, "..", "..", "build"))
    ap.add_argument("--features", default="",
                    help="comma list: NAME (add), +NAME, -NAME, all, none; default: %s" % ",".join(DEFAULT_FEATURES))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--work", help="directory for the cases (default: a temporary one)")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--keep-going", action="store_true", help="count every failure instead of stopping at the first")
    ap.add_argument("--self-check", action="store_true",
                    help="corrupt one output byte of every case: each must be reported as a mismatch")
    ap.add_argument("--list-features", action="store_true")
    args = ap.parse_args(argv)
    if args.list_features:
        for k, v in ALL_FEATURES.items():
            print("%-14s %s%s" % (k, v, "  [off by default]" if k in OFF_BY_DEFAULT else ""))
        return 0
    feats = parse_features(args.features)
    build = os.path.abspath(args.build)
    for t in ("aoa-compile", "aoa-run", "aoa-shard"):
        if not os.access(os.path.join(build, "bin", t), os.X_OK):
            print("difftest: %s not found in %s/bin (--build)" % (t, build), file=sys.stderr)
            return 2
    work = args.work or tempfile.mkdtemp(prefix="aoa-difftest-")
    os.makedirs(work, exist_ok=True)
    indices = [args.case] if args.case is not None else list(range(args.cases))
    t0 = time.time()
    counts = {}
    failures = []
    jobs = [(args.seed, i, feats, build, os.path.join(work, "c%d" % i), args.self_check) for i in indices]
    print("difftest: seed %d, %d cases, features %s" % (args.seed, len(indices), ",".join(sorted(feats))))
    sys.stdout.flush()
    if args.jobs > 1:
        import multiprocessing
        pool = multiprocessing.Pool(args.jobs)
        results = pool.imap_unordered(worker, jobs)
    else:
        pool = None
        results = map(worker, jobs)
    done = 0
    for index, status, detail in results:
        done += 1
        if args.self_check:
            if status == "refused-ok":
                status = "skipped (invalid case, nothing written)"
            else:
                status = "detected" if status == "mismatch" else "self-check-missed:" + status
        elif status == "refused-ok":
            status = "ok (refused as expected)"
        counts[status] = counts.get(status, 0) + 1
        if not (status.startswith("ok") or status == "detected" or status.startswith("skipped")):
            failures.append((index, status, detail))
            if not args.keep_going:
                if pool:
                    pool.terminate()
                break
        if done % 500 == 0:
            print("difftest: %d/%d cases, %.0fs" % (done, len(indices), time.time() - t0))
            sys.stdout.flush()
    if pool:
        pool.close()
    elapsed = time.time() - t0
    summary = ", ".join("%s %d" % kv for kv in sorted(counts.items()))
    failures.sort()
    for index, status, detail in failures[:1 if not args.keep_going else 20]:
        print("difftest: FAILED case %d of seed %d: %s" % (index, args.seed, status))
        print(detail)
    if failures and not args.self_check:
        index, status, detail = failures[0]
        case = generate(args.seed, index, feats)
        case["features"] = sorted(feats)
        rwork = os.path.join(work, "repro-%d" % index)
        tools = Tools(build)
        if not args.no_shrink and status not in ("tester-crash", "generator-bug"):
            print("difftest: shrinking case %d ..." % index)
            case = shrink(case, status, tools, rwork, print)
            status, detail = run_case(case, tools, rwork)
        print(reproducer(case, tools, rwork, status, detail))
        print("difftest: re-run this case with: %s --seed %d --case %d --features %s --build %s" % (
            os.path.abspath(__file__), args.seed, index, ",".join(["none"] + sorted(feats)), build))
    print("difftest: %s; %d cases in %.1fs (seed %d)" % (summary, done, elapsed, args.seed))
    if not args.work and not failures:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
