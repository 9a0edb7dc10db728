#!/usr/bin/env python3
"""Executes an aoa plan (the text of `aoa-compile --emit=plan`) on labelled
data, independently of the compiler and of the runtime, so lit tests can
check where every element lands and what every rank does.

Every source element is labelled `key[i,j]` (its global coordinates in its
key). Each source stored tensor of the plan is built from the source
metadata: a 1-D list holding its box's row-major flattening, or elements
[a, b) of it for a `flat [a:b]` tensor. Then every round runs on every rank,
in the order the plan model prescribes (reads, then the round's sends and
receives posted together, then copies, then writes):

  %N = read src T [REGION] : TYPE     REGION (global key coordinates) of T
  send P %A, %B                       one message to rank P
  %A, %B = recv P : TYPE, TYPE        its matching message from rank P
  %N = copy %IN ["STEP", ...] : TYPE  permutations "[p0, p1]" (new axis i
                                      is old axis p[i]), dtype casts (labels
                                      unchanged), "reshape:[c0, c1, r...]",
                                      "flatten:[c0, c1, r...]"
  write dst T [REGION] %N             the buffer into REGION of T

It checks that the plan is well formed (ids, sections, one definition per
buffer per round, phases in order, no two tensors of one name in a file),
that declared buffer types match what the instructions produce, that regions
lie inside the stored tensors (flat ranges included), that a rank reads and
writes only the files it owns (any rank may read any source file of a plan
with `source-access shared`), that every receive has a matching send in the
same round with identical buffer types, that the source tensors are shards
of the source metadata (and, with --dst, that the destination tensors are
exactly the shards of the destination metadata), that every destination
stored element is written exactly once, and that every rank's buffers of a
round fit the plan's memory budget, unless they all hold the data of one
transfer (one read or one received buffer, and the copies made from it),
which is reported on stdout as `over budget: ...`.

  run_plan.py SRC_META PLAN [--dst DST_META] [--print KEY ...] [--strip P]
                            [--compare-mappings MAPPINGS] [--stats]

  --print KEY       prints KEY assembled from all of its stored shards
                    (replicas must agree) row by row: `KEY[i]: label ...`
  --compare-mappings MAPPINGS
                    checks that every destination key equals what
                    apply_mappings.py computes from the --emit=mappings answer
  --stats           prints the per-rank table of the compiler's cost summary
                    (instructions, read, sent, received, written, peak
                    buffers), computed from the plan text

Errors go to stderr and exit with status 1.
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside apply_mappings.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "passes", "Inputs"))
import apply_mappings  # noqa: E402

DTYPE_SIZES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2,
               "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1,
               "bool": 1}


class PlanError(Exception):
    pass


def fail(message):
    raise PlanError(message)


volume = apply_mappings.volume
strides = apply_mappings.strides


def coords(shape):
    return apply_mappings.coords(list(shape))


def box_shape(box):
    return [e - b for b, e in box]


def box_text(box):
    return "[" + ", ".join("%d:%d" % (b, e) for b, e in box) + "]"


def type_text(dtype, shape):
    return "%s[%s]" % (dtype, ", ".join(map(str, shape)))


def label(key, c):
    return "%s[%s]" % (key, ",".join(map(str, c)))


# --------------------------------------------------------------------------
# Parsing

class Line:
    """A cursor over one line of plan text."""

    def __init__(self, text, number):
        self.text = text
        self.pos = 0
        self.number = number

    def error(self, what):
        fail("plan line %d: %s at column %d: %s"
             % (self.number, what, self.pos + 1, self.text.strip()))

    def space(self):
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def at_end(self):
        self.space()
        return self.pos >= len(self.text)

    def peek(self, literal):
        self.space()
        return self.text.startswith(literal, self.pos)

    def expect(self, literal):
        if not self.peek(literal):
            self.error("expected '%s'" % literal)
        self.pos += len(literal)

    def word(self):
        self.space()
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum()
                                             or self.text[self.pos] in "_-"):
            self.pos += 1
        if start == self.pos:
            self.error("expected a word")
        return self.text[start:self.pos]

    def integer(self):
        self.space()
        start = self.pos
        if self.pos < len(self.text) and self.text[self.pos] == "-":
            self.pos += 1
        while self.pos < len(self.text) and self.text[self.pos].isdigit():
            self.pos += 1
        if start == self.pos or self.text[start:self.pos] == "-":
            self.error("expected an integer")
        return int(self.text[start:self.pos])

    def string(self):
        self.space()
        if not self.peek('"'):
            self.error("expected a quoted string")
        try:
            value, end = json.JSONDecoder().raw_decode(self.text, self.pos)
        except ValueError:
            self.error("bad string")
        self.pos = end
        return value

    def buffer(self):
        self.expect("%")
        return self.integer()

    def buffer_list(self):
        ids = [self.buffer()]
        while self.peek(","):
            self.expect(",")
            ids.append(self.buffer())
        return ids

    def int_list(self):
        self.expect("[")
        values = []
        if not self.peek("]"):
            values.append(self.integer())
            while self.peek(","):
                self.expect(",")
                values.append(self.integer())
        self.expect("]")
        return values

    def box(self):
        self.expect("[")
        dims = []
        if not self.peek("]"):
            while True:
                b = self.integer()
                self.expect(":")
                e = self.integer()
                if not 0 <= b <= e:
                    self.error("bad interval %d:%d" % (b, e))
                dims.append((b, e))
                if not self.peek(","):
                    break
                self.expect(",")
        self.expect("]")
        return dims

    def type(self):
        dtype = self.word()
        if dtype not in DTYPE_SIZES:
            self.error("unknown dtype '%s'" % dtype)
        return dtype, self.int_list()

    def string_list(self):
        self.expect("[")
        items = []
        if not self.peek("]"):
            items.append(self.string())
            while self.peek(","):
                self.expect(",")
                items.append(self.string())
        self.expect("]")
        return items

    def done(self):
        if not self.at_end():
            self.error("unexpected text")


class Plan:
    def __init__(self):
        self.version = None
        self.destination_format = "aoa"
        self.source_access = "owner"
        self.copied_files = []
        self.ranks = None
        self.budget = None
        self.source_files = []
        self.destination_files = []
        self.source_tensors = []
        self.destination_tensors = []
        self.added_keys = []
        self.programs = []  # per rank: list of rounds: list of instructions


def parse_tensor(line):
    t = {}
    line.expect("file")
    t["file"] = line.integer()
    line.expect("name")
    t["name"] = line.string()
    line.expect("key")
    t["key"] = line.string()
    t["dtype"], t["global_shape"] = line.type()
    line.expect("box")
    t["box"] = line.box()
    t["flat"] = None
    if line.peek("flat"):
        line.expect("flat")
        line.expect("[")
        a = line.integer()
        line.expect(":")
        b = line.integer()
        line.expect("]")
        t["flat"] = (a, b)
    # Version 3: the tensor's data_offsets when compiled (not checked here).
    if line.peek("data"):
        line.expect("data")
        line.expect("[")
        line.integer()
        line.expect(":")
        line.integer()
        line.expect("]")
    line.done()
    return t


def parse_instruction(line):
    ins = {"line": line.number}
    if line.peek("send"):
        line.expect("send")
        ins["op"] = "send"
        ins["peer"] = line.integer()
        ins["buffers"] = line.buffer_list()
    elif line.peek("write"):
        line.expect("write")
        line.expect("dst")
        ins["op"] = "write"
        ins["tensor"] = line.integer()
        ins["region"] = line.box()
        ins["buffer"] = line.buffer()
    else:
        outs = line.buffer_list()
        line.expect("=")
        op = line.word()
        ins["op"] = op
        if op == "recv":
            ins["buffers"] = outs
            ins["peer"] = line.integer()
            line.expect(":")
            types = [line.type()]
            while line.peek(","):
                line.expect(",")
                types.append(line.type())
            if len(types) != len(outs):
                line.error("%d buffers but %d types" % (len(outs), len(types)))
            ins["types"] = types
        else:
            if len(outs) != 1:
                line.error("'%s' defines one buffer" % op)
            ins["buffer"] = outs[0]
            if op == "read":
                line.expect("src")
                ins["tensor"] = line.integer()
                ins["region"] = line.box()
            elif op == "copy":
                ins["input"] = line.buffer()
                ins["steps"] = line.string_list()
            else:
                line.error("unknown instruction '%s'" % op)
            line.expect(":")
            ins["type"] = line.type()
    line.done()
    return ins


def parse_plan(text):
    plan = Plan()
    order = ["aoa-plan", "ranks", "memory-budget", "destination-format",
             "source-access", "source-file", "destination-file", "source-tensor",
             "destination-tensor", "added-key", "copy-file", "rank"]
    section = -1
    current_rank = None
    current_round = None
    for number, raw in enumerate(text.split("\n"), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        line = Line(raw, number)
        indented = raw[0] in " \t"
        if indented and current_rank is not None and not line.peek("round"):
            if current_round is None:
                line.error("an instruction outside a round")
            current_round.append(parse_instruction(line))
            continue
        word = line.word()
        if word == "round":
            if current_rank is None:
                line.error("a round outside a rank")
            k = line.integer()
            line.done()
            if k != len(plan.programs[current_rank]):
                line.error("round %d where round %d was expected"
                           % (k, len(plan.programs[current_rank])))
            current_round = []
            plan.programs[current_rank].append(current_round)
            continue
        if word not in order:
            line.error("unknown line '%s'" % word)
        at = order.index(word)
        if at < section or (at == section and word in ("aoa-plan", "ranks", "memory-budget", "destination-format", "source-access")):
            line.error("'%s' out of order" % word)
        section = at
        if word == "aoa-plan":
            plan.version = line.integer()
            if plan.version not in (1, 2, 3):
                line.error("unknown version %d" % plan.version)
        elif word == "ranks":
            plan.ranks = line.integer()
        elif word == "memory-budget":
            plan.budget = line.integer()
        elif word in ("source-file", "destination-file"):
            files = plan.source_files if word == "source-file" else plan.destination_files
            i = line.integer()
            if i != len(files):
                line.error("id %d where %d was expected" % (i, len(files)))
            line.expect("rank")
            rank = line.integer()
            path = line.string()
            # Version 3: a source file's size when compiled (not checked here).
            if line.peek("size"):
                line.expect("size")
                line.integer()
            files.append({"rank": rank, "path": path})
        elif word in ("source-tensor", "destination-tensor"):
            tensors = plan.source_tensors if word == "source-tensor" else plan.destination_tensors
            i = line.integer()
            if i != len(tensors):
                line.error("id %d where %d was expected" % (i, len(tensors)))
            tensors.append(parse_tensor(line))
            continue
        elif word == "added-key":
            plan.added_keys.append(line.string())
        elif word in ("destination-format", "copy-file"):
            # Version 2: how the destination directory is presented; what
            # is copied beside it. Neither changes where elements land.
            if plan.version < 2:
                line.error("'%s' needs plan version 2" % word)
            if word == "destination-format":
                plan.destination_format = line.word()
                if plan.destination_format not in ("aoa", "huggingface"):
                    line.error("unknown destination format '%s'" % plan.destination_format)
            else:
                plan.copied_files.append(line.string())
        elif word == "source-access":
            # Version 3: which ranks may read a source file.
            if plan.version < 3:
                line.error("'source-access' needs plan version 3")
            plan.source_access = line.word()
            if plan.source_access not in ("owner", "shared"):
                line.error("unknown source access '%s'" % plan.source_access)
        elif word == "rank":
            r = line.integer()
            if r != len(plan.programs):
                line.error("rank %d where rank %d was expected" % (r, len(plan.programs)))
            plan.programs.append([])
            current_rank = r
            current_round = None
        line.done()
    if plan.version is None or plan.ranks is None or plan.budget is None:
        fail("plan: missing 'aoa-plan', 'ranks' or 'memory-budget'")
    if len(plan.programs) != plan.ranks:
        fail("plan: %d rank blocks for %d ranks" % (len(plan.programs), plan.ranks))
    counts = set(len(p) for p in plan.programs)
    if len(counts) > 1:
        fail("plan: ranks have different round counts %s" % sorted(counts))
    return plan


# --------------------------------------------------------------------------
# Checking the declarations against the metadata

def check_tensors(plan, files, tensors, meta, side):
    """Every plan tensor is a shard of `meta`; returns the stored tensors'
    element storage (1-D lists) after validation."""
    for i, f in enumerate(files):
        if not 0 <= f["rank"] < plan.ranks:
            fail("%s-file %d: rank %d out of range" % (side, i, f["rank"]))
    shards = {}
    if meta is not None:
        for key, info in meta["tensors"].items():
            for s in info["shards"]:
                ident = (s["rank"], s["file"], s["name"])
                shards.setdefault(ident, []).append((key, info, s))
    names = {}
    for i, t in enumerate(tensors):
        where = "%s-tensor %d (%s)" % (side, i, t["name"])
        if not 0 <= t["file"] < len(files):
            fail("%s: file %d is not declared" % (where, t["file"]))
        if (t["file"], t["name"]) in names:
            fail("%s: %s file %s already holds a tensor of that name (%s-tensor %d)"
                 % (where, side, files[t["file"]]["path"], side, names[(t["file"], t["name"])]))
        names[(t["file"], t["name"])] = i
        if len(t["box"]) != len(t["global_shape"]):
            fail("%s: box %s does not match %s" % (where, box_text(t["box"]), t["global_shape"]))
        for (b, e), n in zip(t["box"], t["global_shape"]):
            if e > n:
                fail("%s: box %s outside the key's shape %s"
                     % (where, box_text(t["box"]), t["global_shape"]))
        if t["flat"] is not None:
            a, b = t["flat"]
            if not 0 <= a < b <= volume(box_shape(t["box"])):
                fail("%s: flat range [%d:%d] outside its box of %d elements"
                     % (where, a, b, volume(box_shape(t["box"]))))
        if meta is None:
            continue
        f = files[t["file"]]
        found = shards.get((f["rank"], f["path"], t["name"]), [])
        ok = False
        for key, info, s in found:
            box = [(o, o + n) for o, n in zip(s["global_offset"], s["local_shape"])]
            flat = tuple(s["flat_range"]) if s.get("flat_range") is not None else None
            if (key == t["key"] and info["dtype"] == t["dtype"]
                    and list(info["global_shape"]) == t["global_shape"]
                    and box == t["box"] and flat == t["flat"]):
                ok = True
        if not ok:
            fail("%s: no shard of the %s metadata is key %s %s box %s%s in file %s of rank %d"
                 % (where, side, t["key"], type_text(t["dtype"], t["global_shape"]),
                    box_text(t["box"]),
                    "" if t["flat"] is None else " flat [%d:%d]" % t["flat"],
                    f["path"], f["rank"]))


def check_destination_complete(plan, meta):
    """With --dst: the destination tensors are exactly the shards of `meta`
    (less added keys)."""
    declared = {}
    for t in plan.destination_tensors:
        f = plan.destination_files[t["file"]]
        ident = (f["rank"], f["path"], t["name"])
        if ident in declared:
            fail("destination tensor %s in file %s of rank %d declared twice"
                 % (t["name"], f["path"], f["rank"]))
        declared[ident] = t
    for key, info in sorted(meta["tensors"].items()):
        if key in plan.added_keys:
            continue
        for s in info["shards"]:
            if (s["rank"], s["file"], s["name"]) not in declared:
                fail("destination shard %s (key %s, offset %s) in file %s of rank %d has no destination-tensor"
                     % (s["name"], key, s["global_offset"], s["file"], s["rank"]))


# --------------------------------------------------------------------------
# Stored tensors and regions

def stored_indices(t, region, what):
    """The stored (1-D) indices of `region` (global key coordinates) in
    tensor t, in the region's row-major order."""
    box = t["box"]
    if len(region) != len(box):
        fail("%s: region %s has rank %d, tensor box %s" % (what, box_text(region), len(region), box_text(box)))
    for (rb, re_), (bb, be) in zip(region, box):
        if not (bb <= rb and re_ <= be):
            fail("%s: region %s is not inside the stored box %s" % (what, box_text(region), box_text(box)))
    st = strides(box_shape(box))
    origin = [b for b, _ in region]
    a, b = t["flat"] if t["flat"] is not None else (0, volume(box_shape(box)))
    out = []
    for c in coords(box_shape(region)):
        index = sum((o + x - bb) * s for o, x, (bb, _), s in zip(origin, c, box, st))
        if not a <= index < b:
            fail("%s: region %s is not inside the stored range [%d:%d] of box %s (element at flat index %d)"
                 % (what, box_text(region), a, b, box_text(box), index))
        out.append(index - a)
    return out


def source_storage(t):
    """The labels a source tensor stores."""
    box = t["box"]
    shape = box_shape(box)
    labels = [label(t["key"], [b + x for (b, _), x in zip(box, c)]) for c in coords(shape)]
    if t["flat"] is not None:
        labels = labels[t["flat"][0]:t["flat"][1]]
    return labels


def storage_size(t):
    if t["flat"] is not None:
        return t["flat"][1] - t["flat"][0]
    return volume(box_shape(t["box"]))


# --------------------------------------------------------------------------
# Transforms

def permute(shape, data, perm):
    new_shape = [shape[p] for p in perm]
    old_strides = strides(shape)
    out = []
    for c in coords(new_shape):
        out.append(data[sum(c[i] * old_strides[perm[i]] for i in range(len(perm)))])
    return new_shape, out


def apply_steps(dtype, shape, data, steps, what):
    for step in steps:
        if step.startswith("["):
            perm = json.loads(step)
            if sorted(perm) != list(range(len(shape))):
                fail("%s: permutation %s does not fit shape %s" % (what, step, shape))
            shape, data = permute(shape, data, perm)
        elif step.startswith("reshape:"):
            canon = json.loads(step[len("reshape:"):])
            if len(shape) != 2 or shape[0] % canon[1] or shape[1] != volume(canon[2:]):
                fail("%s: %s does not apply to shape %s" % (what, step, shape))
            shape = [shape[0] // canon[1]] + canon[1:]
        elif step.startswith("flatten:"):
            canon = json.loads(step[len("flatten:"):])
            if len(shape) != len(canon) or shape[1:] != canon[1:]:
                fail("%s: %s does not apply to shape %s" % (what, step, shape))
            shape = [shape[0] * canon[1], volume(canon[2:])]
        elif step in DTYPE_SIZES:
            dtype = step
        else:
            fail("%s: unknown transform step '%s'" % (what, step))
    return dtype, shape, data


# --------------------------------------------------------------------------
# Execution

PHASES = {"read": 0, "send": 1, "recv": 1, "copy": 2, "write": 3}


class Buffer:
    def __init__(self, dtype, shape, data, root):
        self.dtype, self.shape, self.data = dtype, list(shape), data
        self.root = root  # the read or receive this buffer's data came from

    def bytes(self):
        return volume(self.shape) * DTYPE_SIZES[self.dtype]


def execute(plan):
    """Runs every round on every rank; returns (destination storage, stats,
    over-budget notes)."""
    sources = [source_storage(t) for t in plan.source_tensors]
    dest = [[None] * storage_size(t) for t in plan.destination_tensors]
    writes = [[0] * storage_size(t) for t in plan.destination_tensors]
    stats = [dict(instructions=0, read=0, sent=0, received=0, written=0, peak=0)
             for _ in range(plan.ranks)]
    notes = []
    rounds = len(plan.programs[0]) if plan.programs else 0
    for k in range(rounds):
        buffers = [dict() for _ in range(plan.ranks)]
        messages = {}  # (from, to) -> list of lists of Buffers
        received = set()

        def where(rank, ins):
            return "rank %d round %d (plan line %d)" % (rank, k, ins["line"])

        def define(rank, ins, buf_id, buf):
            if buf_id in buffers[rank]:
                fail("%s: buffer %%%d defined twice" % (where(rank, ins), buf_id))
            buffers[rank][buf_id] = buf

        def use(rank, ins, buf_id):
            if buf_id not in buffers[rank]:
                fail("%s: buffer %%%d used before it is defined" % (where(rank, ins), buf_id))
            return buffers[rank][buf_id]

        def check_type(rank, ins, declared, dtype, shape):
            if declared != (dtype, list(shape)):
                fail("%s: declared %s, but the data is %s"
                     % (where(rank, ins), type_text(*declared), type_text(dtype, shape)))

        programs = [plan.programs[r][k] for r in range(plan.ranks)]
        for r, program in enumerate(programs):
            phase = 0
            for ins in program:
                if PHASES[ins["op"]] < phase:
                    fail("%s: '%s' after a later phase (a round is reads, then sends and receives, then copies, then writes)"
                         % (where(r, ins), ins["op"]))
                phase = PHASES[ins["op"]]
            stats[r]["instructions"] += len(program)
        # Phase 0: reads.
        for r, program in enumerate(programs):
            for ins in program:
                if ins["op"] != "read":
                    continue
                if not 0 <= ins["tensor"] < len(plan.source_tensors):
                    fail("%s: source tensor %d is not declared" % (where(r, ins), ins["tensor"]))
                t = plan.source_tensors[ins["tensor"]]
                owner = plan.source_files[t["file"]]["rank"]
                if owner != r and plan.source_access != "shared":
                    fail("%s: reads source tensor %d of rank %d's file" % (where(r, ins), ins["tensor"], owner))
                idx = stored_indices(t, ins["region"], where(r, ins))
                shape = box_shape(ins["region"])
                check_type(r, ins, ins["type"], t["dtype"], shape)
                buf = Buffer(t["dtype"], shape, [sources[ins["tensor"]][i] for i in idx], None)
                buf.root = buf
                buf.what = "read src %d %s" % (ins["tensor"], box_text(ins["region"]))
                define(r, ins, ins["buffer"], buf)
                stats[r]["read"] += buf.bytes()
        # Phase 1: every send is posted, then every receive completes.
        for r, program in enumerate(programs):
            for ins in program:
                if ins["op"] != "send":
                    continue
                if not 0 <= ins["peer"] < plan.ranks or ins["peer"] == r:
                    fail("%s: send to bad peer %d" % (where(r, ins), ins["peer"]))
                bufs = [use(r, ins, b) for b in ins["buffers"]]
                messages.setdefault((r, ins["peer"]), []).append((ins, bufs))
                stats[r]["sent"] += sum(b.bytes() for b in bufs)
        for r, program in enumerate(programs):
            for ins in program:
                if ins["op"] != "recv":
                    continue
                queue = messages.get((ins["peer"], r), [])
                if not queue:
                    fail("%s: receive from rank %d has no matching send in the same round"
                         % (where(r, ins), ins["peer"]))
                send, bufs = queue.pop(0)
                theirs = [(b.dtype, b.shape) for b in bufs]
                mine = [(d, list(s)) for d, s in ins["types"]]
                if theirs != mine:
                    fail("%s: receives %s, but rank %d sends %s (plan line %d)"
                         % (where(r, ins), ", ".join(type_text(*t) for t in mine), ins["peer"],
                            ", ".join(type_text(*t) for t in theirs), send["line"]))
                for b_id, b in zip(ins["buffers"], bufs):
                    buf = Buffer(b.dtype, b.shape, list(b.data), None)
                    buf.root = buf
                    buf.what = "received from rank %d: %s" % (ins["peer"], b.what)
                    define(r, ins, b_id, buf)
                    stats[r]["received"] += buf.bytes()
        for (src, dst), queue in sorted(messages.items()):
            if queue:
                fail("rank %d round %d (plan line %d): send to rank %d has no matching receive"
                     % (src, k, queue[0][0]["line"], dst))
        # Phases 2 and 3: copies and writes, in order.
        for r, program in enumerate(programs):
            for ins in program:
                if ins["op"] == "copy":
                    src = use(r, ins, ins["input"])
                    dtype, shape, data = apply_steps(src.dtype, src.shape, src.data,
                                                     ins["steps"], where(r, ins))
                    check_type(r, ins, ins["type"], dtype, shape)
                    buf = Buffer(dtype, shape, data, src.root)
                    define(r, ins, ins["buffer"], buf)
                elif ins["op"] == "write":
                    if not 0 <= ins["tensor"] < len(plan.destination_tensors):
                        fail("%s: destination tensor %d is not declared" % (where(r, ins), ins["tensor"]))
                    t = plan.destination_tensors[ins["tensor"]]
                    owner = plan.destination_files[t["file"]]["rank"]
                    if owner != r:
                        fail("%s: writes destination tensor %d of rank %d's file"
                             % (where(r, ins), ins["tensor"], owner))
                    buf = use(r, ins, ins["buffer"])
                    shape = box_shape(ins["region"])
                    if (buf.dtype, buf.shape) != (t["dtype"], shape):
                        fail("%s: writes a %s buffer into %s region %s"
                             % (where(r, ins), type_text(buf.dtype, buf.shape), t["dtype"],
                                box_text(ins["region"])))
                    idx = stored_indices(t, ins["region"], where(r, ins))
                    for i, value in zip(idx, buf.data):
                        writes[ins["tensor"]][i] += 1
                        dest[ins["tensor"]][i] = value
                    stats[r]["written"] += buf.bytes()
        # The round's buffers on each rank, against the budget.
        for r in range(plan.ranks):
            total = sum(b.bytes() for b in buffers[r].values())
            stats[r]["peak"] = max(stats[r]["peak"], total)
            if plan.budget > 0 and total > plan.budget:
                roots = []
                for b in buffers[r].values():
                    if not any(x is b.root for x in roots):
                        roots.append(b.root)
                if len(roots) != 1:
                    fail("rank %d round %d: %d bytes of buffers from %d transfers exceed the memory budget of %d"
                         % (r, k, total, len(roots), plan.budget))
                notes.append("over budget: rank %d round %d: %d bytes of buffers > %d, one transfer of %d bytes (%s)"
                             % (r, k, total, plan.budget, roots[0].bytes(), roots[0].what))
    for i, t in enumerate(plan.destination_tensors):
        bad = [j for j, n in enumerate(writes[i]) if n != 1]
        if bad:
            j = bad[0]
            fail("destination-tensor %d (%s, key %s): stored element %d written %d times (%d elements not written exactly once)"
                 % (i, t["name"], t["key"], j, writes[i][j], len(bad)))
    return dest, stats, notes


# --------------------------------------------------------------------------
# Assembling destination keys

def assemble(plan, dest):
    """key -> apply_mappings.Tensor of the global key, from all its stored
    tensors; replicas must agree and every element must be stored."""
    out = {}
    for i, t in enumerate(plan.destination_tensors):
        g = out.setdefault(t["key"], apply_mappings.Tensor(t["global_shape"]))
        if g.shape != t["global_shape"]:
            fail("key %s declared with shapes %s and %s" % (t["key"], g.shape, t["global_shape"]))
        box = t["box"]
        st = strides(box_shape(box))
        a = t["flat"][0] if t["flat"] is not None else 0
        for j, value in enumerate(dest[i]):
            flat = a + j
            c = []
            for s in st:
                c.append(flat // s)
                flat %= s
            at = g.index([b + x for (b, _), x in zip(box, c)])
            if g.data[at] is not None and g.data[at] != value:
                fail("key %s: replicas disagree at flat index %d: %s and %s"
                     % (t["key"], at, g.data[at], value))
            g.data[at] = value
    for key, g in out.items():
        holes = [j for j, x in enumerate(g.data) if x is None]
        if holes:
            fail("key %s: %d elements are in no destination tensor (first: flat index %d)"
                 % (key, len(holes), holes[0]))
    return out


def size_cell(n):
    """The compiler summary's cell: `512 B`, or `1.50 KiB (1536 B)`."""
    if -1024 < n < 1024:
        return "%d B" % n
    units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    value = n / 1024.0
    unit = 0
    while (value >= 1024 or value <= -1024) and unit + 1 < len(units):
        value /= 1024.0
        unit += 1
    return "%.2f %s (%d B)" % (value, units[unit], n)


def print_table(plan, stats):
    rows = [["rank", "instructions", "read", "sent", "received", "written", "peak buffers"]]
    total = dict(instructions=0, read=0, sent=0, received=0, written=0, peak=0)
    for r, s in enumerate(stats):
        over = plan.budget > 0 and s["peak"] > plan.budget
        rows.append([str(r), str(s["instructions"]), size_cell(s["read"]), size_cell(s["sent"]),
                     size_cell(s["received"]), size_cell(s["written"]),
                     size_cell(s["peak"]) + (" !" if over else "")])
        for k in total:
            total[k] = max(total[k], s[k]) if k == "peak" else total[k] + s[k]
    rows.append(["total", str(total["instructions"]), size_cell(total["read"]),
                 size_cell(total["sent"]), size_cell(total["received"]),
                 size_cell(total["written"]), "max " + size_cell(total["peak"])])
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    for row in rows:
        cells = [row[0].ljust(widths[0])] + ["  " + cell.rjust(w) for cell, w in zip(row[1:], widths[1:])]
        print("".join(cells).rstrip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src_meta")
    ap.add_argument("plan")
    ap.add_argument("--dst", help="destination metadata: every shard must be a destination tensor")
    ap.add_argument("--print", action="append", default=[])
    ap.add_argument("--strip", default="", help="prefix removed from printed labels")
    ap.add_argument("--compare-mappings")
    ap.add_argument("--stats", action="store_true")
    args = ap.parse_args()
    try:
        src_meta = json.load(open(args.src_meta))
        plan = parse_plan(open(args.plan).read())
        check_tensors(plan, plan.source_files, plan.source_tensors, src_meta, "source")
        dst_meta = json.load(open(args.dst)) if args.dst else None
        check_tensors(plan, plan.destination_files, plan.destination_tensors, dst_meta, "destination")
        if dst_meta is not None:
            check_destination_complete(plan, dst_meta)
        dest, stats, notes = execute(plan)
        keys = assemble(plan, dest)
        for note in notes:
            print(note)
        if args.stats:
            print_table(plan, stats)
        for key in args.print:
            if key not in keys:
                fail("--print %s: no destination tensor of that key" % key)
            t = keys[key]
            rows = t.shape[0] if t.shape else 1
            width = len(t.data) // rows if rows else 0
            for r in range(rows):
                labels = [x[len(args.strip):] if x.startswith(args.strip) else x
                          for x in t.data[r * width:(r + 1) * width]]
                print("%s[%d]: %s" % (key[len(args.strip):], r, " ".join(labels)))
        if args.compare_mappings:
            sources = apply_mappings.labelled_sources(src_meta)
            expected = apply_mappings.apply(sources, json.load(open(args.compare_mappings))["mappings"])
            differ = []
            for key in sorted(set(keys) | set(expected)):
                if key not in keys:
                    if key not in plan.added_keys:
                        differ.append("%s: in the mappings, not in the plan" % key)
                elif key not in expected:
                    differ.append("%s: in the plan, not in the mappings" % key)
                elif keys[key].data != expected[key].data:
                    j = next(i for i, (a, b) in enumerate(zip(keys[key].data, expected[key].data)) if a != b)
                    differ.append("%s: element %d is %s, the mappings say %s"
                                  % (key, j, keys[key].data[j], expected[key].data[j]))
            for d in differ:
                print("differs: " + d)
            print("compare-mappings: %d keys, %d differ" % (len(keys), len(differ)))
            if differ:
                return 1
        total = sum(storage_size(t) for t in plan.destination_tensors)
        print("executed: %d ranks, %d rounds, %d destination tensors, %d elements written once"
              % (plan.ranks, len(plan.programs[0]) if plan.programs else 0,
                 len(plan.destination_tensors), total))
    except PlanError as e:
        sys.stderr.write("run_plan.py: error: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
