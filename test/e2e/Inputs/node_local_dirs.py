"""Per-rank directories for the tests of aoa-run --node-local, from a plan's
text form (aoa-compile --emit=plan-text): the files each rank reads and
writes are its `source-file ... rank R` and `destination-file ... rank R`
lines.

  node_local_dirs.py split PLAN SRC OUT
      copies each source file of SRC to OUT/rankR (R: the rank that reads
      it; every rank gets a directory, empty when it reads nothing), and the
      plan's copy-file files and SRC/metadata.json (when there is one) to
      OUT/rank0 only.
  node_local_dirs.py check PLAN DST
      checks that DST/rankR holds exactly rank R's destination files, plus,
      for rank 0, metadata.json, the copied files and a Hugging Face index
      (when the plan writes one), and prints one line per rank.
  node_local_dirs.py merge PLAN DST OUT
      copies every DST/rankR into OUT (one directory, for diff -r).
"""
import os
import shlex
import shutil
import sys


def read_plan(path):
    plan = {"ranks": 0, "sources": [], "destinations": [], "copied": [],
            "huggingface": False}
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = shlex.split(line)
            if not words:
                continue
            if words[0] == "ranks":
                plan["ranks"] = int(words[1])
            elif words[0] == "destination-format":
                plan["huggingface"] = words[1] == "huggingface"
            elif words[0] in ("source-file", "destination-file"):
                key = "sources" if words[0] == "source-file" else "destinations"
                plan[key].append((int(words[3]), words[4]))
            elif words[0] == "copy-file":
                plan["copied"].append(words[1])
    return plan


def files_beneath(directory):
    found = set()
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            found.add(os.path.relpath(path, directory))
    return found


def split(plan, src, out):
    for rank in range(plan["ranks"]):
        os.makedirs(os.path.join(out, "rank%d" % rank), exist_ok=True)
    wanted = list(plan["sources"]) + [(0, path) for path in plan["copied"]]
    if os.path.exists(os.path.join(src, "metadata.json")):
        wanted.append((0, "metadata.json"))
    for rank, path in wanted:
        target = os.path.join(out, "rank%d" % rank, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(src, path), target)


def check(plan, dst):
    good = True
    destination_count = len(plan["destinations"])
    for rank in range(plan["ranks"]):
        expected = {os.path.normpath(path)
                    for owner, path in plan["destinations"] if owner == rank}
        if rank == 0:
            expected.add("metadata.json")
            expected.update(os.path.normpath(path) for path in plan["copied"])
            if plan["huggingface"] and destination_count > 1:
                expected.add("model.safetensors.index.json")
        found = files_beneath(os.path.join(dst, "rank%d" % rank))
        if found == expected:
            print("rank %d: %d files, as the plan assigns" % (rank, len(found)))
            continue
        good = False
        for path in sorted(found - expected):
            print("rank %d: unexpected %s" % (rank, path))
        for path in sorted(expected - found):
            print("rank %d: missing %s" % (rank, path))
    return good


def merge(plan, dst, out):
    for rank in range(plan["ranks"]):
        shutil.copytree(os.path.join(dst, "rank%d" % rank), out,
                        dirs_exist_ok=True)


def main():
    command, plan_path = sys.argv[1], sys.argv[2]
    plan = read_plan(plan_path)
    if command == "split":
        split(plan, sys.argv[3], sys.argv[4])
    elif command == "check":
        return 0 if check(plan, sys.argv[3]) else 1
    elif command == "merge":
        merge(plan, sys.argv[3], sys.argv[4])
    else:
        print("unknown command " + command, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
