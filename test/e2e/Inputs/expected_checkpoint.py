#!/usr/bin/env python3
"""The end-to-end oracle: computes, from a real source checkpoint and the
compiler's --emit=mappings answer, the checkpoint a conversion must produce,
independently of aoa-run (python3 only: struct and json, no numpy).

  expected_checkpoint.py SRC_DIR MAPPINGS -o OUT_DIR [--tamper KEY]
  expected_checkpoint.py SRC_DIR --statements FILE.aoa --dst DST_META -o OUT_DIR

The second form does not trust the compiler at all: instead of step 2 it
runs the statements themselves on whole tensors (statement_oracle.py), for
the cases where the mappings could be wrong (the fused macros' shard counts).

1. Reads SRC_DIR/metadata.json (aoa-metadata v1) and the safetensors files it
   names, and assembles every key's whole tensor from its shards (boxes,
   flat ranges, replicas, which must agree). Values are kept as bit patterns.
2. Runs every mapping entry (docs/compiler.md, "Answers"): cuts the source region out,
   applies the postprocess list - permutations and reshape/flatten markers
   with the semantics of test/lit/passes/Inputs/apply_mappings.py (imported,
   not copied), casts on the element values - and places the result at the
   target region. Every element of every queried destination shard must be
   written exactly once, with the destination's dtype, and shards of one key
   (replicas) must agree.
3. Writes OUT_DIR/expected.safetensors with one whole tensor per destination
   key and OUT_DIR/metadata.json describing it (one unsharded shard each), so
   `aoa-compare OUT_DIR DST` compares it with what aoa-run wrote. Keys whose
   queries have no entries (added by `_ -> K`) get no data, as in aoa-run.

Casts (bit exact, round to nearest even, once):
  bfloat16 -> float32   exact (the bits shifted left by 16)
  float32 -> bfloat16   on the bit pattern: NaN keeps its sign and top payload
                        bits and becomes quiet; otherwise bits + 0x7FFF +
                        (bit 16), shifted right by 16 (overflow gives Inf)
  float16 <-> float32   through struct's 'e' format (IEEE binary16, RNE;
                        overflow gives Inf); a NaN keeps its sign and top
                        payload bits and becomes quiet (struct drops them)
  anything else between float16, bfloat16, float32 and float64: the exact
  value rounded once (fractions.Fraction, ties to even) to the target format
  (NaN is refused: not modelled).

--tamper KEY flips the lowest bit of element 0 of KEY in the output: a
negative control, so a test can show that aoa-compare notices one bit.

Errors go to stderr with exit status 1.
"""
import argparse
import json
import math
import os
import struct
import sys
from fractions import Fraction

sys.dont_write_bytecode = True  # no __pycache__ beside apply_mappings.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "lit", "passes", "Inputs"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import apply_mappings  # noqa: E402
import statement_oracle  # noqa: E402

volume = apply_mappings.volume
strides = apply_mappings.strides

# Paddle dtype name -> (safetensors dtype, bytes per element)
DTYPES = {"float64": ("F64", 8), "float32": ("F32", 4), "float16": ("F16", 2),
          "bfloat16": ("BF16", 2), "int64": ("I64", 8), "int32": ("I32", 4),
          "int16": ("I16", 2), "int8": ("I8", 1), "uint8": ("U8", 1),
          "bool": ("BOOL", 1), "uint64": ("U64", 8), "uint32": ("U32", 4),
          "uint16": ("U16", 2), "float8_e4m3fn": ("F8_E4M3", 1),
          "float8_e5m2": ("F8_E5M2", 1), "float8_e8m0fnu": ("F8_E8M0", 1),
          "float8_e4m3fnuz": ("F8_E4M3FNUZ", 1), "float8_e5m2fnuz": ("F8_E5M2FNUZ", 1),
          "complex64": ("C64", 8)}
FROM_ST = {st: name for name, (st, _) in DTYPES.items()}
UNSIGNED = {1: "B", 2: "H", 4: "I", 8: "Q"}
# The official safetensors order: the Dtype enum (safetensors/src/tensor.rs)
# backwards, so larger alignment first; then name.
ST_ORDER = ["U64", "I64", "F64", "C64", "F32", "U32", "I32", "BF16", "F16", "U16", "I16",
            "F8_E5M2FNUZ", "F8_E4M3FNUZ", "F8_E8M0", "F8_E4M3", "F8_E5M2", "I8", "U8",
            "F6_E3M2", "F6_E2M3", "F4", "BOOL"]


class OracleError(Exception):
    pass


def fail(message):
    raise OracleError(message)


# --------------------------------------------------------------------------
# safetensors

def read_safetensors(path):
    """name -> (dtype name, shape, list of element bit patterns)."""
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    if len(blob) < 8:
        fail("%s: too short for a safetensors header" % path)
    (n,) = struct.unpack_from("<Q", blob, 0)
    if 8 + n > len(blob):
        fail("%s: header length %d runs past the end of the file" % (path, n))
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = memoryview(blob)[8 + n:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] not in FROM_ST:
            fail("%s: tensor '%s': unsupported dtype %s" % (path, name, entry["dtype"]))
        dtype = FROM_ST[entry["dtype"]]
        size = DTYPES[dtype][1]
        a, b = entry["data_offsets"]
        count = volume(entry["shape"])
        if b - a != count * size or b > len(data):
            fail("%s: tensor '%s': bad data_offsets %s" % (path, name, [a, b]))
        bits = list(struct.unpack_from("<%d%s" % (count, UNSIGNED[size]), data, a))
        out[name] = (dtype, list(entry["shape"]), bits)
    return out


def write_safetensors(path, tensors):
    """tensors: name -> (dtype name, shape, bits). Official layout."""
    names = sorted(tensors, key=lambda k: (ST_ORDER.index(DTYPES[tensors[k][0]][0]), k))
    header, chunks, offset = {}, [], 0
    for name in names:
        dtype, shape, bits = tensors[name]
        size = DTYPES[dtype][1]
        blob = struct.pack("<%d%s" % (len(bits), UNSIGNED[size]), *bits)
        header[name] = {"dtype": DTYPES[dtype][0], "shape": shape,
                        "data_offsets": [offset, offset + len(blob)]}
        chunks.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in chunks:
            f.write(blob)


# --------------------------------------------------------------------------
# Boxes in a row-major tensor, as runs of whole rows

def box_runs(global_shape, offset, local):
    """(start in the box's flattening, start in the tensor's flattening,
    length) of every row of the box, in row-major order."""
    if not global_shape:
        yield 0, 0, 1
        return
    if volume(local) == 0:
        return
    gs = strides(global_shape)
    width = local[-1]
    for k, c in enumerate(apply_mappings.coords(list(local[:-1]))):
        start = sum((o + x) * s for o, x, s in zip(offset, list(c) + [0], gs))
        yield k * width, start, width


def gather(data, global_shape, offset, local):
    out = []
    for _, g, w in box_runs(global_shape, offset, local):
        out.extend(data[g:g + w])
    return out


def in_shape(global_shape, offset, local, what):
    if len(offset) != len(global_shape) or len(local) != len(global_shape):
        fail("%s: box of rank %d in a tensor of rank %d" % (what, len(local), len(global_shape)))
    for o, n, g in zip(offset, local, global_shape):
        if o < 0 or n < 0 or o + n > g:
            fail("%s: box %s+%s outside the shape %s" % (what, offset, local, global_shape))


# --------------------------------------------------------------------------
# The source checkpoint

class Key:
    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, list(shape)
        self.data = [None] * volume(shape)


def load_checkpoint(directory):
    meta_path = os.path.join(directory, "metadata.json")
    try:
        meta = json.load(open(meta_path))
    except (OSError, ValueError) as e:
        fail("%s: %s" % (meta_path, e))
    files = {}
    keys = {}
    for key, info in meta["tensors"].items():
        k = keys[key] = Key(info["dtype"], info["global_shape"])
        for s in info["shards"]:
            where = "%s: key %s, shard in %s (%s)" % (meta_path, key, s["file"], s["name"])
            if s["file"] not in files:
                files[s["file"]] = read_safetensors(os.path.join(directory, s["file"]))
            if s["name"] not in files[s["file"]]:
                fail("%s: the file has no such tensor" % where)
            dtype, shape, bits = files[s["file"]][s["name"]]
            flat = s.get("flat_range")
            a, b = flat if flat is not None else (0, volume(s["local_shape"]))
            want = [b - a] if flat is not None else list(s["local_shape"])
            if dtype != k.dtype or shape != want:
                fail("%s: stored %s%s, the metadata says %s%s" % (where, dtype, shape, k.dtype, want))
            in_shape(k.shape, s["global_offset"], s["local_shape"], where)
            for bs, g, w in box_runs(k.shape, s["global_offset"], s["local_shape"]):
                lo, hi = max(bs, a), min(bs + w, b)
                if lo >= hi:
                    continue
                values = bits[lo - a:hi - a]
                old = k.data[g + lo - bs:g + hi - bs]
                if any(x is not None for x in old) and old != values:
                    fail("%s: replicas disagree" % where)
                k.data[g + lo - bs:g + hi - bs] = values
        if None in k.data:
            fail("%s: key %s: element %d is in no shard" % (meta_path, key, k.data.index(None)))
    return keys


# --------------------------------------------------------------------------
# Casts on bit patterns

FORMATS = {  # significand bits (with the implicit one), min normal exponent, max exponent
    "float64": (53, -1022, 1023), "float32": (24, -126, 127),
    "float16": (11, -14, 15), "bfloat16": (8, -126, 127)}


def to_float(dtype, bits):
    if dtype == "bfloat16":
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    code = {"float64": ("Q", "d"), "float32": ("I", "f"), "float16": ("H", "e")}[dtype]
    return struct.unpack("<" + code[1], struct.pack("<" + code[0], bits))[0]


def from_exact_float(dtype, x):
    """Bits of `x`, which `dtype` represents exactly (or +-Inf)."""
    if dtype == "bfloat16":
        return struct.unpack("<I", struct.pack("<f", x))[0] >> 16
    code = {"float64": ("Q", "d"), "float32": ("I", "f"), "float16": ("H", "e")}[dtype]
    return struct.unpack("<" + code[0], struct.pack("<" + code[1], x))[0]


def round_to(dtype, x):
    """x (finite) rounded to nearest even in `dtype`; +-Inf on overflow."""
    p, emin, emax = FORMATS[dtype]
    if x == 0:
        return x
    _, e = math.frexp(abs(x))  # |x| = m * 2^e, 0.5 <= m < 1
    q = max(e - 1, emin) - (p - 1)  # the exponent of one unit in the last place
    units = round(Fraction(abs(x)) / Fraction(2) ** q)  # Fraction rounds ties to even
    value = Fraction(units) * Fraction(2) ** q
    if value >= Fraction(2) ** (emax + 1):
        return math.copysign(math.inf, x)
    return math.copysign(float(value), x)


def cast_bits(bits, src, dst):
    if src == dst:
        return bits
    if src not in FORMATS or dst not in FORMATS:
        fail("cannot cast %s to %s" % (src, dst))
    if src == "bfloat16" and dst == "float32":
        return [b << 16 for b in bits]
    if src == "float32" and dst == "bfloat16":
        out = []
        for b in bits:
            if (b & 0x7FFFFFFF) > 0x7F800000:  # NaN: keep sign and top payload, quiet
                out.append((b >> 16) | 0x0040)
            else:
                out.append((b + 0x7FFF + ((b >> 16) & 1)) >> 16)
        return out
    if src == "float32" and dst == "float16":
        out = []
        for b in bits:
            x = to_float(src, b)
            if x != x:
                out.append(((b >> 16) & 0x8000) | 0x7E00 | ((b >> 13) & 0x3FF))
                continue
            try:
                out.append(struct.unpack("<H", struct.pack("<e", x))[0])
            except OverflowError:
                out.append(0xFC00 if x < 0 else 0x7C00)
        return out
    if src == "float16" and dst == "float32":
        out = []
        for b in bits:
            if (b & 0x7FFF) > 0x7C00:  # NaN: the payload moves up, quiet
                out.append(((b & 0x8000) << 16) | 0x7FC00000 | ((b & 0x3FF) << 13))
            else:
                out.append(struct.unpack("<I", struct.pack("<f", struct.unpack("<e", struct.pack("<H", b))[0]))[0])
        return out
    out = []
    for b in bits:
        x = to_float(src, b)
        if x != x:
            fail("NaN cast from %s to %s: not modelled by the oracle" % (src, dst))
        if math.isinf(x):
            out.append(from_exact_float(dst, x))
        else:
            out.append(from_exact_float(dst, round_to(dst, x)))
    return out


# --------------------------------------------------------------------------
# Mappings

def run_mappings(sources, mappings):
    """key -> Key of every destination key that has data."""
    targets = {}
    for m in mappings:
        q = m["query"]
        key, shape, dtype = q["key"], list(q["global_shape"]), q["dtype"]
        if not m["entries"]:
            continue  # an added key: nothing to write
        t = targets.setdefault(key, Key(dtype, shape))
        if (t.dtype, t.shape) != (dtype, shape):
            fail("%s: queried as %s%s and %s%s" % (key, t.dtype, t.shape, dtype, shape))
        where = "query %s %s+%s" % (key, q["global_offset"], q["local_shape"])
        in_shape(shape, q["global_offset"], q["local_shape"], where)
        box = set()
        for _, g, w in box_runs(shape, q["global_offset"], q["local_shape"]):
            box.update(range(g, g + w))
        seen = set()
        for e in m["entries"]:
            src, tgt = e["source"], e["target"]
            if src["key"] not in sources:
                fail("%s: entry reads %s, which the source checkpoint does not have"
                     % (where, src["key"]))
            s = sources[src["key"]]
            in_shape(s.shape, src["global_offset"], src["local_shape"], where + " source")
            piece = gather(s.data, s.shape, src["global_offset"], src["local_shape"])
            piece_shape, piece_dtype = list(src["local_shape"]), s.dtype
            steps = e["postprocess"] or []
            positional = [x for x in steps if x not in DTYPES]
            if positional:
                moved = apply_mappings.apply_postprocess(
                    apply_mappings.Tensor(piece_shape, piece), positional)
                piece_shape, piece = moved.shape, moved.data
            for step in steps:
                if step in DTYPES:
                    piece = cast_bits(piece, piece_dtype, step)
                    piece_dtype = step
            if piece_shape != list(tgt["local_shape"]):
                fail("%s: source %s%s+%s becomes %s, the target is %s"
                     % (where, src["key"], src["global_offset"], src["local_shape"],
                        piece_shape, tgt["local_shape"]))
            if piece_dtype != dtype:
                fail("%s: source %s (%s) with postprocess %s gives %s, the destination is %s"
                     % (where, src["key"], s.dtype, steps, piece_dtype, dtype))
            if tgt["key"] != key:
                fail("%s: an entry targets %s" % (where, tgt["key"]))
            in_shape(shape, tgt["global_offset"], tgt["local_shape"], where + " target")
            for bs, g, w in box_runs(shape, tgt["global_offset"], tgt["local_shape"]):
                for i in range(g, g + w):
                    if i not in box:
                        fail("%s: entry writes flat index %d outside the query" % (where, i))
                    if i in seen:
                        fail("%s: flat index %d written twice" % (where, i))
                    seen.add(i)
                old = t.data[g:g + w]
                new = piece[bs:bs + w]
                if any(x is not None for x in old) and old != new:
                    fail("%s: shards of one key disagree near flat index %d" % (where, g))
                t.data[g:g + w] = new
        if seen != box:
            fail("%s: %d elements not written (first flat index %d)"
                 % (where, len(box - seen), min(box - seen)))
    for key, t in targets.items():
        if None in t.data:
            fail("%s: flat index %d is in no destination shard" % (key, t.data.index(None)))
    return targets


def run_statements(src_dir, sources, statements_path, dst_path):
    """key -> Key of every destination key, from the statements."""
    try:
        src_meta = json.load(open(os.path.join(src_dir, "metadata.json")))["tensors"]
        dst_meta = json.load(open(dst_path))["tensors"]
        produced = statement_oracle.run(
            src_meta, sources, statement_oracle.parse_statements(statements_path), dst_meta)
    except statement_oracle.StatementError as e:
        fail(str(e))
    except (OSError, ValueError, KeyError) as e:
        fail("%s" % e)
    targets = {}
    for key, (dtype, shape, data) in produced.items():
        t = targets[key] = Key(dtype, shape)
        t.data = list(data)
    return targets


def write_expected(directory, targets, tamper):
    os.makedirs(directory, exist_ok=True)
    if tamper is not None:
        if tamper not in targets or not targets[tamper].data:
            fail("--tamper %s: no such destination key with data" % tamper)
        targets[tamper].data[0] ^= 1
    write_safetensors(os.path.join(directory, "expected.safetensors"),
                      {k: (t.dtype, t.shape, t.data) for k, t in targets.items()})
    tensors = {}
    for key in sorted(targets):
        t = targets[key]
        tensors[key] = {"dtype": t.dtype, "global_shape": t.shape, "shards": [
            {"rank": 0, "file": "expected.safetensors", "name": key,
             "global_offset": [0] * len(t.shape), "local_shape": t.shape}]}
    with open(os.path.join(directory, "metadata.json"), "w") as f:
        json.dump({"format": "aoa-metadata", "version": 1, "tensors": tensors}, f, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src_dir")
    ap.add_argument("mappings", nargs="?")
    ap.add_argument("--statements", metavar="FILE.aoa")
    ap.add_argument("--dst", metavar="DST_META")
    ap.add_argument("-o", dest="out", required=True)
    ap.add_argument("--tamper", metavar="KEY")
    args = ap.parse_args()
    try:
        if (args.mappings is None) == (args.statements is None) or \
                (args.statements is None) != (args.dst is None):
            fail("give MAPPINGS, or --statements with --dst")
        sources = load_checkpoint(args.src_dir)
        if args.statements:
            targets = run_statements(args.src_dir, sources, args.statements, args.dst)
        else:
            try:
                mappings = json.load(open(args.mappings))["mappings"]
            except (OSError, ValueError, KeyError) as e:
                fail("%s: %s" % (args.mappings, e))
            targets = run_mappings(sources, mappings)
        write_expected(args.out, targets, args.tamper)
        print("expected: %d keys, %d elements" % (len(targets), sum(len(t.data) for t in targets.values())))
    except OracleError as e:
        sys.stderr.write("expected_checkpoint.py: error: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
