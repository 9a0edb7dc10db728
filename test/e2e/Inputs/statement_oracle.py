"""The oracle's statement mode: runs AOA statements on whole tensors, one by
one, as Paddle FlexCheckpoint's language reference describes them (rename,
concat, split, permute, casts and the fused macros), without the compiler's mappings. Imported by
expected_checkpoint.py (--statements).

Deliberately naive and written apart from the compiler's passes: every value
is a whole tensor of bit patterns, and it carries, per axis, how many even
shards the stored key it came from has along that axis (the fused macros'
tensor-parallel degree; docs/language.md: shards along the fused axis only).
A permutation moves those counts with the axes, so a fused macro reads the
count of the axis that really is its fused axis. The compiler instead walks
statements back from the fused name to a key; the two must agree.

What it models: `A -> B` (rename), `A -> B, permute='[..]'`, `A^T` on the
left, `A -> B1, .., Bn, axis=k` (even split), `A1, .., An -> B, axis=k`
(concat), and the three fused macros in all their forms. Anything else is an
error ("not modelled"), never a guess. Optimizer states: the program runs
once per suffix ("", .w_0, .moment1_0, .moment2_0) on the stored keys with
that suffix, as states follow their model key.
"""
import json
import re

import apply_mappings

volume = apply_mappings.volume
SUFFIXES = ["", ".w_0", ".moment1_0", ".moment2_0"]
ALL_SUFFIXES = SUFFIXES[1:] + [".beta1_pow_acc_0", ".beta2_pow_acc_0"]
TAGS = ("fused_ffn", "fused_qkv_old", "fused_qkv")


class StatementError(Exception):
    pass


def fail(message):
    raise StatementError(message)


class Value:
    """A whole tensor: dtype, shape, row-major bit patterns, and per axis the
    even shard count of its stored key along it (None: unknown)."""

    def __init__(self, dtype, shape, data, counts):
        self.dtype, self.shape, self.data = dtype, list(shape), data
        self.counts = list(counts)


# --------------------------------------------------------------------------
# Parsing (.aoa text: one statement per line, `;` separates, `#` comments)

NAME = re.compile(r"^(`[^`]+`|[A-Za-z_][A-Za-z0-9._$*]*)(\^T)?$")


# Right-side items: commas inside quoted values do not separate.
ITEMS = re.compile(r"""(?:[^,'"]|'[^']*'|"[^"]*")+""")


def parse_name(text, where):
    m = NAME.match(text.strip())
    if not m:
        fail("%s: cannot read the name %r" % (where, text))
    return m.group(1).strip("`"), m.group(2) is not None


def parse_statements(path):
    statements = []
    for number, line in enumerate(open(path), 1):
        for text in line.split("#", 1)[0].split(";"):
            if not text.strip():
                continue
            where = "%s:%d" % (path, number)
            if text.count("->") != 1:
                fail("%s: one '->' per statement" % where)
            left, right = text.split("->")
            lhs = [parse_name(n, where) for n in left.split(",")]
            rhs, tags, attrs = [], [], {}
            for item in ITEMS.findall(right):
                item = item.strip()
                if "=" in item:
                    k, v = (x.strip() for x in item.split("=", 1))
                    attrs[k] = v.strip("'\"") if v[:1] in "'\"" else int(v)
                elif item in TAGS:
                    tags.append(item)
                else:
                    name, transposed = parse_name(item, where)
                    if transposed:
                        fail("%s: ^T on the right" % where)
                    rhs.append(name)
            statements.append((where, lhs, rhs, tags, attrs))
    return statements


# --------------------------------------------------------------------------
# Tensors along one axis

def inner(shape, axis):
    return volume(shape[axis + 1:])


def take(v, axis, begin, end):
    """v's elements [begin, end) along `axis`."""
    n, w = v.shape[axis], inner(v.shape, axis)
    data = []
    for o in range(volume(v.shape[:axis])):
        data.extend(v.data[(o * n + begin) * w:(o * n + end) * w])
    shape = v.shape[:axis] + [end - begin] + v.shape[axis + 1:]
    counts = v.counts[:axis] + [None] + v.counts[axis + 1:]
    return Value(v.dtype, shape, data, counts)


def pieces(v, axis, n, where):
    """v cut into n equal parts along `axis`."""
    if n <= 0 or v.shape[axis] % n:
        fail("%s: %d elements on axis %d do not cut into %d equal parts"
             % (where, v.shape[axis], axis, n))
    size = v.shape[axis] // n
    return [take(v, axis, i * size, (i + 1) * size) for i in range(n)]


def join(values, axis, where):
    first = values[0]
    for v in values:
        if v.dtype != first.dtype or len(v.shape) != len(first.shape) or any(
                a != b for i, (a, b) in enumerate(zip(v.shape, first.shape)) if i != axis):
            fail("%s: cannot concatenate %s%s and %s%s along axis %d"
                 % (where, first.dtype, first.shape, v.dtype, v.shape, axis))
    data = []
    for o in range(volume(first.shape[:axis])):
        for v in values:
            w = v.shape[axis] * inner(v.shape, axis)
            data.extend(v.data[o * w:(o + 1) * w])
    shape = list(first.shape)
    shape[axis] = sum(v.shape[axis] for v in values)
    return Value(first.dtype, shape, data, [None] * len(shape))


def permute(v, perm):
    if not perm:
        perm = list(reversed(range(len(v.shape))))
    if sorted(perm) != list(range(len(v.shape))):
        fail("permutation %s of a rank-%d tensor" % (perm, len(v.shape)))
    moved = apply_mappings.Tensor(v.shape, v.data).permute(perm)
    return Value(v.dtype, moved.shape, moved.data, [v.counts[p] for p in perm])


# --------------------------------------------------------------------------
# Shard counts from metadata

def even_counts(info):
    """Per axis: the number of distinct shard intervals, if they tile the axis
    in equal parts; None otherwise."""
    shape = info["global_shape"]
    counts = []
    for axis, extent in enumerate(shape):
        spans = sorted({(s["global_offset"][axis], s["local_shape"][axis]) for s in info["shards"]})
        size = spans[0][1]
        even = size > 0 and all(o == i * size and n == size for i, (o, n) in enumerate(spans))
        counts.append(len(spans) if even and len(spans) * size == extent else None)
    return counts


def fused_count(v, axis, name, where):
    count = v.counts[axis]
    if count is None:
        fail("%s: the shards of %s along its axis %d are unknown or uneven: not modelled"
             % (where, name, axis))
    return count


def destination_count(dst_meta, key, axis, where):
    if key not in dst_meta:
        fail("%s: %s is not a destination key: not modelled" % (where, key))
    count = even_counts(dst_meta[key])[axis]
    if count is None:
        fail("%s: destination %s is not split evenly on axis %d" % (where, key, axis))
    return count


# --------------------------------------------------------------------------
# The fused layouts, written as "rank r holds block r" (not as the
# reference's piece lists)

def ffn_parts(fused, axis, t, where):
    """gate, up from a fused tensor stored [gate_r | up_r] per TP rank r."""
    gates, ups = [], []
    for block in pieces(fused, axis, t, where):
        gate, up = pieces(block, axis, 2, where)
        gates.append(gate)
        ups.append(up)
    return join(gates, axis, where), join(ups, axis, where)


def ffn_fuse(gate, up, axis, t, where):
    blocks = []
    for g, u in zip(pieces(gate, axis, t, where), pieces(up, axis, t, where)):
        blocks += [g, u]
    return join(blocks, axis, where)


def heads(v, axis, count, where):
    return pieces(v, axis, count, where)


def qkv_old_parts(fused, axis, t, h, g, where):
    """q, k, v from [Q heads of r | K heads of r | V heads of r] per rank r."""
    if h % t or g % t:
        fail("%s: %d query / %d key-value heads over %d ranks" % (where, h, g, t))
    q, k, v = [], [], []
    for block in pieces(fused, axis, t, where):
        each = heads(block, axis, (h + 2 * g) // t, where)
        q += each[:h // t]
        k += each[h // t:h // t + g // t]
        v += each[h // t + g // t:]
    return join(q, axis, where), join(k, axis, where), join(v, axis, where)


def qkv_old_fuse(q, k, v, axis, t, h, g, where):
    if h % t or g % t:
        fail("%s: %d query / %d key-value heads over %d ranks" % (where, h, g, t))
    qs, ks, vs = (pieces(x, axis, t, where) for x in (q, k, v))
    return join([x for r in range(t) for x in (qs[r], ks[r], vs[r])], axis, where)


def qkv_parts(fused, axis, h, g, where):
    """q, k, v from the grouped order: per KV head j, its H/G query heads,
    then k_j, then v_j."""
    per = h // g
    q, k, v = [], [], []
    for group in pieces(fused, axis, g, where):
        each = heads(group, axis, per + 2, where)
        q += each[:per]
        k.append(each[per])
        v.append(each[per + 1])
    return join(q, axis, where), join(k, axis, where), join(v, axis, where)


def qkv_fuse(q, k, v, axis, h, g, where):
    per = h // g
    qs, ks, vs = heads(q, axis, h, where), heads(k, axis, g, where), heads(v, axis, g, where)
    return join([x for j in range(g) for x in qs[j * per:(j + 1) * per] + [ks[j], vs[j]]],
                axis, where)


# --------------------------------------------------------------------------
# Running a program

def run_statement(env, statement, dst_meta, suffix):
    where, lhs, rhs, tags, attrs = statement

    def read(name, transposed):
        if name not in env:
            fail("%s: %s is unknown" % (where, name))
        return permute(env[name], []) if transposed else env[name]

    sources = [read(n, t) for n, t in lhs]
    rank = len(sources[0].shape)
    axis = attrs.get("axis", 1)
    axis = axis + rank if axis < 0 else axis
    if not tags:
        if len(lhs) == 1 and len(rhs) == 1:
            value = sources[0]
            if "permute" in attrs:
                value = permute(value, json.loads(attrs["permute"]))
            if set(attrs) - {"permute", "axis"}:
                fail("%s: attributes %s: not modelled" % (where, sorted(attrs)))
            env[rhs[0]] = value
        elif len(lhs) == 1:
            for name, part in zip(rhs, pieces(sources[0], axis, len(rhs), where)):
                env[name] = part
        else:
            env[rhs[0]] = join(sources, axis, where)
        return
    tag = tags[0]
    h, g = attrs.get("num_heads"), attrs.get("num_key_value_groups")
    # Destination counts are the model key's: states follow it.
    dst_key = rhs[0] + suffix if len(rhs) == 1 else None
    if tag == "fused_ffn":
        if len(lhs) == 1:
            gate, up = ffn_parts(sources[0], axis, fused_count(sources[0], axis, lhs[0][0], where), where)
        else:
            gate, up = sources
        if len(rhs) == 2:
            env[rhs[0]], env[rhs[1]] = gate, up
        else:
            t = destination_count(dst_meta, dst_key, axis, where)
            env[rhs[0]] = ffn_fuse(gate, up, axis, t, where)
    elif tag == "fused_qkv_old":
        if len(lhs) == 1:
            t = fused_count(sources[0], axis, lhs[0][0], where)
            q, k, v = qkv_old_parts(sources[0], axis, t, h, g, where)
        else:
            q, k, v = sources
        if len(rhs) == 3:
            env[rhs[0]], env[rhs[1]], env[rhs[2]] = q, k, v
        else:
            t = destination_count(dst_meta, dst_key, axis, where)
            env[rhs[0]] = qkv_old_fuse(q, k, v, axis, t, h, g, where)
    else:  # fused_qkv
        if len(lhs) == 1:
            env[rhs[0]], env[rhs[1]], env[rhs[2]] = qkv_parts(sources[0], axis, h, g, where)
        else:
            env[rhs[0]] = qkv_fuse(*sources, axis, h, g, where)


def model_key(key):
    for s in ALL_SUFFIXES:
        if key.endswith(s):
            return key[:-len(s)], s
    return key, ""


def run(src_meta, src_keys, statements, dst_meta):
    """key -> (dtype, shape, bits) of every destination key."""
    out = {}
    for suffix in SUFFIXES:
        env = {}
        for key, info in src_meta.items():
            model, s = model_key(key)
            if s == suffix:
                k = src_keys[key]
                env[model] = Value(k.dtype, k.shape, k.data, even_counts(info))
        if not env:
            continue
        for statement in statements:
            run_statement(env, statement, dst_meta, suffix)
        for key, info in dst_meta.items():
            model, s = model_key(key)
            if s != suffix:
                continue
            if model not in env:
                fail("destination %s: no statement writes %s and the source has no such key"
                     % (key, model))
            v = env[model]
            if v.dtype != info["dtype"] or v.shape != info["global_shape"]:
                fail("destination %s is %s%s, the statements give %s%s"
                     % (key, info["dtype"], info["global_shape"], v.dtype, v.shape))
            out[key] = (v.dtype, v.shape, v.data)
    missing = sorted(k for k in dst_meta if k not in out)
    if missing:
        fail("destination keys not modelled: %s" % missing[:5])
    return out
