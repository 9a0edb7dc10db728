#!/usr/bin/env python3
"""A deliberately naive reference interpreter for AOA statements.

Written from Paddle FlexCheckpoint's AOA language reference
and docs/language.md only, independently of the compiler passes and of the
other Python oracles of this repository: every tensor is held whole in memory
as a list of element bit patterns, statements are applied one by one, and the
destination shards are cut from the whole tensors at the end. Standard library
only; slow on purpose (small tensors).

  aoaref.py CONFIG --src-dir SRC --dst DST_META [--reverse] -o OUT_DIR
  aoaref.py CONFIG --src-dir SRC --dst DST_META [--reverse] --check RUN_DIR

The first form writes the expected checkpoint (safetensors + metadata.json) in
the destination layout; the second compares every destination shard of a
conversion's output directory with the expected bytes.
"""
import itertools
import json
import math
import os
import re
import struct
import sys


class AoaError(Exception):
    """The statements are invalid (the compiler must refuse them)."""


# ---------------------------------------------------------------- dtypes

DTYPES = {
    # name: (safetensors code, bytes, kind)
    "float64": ("F64", 8, "f"), "float32": ("F32", 4, "f"), "float16": ("F16", 2, "f"),
    "bfloat16": ("BF16", 2, "f"), "int64": ("I64", 8, "i"), "int32": ("I32", 4, "i"),
    "int16": ("I16", 2, "i"), "int8": ("I8", 1, "i"), "uint8": ("U8", 1, "u"), "bool": ("BOOL", 1, "b"),
    "uint64": ("U64", 8, "u"), "uint32": ("U32", 4, "u"), "uint16": ("U16", 2, "u"),
    "float8_e4m3fn": ("F8_E4M3", 1, "f8"), "float8_e5m2": ("F8_E5M2", 1, "f8"),
    "float8_e8m0fnu": ("F8_E8M0", 1, "f8"),
}
CODE_TO_DTYPE = {v[0]: k for k, v in DTYPES.items()}
# (exponent bits, explicit mantissa bits)
FLOAT_FORMATS = {"float64": (11, 52), "float32": (8, 23), "float16": (5, 10), "bfloat16": (8, 7)}
UNPACK = {1: "B", 2: "H", 4: "I", 8: "Q"}


def itemsize(dtype):
    return DTYPES[dtype][1]


def decode_float(dtype, bits):
    """The exact value of a float bit pattern, as a Python float (all fit)."""
    e_bits, m_bits = FLOAT_FORMATS[dtype]
    sign = -1.0 if bits >> (e_bits + m_bits) else 1.0
    exp = (bits >> m_bits) & ((1 << e_bits) - 1)
    man = bits & ((1 << m_bits) - 1)
    bias = (1 << (e_bits - 1)) - 1
    if exp == (1 << e_bits) - 1:
        return sign * math.inf if man == 0 else math.nan
    if exp == 0:
        return sign * math.ldexp(man, 1 - bias - m_bits)
    return sign * math.ldexp(man | (1 << m_bits), exp - bias - m_bits)


def encode_float(dtype, x, nan_bits=None):
    """x (a Python float) rounded to nearest, ties to even, as a bit pattern."""
    e_bits, m_bits = FLOAT_FORMATS[dtype]
    sign_bit = 1 << (e_bits + m_bits)
    exp_all = (1 << e_bits) - 1
    if math.isnan(x):
        return nan_bits if nan_bits is not None else (exp_all << m_bits) | (1 << (m_bits - 1))
    sign = sign_bit if math.copysign(1.0, x) < 0 else 0
    x = abs(x)
    if math.isinf(x):
        return sign | (exp_all << m_bits)
    if x == 0:
        return sign
    bias = (1 << (e_bits - 1)) - 1
    # x = M * 2**E exactly, M an integer
    m, e = math.frexp(x)  # 0.5 <= m < 1
    M = int(m * (1 << 53))
    E = e - 53
    unbiased = e - 1  # x in [2**unbiased, 2**(unbiased+1))
    emin = 1 - bias
    q = max(unbiased, emin) - m_bits  # exponent of the unit in the last place
    shift = q - E
    if shift > 0:
        kept = M >> shift
        rem = M - (kept << shift)
        half = 1 << (shift - 1)
        if rem > half or (rem == half and kept & 1):
            kept += 1
    else:
        kept = M << (-shift)
    # value = kept * 2**q
    if kept >= (1 << (m_bits + 1)):  # rounding carried into the next binade
        kept >>= 1
        q += 1
    if kept < (1 << m_bits):  # subnormal (q == emin - m_bits)
        return sign | kept
    biased = q + m_bits + bias
    if biased >= exp_all:
        return sign | (exp_all << m_bits)
    return sign | (biased << m_bits) | (kept - (1 << m_bits))


# The FP8 formats with a sign: (exponent bits, mantissa bits, bias).
# float8_e4m3fn has no infinities (S.1111.111 is NaN, the largest finite
# 448); float8_e5m2 is IEEE-like; float8_e8m0fnu is 2^(e-127), 0xFF NaN.
FP8_FORMATS = {"float8_e4m3fn": (4, 3, 7), "float8_e5m2": (5, 2, 15)}


def decode_fp8(dtype, bits):
    """The exact value of an FP8 pattern, as a Python float (all fit)."""
    if dtype == "float8_e8m0fnu":
        return math.nan if bits == 0xFF else math.ldexp(1.0, bits - 127)
    e_bits, m_bits, bias = FP8_FORMATS[dtype]
    sign = -1.0 if bits >> 7 else 1.0
    exp = (bits >> m_bits) & ((1 << e_bits) - 1)
    man = bits & ((1 << m_bits) - 1)
    if dtype == "float8_e4m3fn" and exp == 15 and man == 7:
        return math.nan
    if dtype == "float8_e5m2" and exp == 31:
        return sign * math.inf if man == 0 else math.nan
    if exp == 0:
        return sign * math.ldexp(man, 1 - bias - m_bits)
    return sign * math.ldexp(man | (1 << m_bits), exp - bias - m_bits)


def to_float32(x):
    """A Python float rounded to float32 (nearest even), as a Python float."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def encode_fp8(dtype, x):
    """A float32 value (a Python float) to FP8 bits, as PyTorch's .to():
    round to nearest even; float8_e4m3fn gives NaN (0x7F | sign) past 448
    and for +-Inf, float8_e5m2 Inf past 57344; float8_e8m0fnu drops the
    sign, gives 2^(k+1) from 1.5 * 2^k up, 2^-127 at or below 2^-127."""
    if dtype == "float8_e8m0fnu":
        if math.isnan(x) or math.isinf(x):
            return 0xFF
        a = abs(x)
        if a < math.ldexp(1.0, -126):
            return 0 if a <= math.ldexp(1.0, -127) else 1
        m, e = math.frexp(a)  # a = m * 2^e, 0.5 <= m < 1
        code = e - 1 + 127 + (1 if 2 * m >= 1.5 else 0)
        return 0xFF if code >= 0xFF else code
    e_bits, m_bits, bias = FP8_FORMATS[dtype]
    sign = 0x80 if math.copysign(1.0, x) < 0 else 0
    overflow = 0x7F if dtype == "float8_e4m3fn" else 0x7C
    if math.isnan(x):
        return sign | 0x7F
    if math.isinf(x):
        return sign | overflow
    a = abs(x)
    if a == 0:
        return sign
    emin = 1 - bias
    q = max(math.frexp(a)[1] - 1, emin) - m_bits  # the unit in the last place
    n = round(math.ldexp(a, -q))  # exact scaling; round() ties to even
    value = math.ldexp(n, q)
    largest = decode_fp8(dtype, 0x7E if dtype == "float8_e4m3fn" else 0x7B)
    if value > largest:
        return sign | overflow
    if n < (1 << m_bits):
        return sign | n  # subnormal (or zero)
    exp = math.frexp(value)[1] - 1
    man = int(math.ldexp(value, m_bits - exp)) - (1 << m_bits)
    return sign | ((exp + bias) << m_bits) | man


def int_range(dtype):
    kind = DTYPES[dtype][2]
    bits = itemsize(dtype) * 8
    if kind == "b":
        return 0, 1
    if kind == "u":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def decode_int(dtype, bits):
    kind = DTYPES[dtype][2]
    if kind == "i" and bits >> (itemsize(dtype) * 8 - 1):
        return bits - (1 << (itemsize(dtype) * 8))
    return bits


def cast_element(src, dst, bits):
    """Returns the bits of one element cast from src to dst, or raises
    AoaError for a value the destination cannot hold (issue 13 item 1)."""
    if src == dst:
        return bits
    skind, dkind = DTYPES[src][2], DTYPES[dst][2]
    if dkind == "f8":
        # PyTorch: through float32 (rounded once from float64 and integers).
        if skind == "f8":
            x = decode_fp8(src, bits)
            negative = src != "float8_e8m0fnu" and bits >> 7
        elif skind == "f":
            x = to_float32(decode_float(src, bits))
            negative = bits >> sum(FLOAT_FORMATS[src])
        else:
            n = (1 if bits else 0) if skind == "b" else decode_int(src, bits)
            x = decode_float("float32", encode_int_as_float("float32", n))
            negative = False
        if math.isnan(x) or x == 0:  # decode gives NaN and zero unsigned
            x = math.copysign(x, -1.0 if negative else 1.0)
        return encode_fp8(dst, x)
    if skind == "f8":
        value = decode_fp8(src, bits)
        if dkind == "f" and math.isnan(value):
            # quiet, the sign and the FP8 mantissa kept at the top
            de, dm = FLOAT_FORMATS[dst]
            sign, payload, width = 0, 0, 0
            if src in FP8_FORMATS:
                width = FP8_FORMATS[src][1]
                sign, payload = bits >> 7, bits & ((1 << width) - 1)
            payload = (payload << (dm - width)) | (1 << (dm - 1))
            return (sign << (de + dm)) | (((1 << de) - 1) << dm) | payload
        if dkind == "f":
            if value == 0 and bits >> 7:
                return 1 << sum(FLOAT_FORMATS[dst])  # -0.0
            return encode_float(dst, value)
        skind = "f"
    elif skind == "f":
        value = decode_float(src, bits)
    elif skind == "b":
        value = 1 if bits else 0
    else:
        value = decode_int(src, bits)
    if dkind == "f":
        if skind == "f" and math.isnan(value):
            # a NaN stays a NaN; keep its sign and top payload bits
            se, sm = FLOAT_FORMATS[src]
            de, dm = FLOAT_FORMATS[dst]
            sign = bits >> (se + sm)
            payload = bits & ((1 << sm) - 1)
            payload = payload >> (sm - dm) if sm >= dm else payload << (dm - sm)
            payload |= 1 << (dm - 1)
            return (sign << (de + dm)) | (((1 << de) - 1) << dm) | payload
        if skind == "f":
            return encode_float(dst, value)
        # integer -> float: round to nearest even from the exact integer
        return encode_int_as_float(dst, value)
    if dkind == "b":
        return 1 if value != 0 else 0
    # -> integer
    if skind == "f":
        if math.isnan(value) or math.isinf(value):
            raise AoaError("cast of %r to %s" % (value, dst))
        value = int(value)  # truncates toward zero
    lo, hi = int_range(dst)
    if value < lo or value > hi:
        raise AoaError("cast of %d to %s does not fit" % (value, dst))
    return value & ((1 << (itemsize(dst) * 8)) - 1)


def encode_int_as_float(dtype, n):
    e_bits, m_bits = FLOAT_FORMATS[dtype]
    if n == 0:
        return 0
    sign = 1 << (e_bits + m_bits) if n < 0 else 0
    a = abs(n)
    length = a.bit_length()
    if length > m_bits + 1:
        shift = length - (m_bits + 1)
        kept = a >> shift
        rem = a - (kept << shift)
        half = 1 << (shift - 1)
        if rem > half or (rem == half and kept & 1):
            kept += 1
        if kept >> (m_bits + 1):
            kept >>= 1
            shift += 1
        exp = shift + m_bits
    else:
        kept = a << (m_bits + 1 - length)
        exp = length - 1
    bias = (1 << (e_bits - 1)) - 1
    if exp + bias >= (1 << e_bits) - 1:
        return sign | (((1 << e_bits) - 1) << m_bits)
    return sign | ((exp + bias) << m_bits) | (kept - (1 << m_bits))


# ---------------------------------------------------------------- tensors

class Tensor:
    """A whole tensor: dtype, shape, row-major list of element bit patterns."""

    def __init__(self, dtype, shape, data):
        self.dtype, self.shape, self.data = dtype, list(shape), data
        assert len(data) == prod(shape), (shape, len(data))


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def strides(shape):
    s, acc = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        s[i] = acc
        acc *= shape[i]
    return s


def slice_axis(t, axis, start, stop):
    shape = list(t.shape)
    outer = prod(shape[:axis])
    inner = prod(shape[axis + 1:])
    n = shape[axis]
    data = []
    for o in range(outer):
        base = o * n * inner
        data.extend(t.data[base + start * inner: base + stop * inner])
    shape[axis] = stop - start
    return Tensor(t.dtype, shape, data)


def concat(ts, axis):
    shape = list(ts[0].shape)
    for t in ts[1:]:
        if len(t.shape) != len(shape) or any(
                t.shape[i] != shape[i] for i in range(len(shape)) if i != axis):
            raise AoaError("concat of shapes %s" % [x.shape for x in ts])
        if t.dtype != ts[0].dtype:
            raise AoaError("concat of dtypes %s" % [x.dtype for x in ts])
    outer = prod(shape[:axis])
    data = []
    for o in range(outer):
        for t in ts:
            inner = prod(t.shape[axis:])
            data.extend(t.data[o * inner:(o + 1) * inner])
    shape[axis] = sum(t.shape[axis] for t in ts)
    return Tensor(ts[0].dtype, shape, data)


def permute(t, perm):
    """new[i] = old[perm[i]]."""
    old_strides = strides(t.shape)
    new_shape = [t.shape[p] for p in perm]
    data = []
    for idx in itertools.product(*[range(n) for n in new_shape]):
        off = 0
        for i, p in enumerate(perm):
            off += idx[i] * old_strides[p]
        data.append(t.data[off])
    return Tensor(t.dtype, new_shape, data)


def box_elements(shape, offset, local):
    """Row-major flat indices (in the whole tensor) of a box, in box order."""
    st = strides(shape)
    out = []
    for idx in itertools.product(*[range(o, o + n) for o, n in zip(offset, local)]):
        out.append(sum(i * s for i, s in zip(idx, st)))
    return out


# ---------------------------------------------------------------- safetensors

def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        dtype = CODE_TO_DTYPE[info["dtype"]]
        a, b = info["data_offsets"]
        raw = blob[8 + n + a: 8 + n + b]
        size = itemsize(dtype)
        out[name] = (dtype, info["shape"], list(struct.unpack("<%d%s" % (len(raw) // size, UNPACK[size]), raw)))
    return out


def write_safetensors(path, tensors):
    header, chunks, pos = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, data = tensors[name]
        raw = struct.pack("<%d%s" % (len(data), UNPACK[itemsize(dtype)]), *data)
        header[name] = {"dtype": DTYPES[dtype][0], "shape": shape, "data_offsets": [pos, pos + len(raw)]}
        chunks.append(raw)
        pos += len(raw)
    h = json.dumps(header).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(chunks))


def shard_elements(meta, shard):
    """Flat indices of the elements a stored shard holds, in stored order."""
    els = box_elements(meta["global_shape"], shard["global_offset"], shard["local_shape"])
    if "flat_range" in shard:
        a, b = shard["flat_range"]
        els = els[a:b]
    return els


def load_checkpoint(directory):
    """Whole tensors of a checkpoint: key -> Tensor (every replica checked)."""
    with open(os.path.join(directory, "metadata.json")) as f:
        meta = json.load(f)["tensors"]
    files = {}
    out = {}
    for key, info in meta.items():
        total = prod(info["global_shape"])
        data = [None] * total
        for shard in info["shards"]:
            path = os.path.join(directory, shard["file"])
            if path not in files:
                files[path] = read_safetensors(path)
            dtype, _shape, stored = files[path][shard["name"]]
            if dtype != info["dtype"]:
                raise RuntimeError("%s: %s stored as %s" % (path, shard["name"], dtype))
            for i, v in zip(shard_elements(info, shard), stored):
                if data[i] is not None and data[i] != v:
                    raise RuntimeError("%s: replicas of %s disagree at %d" % (directory, key, i))
                data[i] = v
        if any(v is None for v in data):
            raise RuntimeError("%s: %s not fully stored" % (directory, key))
        out[key] = Tensor(info["dtype"], info["global_shape"], data)
    return out, meta


# ---------------------------------------------------------------- statements

TOKEN = re.compile(r"\s*(?:(->)|(,)|(=)|(-?\d+)|'([^']*)'|\"([^\"]*)\"|([A-Za-z_][A-Za-z0-9._$*]*(?:\^T)?))")
TAGS = ("fused_qkv", "fused_qkv_old", "fused_ffn")


class Stmt:
    def __init__(self, lhs, rhs, attrs, tag=None):
        self.lhs, self.rhs, self.attrs, self.tag = lhs, rhs, attrs, tag

    def __repr__(self):
        return "%s -> %s %s %s" % (",".join(self.lhs), ",".join(self.rhs), self.attrs, self.tag or "")


def parse_statement(text):
    pos, toks = 0, []
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise AoaError("cannot lex %r at %d" % (text, pos))
        pos = m.end()
        if m.group(1):
            toks.append(("->", None))
        elif m.group(2):
            toks.append((",", None))
        elif m.group(3):
            toks.append(("=", None))
        elif m.group(4) is not None:
            toks.append(("num", int(m.group(4))))
        elif m.group(5) is not None or m.group(6) is not None:
            toks.append(("str", m.group(5) if m.group(5) is not None else m.group(6)))
        else:
            toks.append(("id", m.group(7)))
    lhs, rhs, attrs, tag = [], [], {}, None
    i = 0
    while True:
        if toks[i][0] != "id":
            raise AoaError("expected a name in %r" % text)
        lhs.append(toks[i][1])
        i += 1
        if toks[i][0] == "->":
            i += 1
            break
        if toks[i][0] != ",":
            raise AoaError("expected , or -> in %r" % text)
        i += 1
    while i < len(toks):
        if toks[i][0] != "id":
            raise AoaError("expected a name in %r" % text)
        name = toks[i][1]
        if i + 1 < len(toks) and toks[i + 1][0] == "=":
            attrs[name] = toks[i + 2][1]
            i += 3
        elif name in TAGS:
            tag = name
            i += 1
        else:
            rhs.append(name)
            i += 1
        if i < len(toks):
            if toks[i][0] != ",":
                raise AoaError("expected , in %r" % text)
            i += 1
    return Stmt(lhs, rhs, attrs, tag)


def split_statements(config_text):
    out = []
    for line in config_text.splitlines():
        line = line.split("#", 1)[0]
        for part in line.split(";"):
            if part.strip():
                out.append(part.strip())
    return out


def parse_perm(text, rank):
    text = text.strip()
    if text == "[]":
        return list(range(rank - 1, -1, -1))
    perm = [int(x) for x in text.strip("[]").split(",") if x.strip()]
    if sorted(perm) != list(range(rank)):
        raise AoaError("permute %s is not a permutation of rank %d" % (text, rank))
    return perm


def inverse_perm(p):
    inv = [0] * len(p)
    for i, x in enumerate(p):
        inv[x] = i
    return inv


# ---------------------------------------------------------------- macros

OPT_SUFFIXES = [".w_0", ".moment1_0", ".moment2_0", ".beta1_pow_acc_0", ".beta2_pow_acc_0"]


def model_key(k):
    for s in OPT_SUFFIXES:
        if k.endswith(s):
            return k[:-len(s)]
    return k


def expand_ids(stmt, src_keys, reverse):
    """$LAYER_ID / $EXPERT_ID: one statement per id combination that exists
    among the source keys (aoa: no cartesian product)."""
    names = stmt.lhs + stmt.rhs
    if not any("$LAYER_ID" in n or "$EXPERT_ID" in n for n in names):
        return [stmt]
    side = stmt.rhs if reverse else stmt.lhs
    template = next(n for n in side if "$LAYER_ID" in n or "$EXPERT_ID" in n)
    if template.endswith("^T"):
        template = template[:-2]
    pattern = re.escape(template).replace(re.escape("$LAYER_ID"), r"(?P<LAYER_ID>\d+)").replace(
        re.escape("$EXPERT_ID"), r"(?P<EXPERT_ID>\d+)")
    combos = set()
    for k in src_keys:
        m = re.fullmatch(pattern, k)
        if m:
            combos.add(tuple(sorted(m.groupdict().items())))
    if not combos:
        raise AoaError("template %s matches no key" % template)
    out = []
    for combo in sorted(combos, key=lambda c: [(n, int(v)) for n, v in c]):
        def sub(n):
            for name, v in combo:
                n = n.replace("$" + name, v)
            return n
        out.append(Stmt([sub(n) for n in stmt.lhs], [sub(n) for n in stmt.rhs], dict(stmt.attrs), stmt.tag))
    return out


def expand_stars(stmt, src_keys, dst_keys):
    def expand(names, keys):
        out = []
        for n in names:
            if "*" not in n:
                out.append(n)
                continue
            pre, post = n.split("*")
            found = []
            for k in keys:
                m = re.fullmatch(re.escape(pre) + r"(\d+)" + re.escape(post), k)
                if m:
                    found.append((int(m.group(1)), k))
            if not found:
                raise AoaError("%s matches nothing" % n)
            out.extend(k for _, k in sorted(found))
        return out
    return Stmt(expand(stmt.lhs, src_keys), expand(stmt.rhs, dst_keys), stmt.attrs, stmt.tag)


def shard_count_along(meta, key, axis):
    """Distinct intervals along `axis` among the shards of `key` (replicas and
    splits along other axes do not count), per docs/language.md."""
    if meta is None or key not in meta:
        return 1
    info = meta[key]
    ivs = set()
    for s in info["shards"]:
        if "flat_range" in s:
            raise AoaError("fused macro over a flat-range key")
        ivs.add((s["global_offset"][axis], s["global_offset"][axis] + s["local_shape"][axis]))
    ivs = sorted(ivs)
    n = info["global_shape"][axis]
    t = len(ivs)
    if n % t or any(b - a != n // t or a != i * (n // t) for i, (a, b) in enumerate(ivs)):
        raise AoaError("%s is not split evenly along axis %d" % (key, axis))
    return t


class Engine:
    def __init__(self, statements, src_meta, dst_meta, reverse):
        self.src_meta, self.dst_meta, self.reverse = src_meta, dst_meta, reverse
        self.src_keys = sorted({model_key(k) for k in src_meta})
        self.dst_keys = sorted(dst_meta or {})
        self.tmp = 0
        self.tmp_origin = {}
        stmts = [parse_statement(s) for s in statements]
        stmts = [y for s in stmts for y in expand_ids(s, self.src_keys, reverse)]
        # left names live in the source in forward mode, in the destination in reverse mode
        lkeys, rkeys = (self.dst_keys, self.src_keys) if reverse else (self.src_keys, self.dst_keys)
        stmts = [expand_stars(s, lkeys, rkeys) for s in stmts]
        self.links_back, self.links_fwd = self.chain(stmts)
        out = []
        for s in stmts:
            out.extend(self.lower_transpose(s))
        final = []
        for s in out:
            final.extend(self.lower_fused(s))
        self.stmts = final

    # -- variable mapping chain: name -> (previous name, permutation so far)
    def chain(self, stmts):
        back, fwd = {}, {}
        for s in stmts:
            lhs = [n[:-2] if n.endswith("^T") else n for n in s.lhs]
            rhs = [n for n in s.rhs if n != "_"]
            if len(lhs) == 1:
                for r in rhs:
                    back.setdefault(r, []).append((lhs[0], s))
                fwd.setdefault(lhs[0], []).extend((r, s) for r in rhs)
            elif len(rhs) == 1:
                for l in lhs:
                    fwd.setdefault(l, []).append((rhs[0], s))
                back.setdefault(rhs[0], []).extend((l, s) for l in lhs)
        return back, fwd

    def count(self, name, axis, rank, side, walk):
        """Shard count of `name` along `axis` in the `side` ('src' or 'dst')
        metadata: follow the chain (`walk` 'back': towards the statements
        that wrote the name; 'fwd': towards those that read it) until a key of
        that side, mapping the axis through every permutation on the way."""
        name = self.tmp_origin.get(name, name)
        meta = self.src_meta if side == "src" else self.dst_meta
        keys = set(meta or {})
        links = self.links_back if walk == "back" else self.links_fwd
        seen = set()
        while True:
            if name.endswith("^T"):
                axis = rank - 1 - axis
                name = name[:-2]
            if name in keys:
                break
            if name in seen or name not in links:
                return 1
            seen.add(name)
            nxt = links[name]
            if len(nxt) != 1:
                raise AoaError("ambiguous chain at %s" % name)
            other, stmt = nxt[0]
            if len(stmt.lhs) != 1 or len(stmt.rhs) != 1:
                return 1
            p = stmt.attrs.get("permute")
            transposed = stmt.lhs[0].endswith("^T")
            if walk == "back":
                if p is not None:
                    axis = parse_perm(p, rank)[axis]
                if transposed:
                    axis = rank - 1 - axis
            else:
                if transposed:
                    axis = rank - 1 - axis
                if p is not None:
                    axis = inverse_perm(parse_perm(p, rank))[axis]
            name = other
        return shard_count_along(meta, name, axis)

    def fresh(self, base):
        self.tmp += 1
        return "%%t%d.%s" % (self.tmp, base)

    def lower_transpose(self, s):
        pre, lhs = [], []
        for n in s.lhs:
            if n.endswith("^T"):
                t = self.fresh(n[:-2] + "_transpose_tmp")
                pre.append(Stmt([n[:-2]], [t], {"permute": "[]"}))
                lhs.append(t)
                self.tmp_origin[t] = n
            else:
                lhs.append(n)
        return pre + [Stmt(lhs, s.rhs, s.attrs, s.tag)]

    def lower_fused(self, s):
        if s.tag is None:
            return [s]
        a = s.attrs
        axis = a.get("axis", 1)
        ax = {"axis": axis}
        left = ("dst", "back") if self.reverse else ("src", "back")
        right = ("src", "fwd") if self.reverse else ("dst", "fwd")
        rank = self.name_rank(s.lhs[0])
        if axis < 0:
            axis += rank
            ax = {"axis": axis}
        P = self.fresh
        if s.tag == "fused_ffn":
            if len(s.lhs) == 1 and len(s.rhs) == 1:
                ts = self.count(s.lhs[0], axis, rank, *left)
                td = self.count(s.rhs[0], axis, rank, *right)
                n = ts * td // math.gcd(ts, td)
                G = [P("GATE_%d" % i) for i in range(n)]
                U = [P("UP_%d" % i) for i in range(n)]

                def layout(t):
                    out = []
                    for r in range(t):
                        lo = r * n // t
                        out += G[lo:lo + n // t] + U[lo:lo + n // t]
                    return out
                return [Stmt(s.lhs, layout(ts), ax), Stmt(layout(td), s.rhs, ax)]
            if len(s.lhs) == 1 and len(s.rhs) == 2:
                n = self.count(s.lhs[0], axis, rank, *left)
                G = [P("GATE_%d" % i) for i in range(n)]
                U = [P("UP_%d" % i) for i in range(n)]
                lay = []
                for r in range(n):
                    lay += [G[r], U[r]]
                return [Stmt(s.lhs, lay, ax), Stmt(G, [s.rhs[0]], ax), Stmt(U, [s.rhs[1]], ax)]
            if len(s.lhs) == 2 and len(s.rhs) == 1:
                td = self.count(s.rhs[0], axis, rank, *right)
                tmp = P("gate.up.tmp")
                G = [P("GATE_%d" % i) for i in range(td)]
                U = [P("UP_%d" % i) for i in range(td)]
                lay = []
                for r in range(td):
                    lay += [G[r], U[r]]
                return [Stmt(s.lhs, [tmp], ax), Stmt([tmp], G + U, ax), Stmt(lay, s.rhs, ax)]
            raise AoaError("unsupported fused_ffn form")
        H, Gn = a["num_heads"], a["num_key_value_groups"]
        if H <= 0 or Gn <= 0 or H % Gn:
            raise AoaError("bad head counts")
        Q = [P("Q_%d" % i) for i in range(H)]
        K = [P("K_%d" % i) for i in range(Gn)]
        V = [P("V_%d" % i) for i in range(Gn)]
        if s.tag == "fused_qkv_old":
            def layout(t):
                if H % t or Gn % t:
                    raise AoaError("head counts not divisible by %d" % t)
                out = []
                for r in range(t):
                    for C, n in ((Q, H), (K, Gn), (V, Gn)):
                        lo = r * n // t
                        out += C[lo:lo + n // t]
                return out
            if len(s.lhs) == 1 and len(s.rhs) == 1:
                ts = self.count(s.lhs[0], axis, rank, *left)
                td = self.count(s.rhs[0], axis, rank, *right)
                return [Stmt(s.lhs, layout(ts), ax), Stmt(layout(td), s.rhs, ax)]
            if len(s.lhs) == 1 and len(s.rhs) == 3:
                ts = self.count(s.lhs[0], axis, rank, *left)
                return [Stmt(s.lhs, layout(ts), ax), Stmt(Q, [s.rhs[0]], ax), Stmt(K, [s.rhs[1]], ax),
                        Stmt(V, [s.rhs[2]], ax)]
            if len(s.lhs) == 3 and len(s.rhs) == 1:
                td = self.count(s.rhs[0], axis, rank, *right)
                tmp = P("q.k.v.tmp")
                return [Stmt(s.lhs, [tmp], ax), Stmt([tmp], layout(1), ax), Stmt(layout(td), s.rhs, ax)]
            raise AoaError("unsupported fused_qkv_old form")
        # fused_qkv: grouped order, no shard counts
        hpg = H // Gn
        grouped = []
        for g in range(Gn):
            grouped += Q[g * hpg:(g + 1) * hpg] + [K[g], V[g]]
        if len(s.lhs) == 1 and len(s.rhs) == 3:
            return [Stmt(s.lhs, grouped, ax), Stmt(Q, [s.rhs[0]], ax), Stmt(K, [s.rhs[1]], ax),
                    Stmt(V, [s.rhs[2]], ax)]
        if len(s.lhs) == 3 and len(s.rhs) == 1:
            return [Stmt([s.lhs[0]], Q, ax), Stmt([s.lhs[1]], K, ax), Stmt([s.lhs[2]], V, ax),
                    Stmt(grouped, s.rhs, ax)]
        raise AoaError("unsupported fused_qkv form")

    def name_rank(self, name):
        """Rank of a name: a source key's, else walk the chain back."""
        name = self.tmp_origin.get(name, name)
        seen = set()
        while True:
            base = name[:-2] if name.endswith("^T") else name
            for meta in (self.src_meta, self.dst_meta):
                if meta and base in meta:
                    return len(meta[base]["global_shape"])
            if base in seen or base not in self.links_back:
                raise AoaError("cannot tell the rank of %s" % name)
            seen.add(base)
            name = self.links_back[base][0][0]

    # -- execution
    def run(self, tensors):
        """tensors: source key -> Tensor (model keys). Returns name -> Tensor
        of every destination key."""
        env = {}
        removed = set()
        written = {}
        stmts = self.stmts
        if self.reverse:
            stmts = [Stmt(list(s.rhs), list(s.lhs), s.attrs) for s in reversed(stmts)]

        def get(n):
            if n in env:
                return env[n]
            if n in tensors:
                return tensors[n]
            raise AoaError("%s should be assigned before" % n)

        for s in stmts:
            a = dict(s.attrs)
            if len(s.lhs) > 1 and len(s.rhs) > 1:
                raise AoaError("n -> m")
            if len(s.lhs) > 1 or len(s.rhs) > 1:
                if set(a) != {"axis"}:
                    raise AoaError("split/concat needs exactly axis: %s" % a)
                if len(s.lhs) > 1:
                    srcs = [get(n) for n in s.lhs]
                    ax = a["axis"] + (len(srcs[0].shape) if a["axis"] < 0 else 0)
                    if not 0 <= ax < len(srcs[0].shape):
                        raise AoaError("axis out of range")
                    env[s.rhs[0]] = concat(srcs, ax)
                    written[s.rhs[0]] = True
                else:
                    t = get(s.lhs[0])
                    ax = a["axis"] + (len(t.shape) if a["axis"] < 0 else 0)
                    if not 0 <= ax < len(t.shape):
                        raise AoaError("axis out of range")
                    n = len(s.rhs)
                    if t.shape[ax] % n:
                        raise AoaError("split of %d into %d" % (t.shape[ax], n))
                    w = t.shape[ax] // n
                    for i, r in enumerate(s.rhs):
                        env[r] = slice_axis(t, ax, i * w, (i + 1) * w)
                        written[r] = True
                continue
            lhs, rhs = s.lhs[0], s.rhs[0]
            if rhs == "_":
                removed.add(lhs)
                continue
            if lhs == "_":
                raise AoaError("add is not modelled")
            t = get(lhs)
            a.pop("axis", None)  # alias on 1 -> 1
            # attribute order: as written; reversed (and inverted) in reverse mode
            items = list(a.items())
            if "src_dtype" in a or "dst_dtype" in a:
                if "src_dtype" not in a or "dst_dtype" not in a:
                    raise AoaError("lone src_dtype/dst_dtype")
            ops = []
            for k, v in items:
                if k == "permute":
                    ops.append(("permute", v))
                elif k == "dtype":
                    if self.reverse:
                        raise AoaError("dtype= in reverse mode")
                    ops.append(("cast", v))
                elif k == "src_dtype":
                    ops.append(("cast", a["src_dtype"] if self.reverse else a["dst_dtype"]))
                elif k == "dst_dtype":
                    pass
                else:
                    raise AoaError("unsupported attribute %s" % k)
            if self.reverse:
                ops.reverse()
            for op, v in ops:
                if op == "permute":
                    p = parse_perm(v, len(t.shape))
                    if self.reverse:
                        p = inverse_perm(p)
                    t = permute(t, p)
                else:
                    if v not in DTYPES:
                        raise AoaError("unknown dtype %s" % v)
                    t = Tensor(v, t.shape, [cast_element(t.dtype, v, b) for b in t.data])
            env[rhs] = t
            written[rhs] = True
        out = {}
        for k in self.dst_keys:
            if k in env and written.get(k):
                out[k] = env[k]
            elif k in tensors and k not in removed:
                out[k] = tensors[k]
            else:
                raise AoaError("destination %s is produced by nothing" % k)
        return out


# ---------------------------------------------------------------- driver

def expected_shards(dst_meta, results):
    """(file, name) -> (dtype, stored shape, element bits) for every shard."""
    out = {}
    for key, info in dst_meta.items():
        t = results[key]
        if t.dtype != info["dtype"] or list(t.shape) != list(info["global_shape"]):
            raise AoaError("%s: statements give %s%s, destination wants %s%s" % (
                key, t.dtype, t.shape, info["dtype"], info["global_shape"]))
        for s in info["shards"]:
            els = shard_elements(info, s)
            shape = [len(els)] if "flat_range" in s else s["local_shape"]
            out[(s["file"], s["name"])] = (t.dtype, shape, [t.data[i] for i in els])
    return out


def load_config(path):
    with open(path) as f:
        text = f.read()
    if path.endswith(".json"):
        cfg = json.loads(text)
        stmts = []
        for s in cfg.get("aoa_statements", []):
            stmts.extend(split_statements(s))
        return stmts, bool(cfg.get("aoa_config_reverse", False))
    return split_statements(text), False


def compute(config, src_dir, dst_meta_path, reverse=False):
    stmts, cfg_reverse = load_config(config)
    tensors, src_meta = load_checkpoint(src_dir)
    with open(dst_meta_path) as f:
        dst_meta = json.load(f)["tensors"]
    eng = Engine(stmts, src_meta, dst_meta, reverse or cfg_reverse)
    results = eng.run(tensors)
    return expected_shards(dst_meta, results), dst_meta


def check(expected, run_dir):
    """Compares a conversion's output with the expected shards; returns a list
    of differences (empty when every byte matches)."""
    problems = []
    files = {}
    for (fname, name), (dtype, shape, data) in sorted(expected.items()):
        path = os.path.join(run_dir, fname)
        if path not in files:
            if not os.path.exists(path):
                problems.append("%s: missing" % fname)
                files[path] = None
            else:
                files[path] = read_safetensors(path)
        got = files[path]
        if got is None:
            continue
        if name not in got:
            problems.append("%s: tensor %s missing" % (fname, name))
            continue
        gd, gs, gdata = got[name]
        if gd != dtype or list(gs) != list(shape):
            problems.append("%s/%s: %s%s, expected %s%s" % (fname, name, gd, gs, dtype, shape))
            continue
        bad = [i for i, (x, y) in enumerate(zip(gdata, data)) if x != y]
        if bad:
            i = bad[0]
            problems.append("%s/%s: %d of %d elements differ; first at stored index %d: got 0x%x, expected 0x%x" % (
                fname, name, len(bad), len(data), i, gdata[i], data[i]))
    return problems


def self_test():
    """The element conversions against independent implementations: CPython's
    struct packing (float32, float16 round to nearest even from double) and
    the bfloat16 bit trick for values that are float32; integer rules."""
    import random
    rng = random.Random(7)
    for i in range(20000):
        bits = rng.getrandbits(64)
        x = struct.unpack("<d", struct.pack("<Q", bits))[0] if i % 2 else rng.uniform(-1, 1) * 2.0 ** rng.randint(-30, 20)
        if math.isnan(x):
            continue
        assert decode_float("float64", struct.unpack("<Q", struct.pack("<d", x))[0]) == x
        for dtype, fmt, code in (("float32", "<f", "<I"), ("float16", "<e", "<H")):
            try:
                want = struct.unpack(code, struct.pack(fmt, x))[0]
            except OverflowError:
                continue
            got = encode_float(dtype, x)
            assert got == want, (dtype, x, hex(got), hex(want))
            assert decode_float(dtype, want) == struct.unpack(fmt, struct.pack(code, want))[0] or math.isnan(
                decode_float(dtype, want))
        b32 = rng.getrandbits(32)
        f = struct.unpack("<f", struct.pack("<I", b32))[0]
        if not math.isnan(f):
            want = ((b32 + 0x7FFF + ((b32 >> 16) & 1)) >> 16) & 0xFFFF
            assert encode_float("bfloat16", f) == want, (hex(b32), hex(want))
    # ties to even: 1 + 2**-8 is halfway between two bfloat16 values
    assert encode_float("bfloat16", 1 + 2.0 ** -8) == 0x3F80
    assert encode_float("bfloat16", 1 + 3 * 2.0 ** -8) == 0x3F82
    assert cast_element("float32", "int32", encode_float("float32", -2.75)) == (-2) & 0xFFFFFFFF
    assert cast_element("int64", "float16", 2049) == encode_float("float16", 2048.0)
    assert cast_element("int64", "float16", 2051) == encode_float("float16", 2052.0)
    assert cast_element("float32", "bool", encode_float("float32", -0.5)) == 1
    assert cast_element("bool", "float32", 1) == encode_float("float32", 1.0)
    for bad in (("int32", "int8", 200), ("float32", "int8", encode_float("float32", math.nan)),
                ("float64", "uint8", encode_float("float64", -1.0))):
        try:
            cast_element(*bad)
        except AoaError:
            continue
        raise AssertionError("no error for %s" % (bad,))
    # permute / concat / split on a 2x3 iota
    t = Tensor("int32", [2, 3], list(range(6)))
    assert permute(t, [1, 0]).data == [0, 3, 1, 4, 2, 5]
    assert concat([t, t], 1).data == [0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5]
    assert slice_axis(t, 1, 1, 3).data == [1, 2, 4, 5]
    assert box_elements([2, 3], [1, 1], [1, 2]) == [4, 5]
    print("aoaref self-test: ok")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config")
    ap.add_argument("--src-dir", required=True)
    ap.add_argument("--dst", required=True)
    ap.add_argument("--reverse", action="store_true")
    ap.add_argument("-o")
    ap.add_argument("--check")
    args = ap.parse_args(argv)
    try:
        expected, dst_meta = compute(args.config, args.src_dir, args.dst, args.reverse)
    except AoaError as e:
        print("aoaref: invalid: %s" % e, file=sys.stderr)
        return 3
    if args.o:
        os.makedirs(args.o, exist_ok=True)
        by_file = {}
        for (fname, name), v in expected.items():
            by_file.setdefault(fname, {})[name] = v
        for fname, ts in by_file.items():
            write_safetensors(os.path.join(args.o, fname), ts)
        with open(os.path.join(args.o, "metadata.json"), "w") as f:
            json.dump({"format": "aoa-metadata", "version": 1, "tensors": dst_meta}, f)
    if args.check:
        problems = check(expected, args.check)
        for p in problems:
            print(p)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
