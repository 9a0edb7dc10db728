#!/usr/bin/env python3
"""Fault-injection sweeps and kill -9 trials of aoa-run (docs/testing.md).

  fault_trials.py sweep --bin BUILD/bin [--scenario tp,hf] [--backend local|mpi|nccl-emulated]
  fault_trials.py kill  --bin BUILD/bin --trials 50 --seed 1 [--scenario big]

Both set up small conversions in a work directory (a two-rank
tensor-parallel relayout, `tp`; a Hugging Face directory rewritten with
copied files and an index, `hf`; a larger Llama to TP4, `big`), convert each
once without faults for the reference bytes, then:

sweep: asks aoa-run how many reads, writes, fsyncs, renames and messages a
  run makes (AOA_FAULT_INJECT=count), then runs the conversion once per such
  point with that one operation failing (AOA_FAULT_INJECT=OP:N, EIO) and
  checks each time: exit status 1; the injected failure reported as an
  error that names a file (or, for a message, the peer rank), what was being
  done and the cause; DST holds no metadata.json and, outside DST/.aoa-run,
  only complete destination files (with --overwrite: or the previous
  checkpoint); the same command then succeeds (resuming) and DST is byte for
  byte the reference, nothing else in it.

kill: kills aoa-run with SIGKILL, at a random fault point through the hook
  (AOA_FAULT_INJECT=kill:OP:N) or after a random delay, then runs the same
  command again and compares DST byte for byte with the reference.

With --backend=mpi (or nccl-emulated) each trial injects the fault into one
rank only (an mpirun command line of one application context per rank).

Standard library only. Exits 0 when every trial passed, 1 otherwise.
"""
import argparse
import filecmp
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MAKE_METADATA = os.path.join(ROOT, "test", "lit", "passes", "Inputs", "make_metadata.py")
MAKE_HF_MODEL = os.path.join(ROOT, "scripts", "make-hf-model.py")
EXAMPLES = os.path.join(ROOT, "examples")

OPS = ["read", "write", "fsync", "rename", "message"]
# What an error about each operation says it was doing.
DOING = {
    "read": r"read|cannot read|copying",
    "write": r"writ|copying",
    "fsync": r"flush|sync",
    "rename": r"renam|move",
    "message": r"sending|receiving",
}
# How aoa-run is told the backend, under mpirun.
BACKEND_FLAGS = {"mpi": ["--backend=mpi"],
                 "nccl-emulated": ["--backend=nccl", "--emulate-device"]}
COUNT_LINE = re.compile(r"AOA_FAULT_INJECT=count: read (\d+), write (\d+), "
                        r"fsync (\d+), rename (\d+), message (\d+)")


class Failure(Exception):
    pass


def run(command, env=None, check=True):
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise Failure("command failed (%d): %s\n%s" % (
            result.returncode, " ".join(command), result.stderr))
    return result


class Scenario:
    """A conversion: its plan, source and the command lines that run it."""

    def __init__(self, name, work, tools, backend, mpirun, overwrite=False):
        self.name = name
        self.overwrite = overwrite
        self.previous = None
        self.work = os.path.join(work, name)
        self.tools = tools
        self.backend = backend
        self.mpirun = mpirun
        self.ranks = 1
        os.makedirs(self.work, exist_ok=True)
        getattr(self, "make_" + name)()
        self.reference = os.path.join(self.work, "reference")
        # The reference is the local backend's, so an mpi sweep also
        # checks that both backends write the same bytes.
        shutil.rmtree(self.reference, ignore_errors=True)
        run(self.local_command(self.reference))
        if overwrite:
            # DST starts as the same layout converted from other values.
            self.previous = os.path.join(self.work, "previous")
            shutil.rmtree(self.previous, ignore_errors=True)
            self.make_other_source()
            run([self.tool("aoa-run"), self.plan, "--src-dir", self.other_source,
                 "--dst-dir", self.previous, "--progress=none"])

    def tool(self, name):
        return os.path.join(self.tools, name)

    def make_tp(self):
        """Two ranks, rows to columns and columns to rows: buffered reads,
        strided copies, messages between the ranks, two files a side."""
        w = self.work
        for side, specs in (("src", ["a:float32:16x8:0:2", "b:bfloat16:8x8:1:2"]),
                            ("dst", ["a:float32:16x8:1:2", "b:bfloat16:8x8:0:2"])):
            with open(os.path.join(w, side + ".json"), "w") as out:
                subprocess.run([sys.executable, MAKE_METADATA, "tensors"] + specs,
                               stdout=out, check=True)
        with open(os.path.join(w, "tp.aoa"), "w") as out:
            out.write("a -> a\nb -> b\n")
        self.source = os.path.join(w, "src")
        shutil.rmtree(self.source, ignore_errors=True)
        run([self.tool("aoa-shard"), os.path.join(w, "src.json"), "--fill=random:7",
             "-o", self.source])
        self.plan = os.path.join(w, "tp.plan")
        run([self.tool("aoa-compile"), os.path.join(w, "tp.aoa"), "--src",
             os.path.join(self.source, "metadata.json"), "--dst",
             os.path.join(w, "dst.json"), "-o", self.plan])
        self.ranks = 2

    def make_hf(self):
        """A Hugging Face directory to a Hugging Face directory of two files,
        one tensor transposed: direct copies (copy_file_range), copied
        config and tokenizer files, the index."""
        w = self.work
        self.source = os.path.join(w, "hf")
        shutil.rmtree(self.source, ignore_errors=True)
        run([sys.executable, MAKE_HF_MODEL, self.source, "--layers", "1", "--hidden", "16",
             "--heads", "4", "--kv-heads", "2", "--intermediate", "32", "--vocab", "32",
             "--shard-size", "3000"])
        with open(os.path.join(w, "hf.aoa"), "w") as out:
            out.write("model.layers.0.mlp.up_proj.weight^T -> "
                      "model.layers.0.mlp.up_proj.weight\n")
        self.plan = os.path.join(w, "hf.plan")
        run([self.tool("aoa-compile"), os.path.join(w, "hf.aoa"), "--src", self.source,
             "--to-hf", "--max-shard-size", "4KB", "-o", self.plan])

    def make_big(self):
        """A Llama of about 20 MB to TP4 with fused QKV and gate/up: long
        enough (a few tenths of a second) for kills after a random delay."""
        w = self.work
        self.source = os.path.join(w, "hf")
        shutil.rmtree(self.source, ignore_errors=True)
        run([sys.executable, MAKE_HF_MODEL, self.source, "--layers", "4", "--hidden", "512",
             "--heads", "8", "--kv-heads", "4", "--intermediate", "1024", "--vocab", "2048",
             "--shard-size", "4000000"])
        self.plan = os.path.join(w, "big.plan")
        run([self.tool("aoa-compile"), os.path.join(EXAMPLES, "hf_llama_fused_qkv_ffn.aoa"),
             "--src", self.source, "--layout",
             os.path.join(EXAMPLES, "layouts", "hf_llama_fused_tp4.json"), "-o", self.plan])
        self.ranks = 4

    def make_other_source(self):
        """The source with other values: every tensor's bytes reversed."""
        self.other_source = self.source + "-other"
        shutil.rmtree(self.other_source, ignore_errors=True)
        shutil.copytree(self.source, self.other_source)
        for name in tree(self.other_source):
            if name.endswith(".safetensors"):
                path = os.path.join(self.other_source, name)
                data = open(path, "rb").read()
                header = 8 + int.from_bytes(data[:8], "little")
                open(path, "wb").write(data[:header] + data[header:][::-1])

    def arguments(self, dst):
        return [self.plan, "--src-dir", self.source, "--dst-dir", dst,
                "--progress=none", "--threads=1"] + (["--overwrite"] if self.overwrite else [])

    def local_command(self, dst):
        return [self.tool("aoa-run")] + self.arguments(dst)

    def command(self, dst, fault=None, fault_rank=0):
        """The command line that converts into `dst`; with `fault`, only rank
        `fault_rank` (or the one process, locally) runs with it."""
        if self.backend == "local":
            env = ["env", "AOA_FAULT_INJECT=" + fault] if fault else []
            return env + self.local_command(dst)
        command = list(self.mpirun)
        for rank in range(self.ranks):
            if rank:
                command.append(":")
            command += ["-np", "1"]
            if fault and rank == fault_rank:
                command += ["env", "AOA_FAULT_INJECT=" + fault]
            command += [self.tool("aoa-run")] + BACKEND_FLAGS[self.backend] + self.arguments(dst)
        return command

    def counts(self):
        """{rank: {op: count}} of runs without faults, one per rank (each
        rank's own count line, whatever order mpirun prints them in)."""
        return {rank: self.rank_counts(rank) for rank in
                range(self.ranks if self.backend != "local" else 1)}

    def rank_counts(self, rank):
        dst = os.path.join(self.work, "counted")
        shutil.rmtree(dst, ignore_errors=True)
        if self.previous:
            shutil.copytree(self.previous, dst)
        result = run(self.command(dst, "count", rank))
        lines = COUNT_LINE.findall(result.stderr)
        if len(lines) != 1:
            raise Failure("expected one AOA_FAULT_INJECT=count line, got:\n%s"
                          % result.stderr)
        check_same_tree(self.reference, dst)
        return dict(zip(OPS, map(int, lines[0])))


def tree(directory):
    """Relative paths of the files under `directory`."""
    found = set()
    for root, dirs, files in os.walk(directory):
        for name in files:
            found.add(os.path.relpath(os.path.join(root, name), directory))
    return found


def check_same_tree(reference, dst):
    if not os.path.isdir(dst):
        raise Failure("%s does not exist" % dst)
    want, got = tree(reference), tree(dst)
    if want != got:
        raise Failure("%s holds %s; expected %s" % (
            dst, sorted(got - want) or "", "also " + str(sorted(want - got))
            if want - got else "nothing else"))
    for name in sorted(want):
        if not filecmp.cmp(os.path.join(reference, name), os.path.join(dst, name),
                           shallow=False):
            raise Failure("%s differs from the uninterrupted run's" % os.path.join(dst, name))


def check_failed_state(reference, dst, previous=None, killed=False):
    """After a failed or killed run: DST holds its previous checkpoint
    (`previous`, or nothing), untouched; or no metadata.json and, outside
    .aoa-run, only complete destination files (moved in by the install, or
    the previous checkpoint's not yet replaced).
    A killed run may also have finished its checkpoint (killed after
    metadata.json was installed)."""
    if not os.path.exists(dst):
        if previous:
            raise Failure("the failed run removed %s" % dst)
        return "nothing"
    outside = sorted(p for p in tree(dst) if not p.startswith(".aoa-run" + os.sep))
    if previous and set(outside) == tree(previous) and all(
            filecmp.cmp(os.path.join(previous, p), os.path.join(dst, p), shallow=False)
            for p in outside):
        return "the previous checkpoint"
    if killed and set(outside) == tree(reference) and all(
            filecmp.cmp(os.path.join(reference, p), os.path.join(dst, p), shallow=False)
            for p in outside):
        return "the new checkpoint"
    if os.path.exists(os.path.join(dst, "metadata.json")):
        raise Failure("the failed run left %s/metadata.json beside files that are "
                      "neither the previous checkpoint nor the new one" % dst)
    def same(directory, name):
        return directory and os.path.exists(os.path.join(directory, name)) and filecmp.cmp(
            os.path.join(directory, name), os.path.join(dst, name), shallow=False)
    for name in outside:
        if not os.path.exists(os.path.join(reference, name)):
            raise Failure("the failed run left %s, which is no destination file"
                          % os.path.join(dst, name))
        # A new file, complete; or, with --overwrite, one not yet replaced.
        if not same(reference, name) and not same(previous, name):
            raise Failure("the failed run left an incomplete %s" % os.path.join(dst, name))
    return "%d files installed" % len(outside) if outside else "staging only"


def check_error(op, number, stderr):
    """The run said which operation failed, on what, and why."""
    if "AOA_FAULT_INJECT: %s %d fails with EIO" % (op, number) not in stderr:
        raise Failure("the injected fault %s:%d was never reached:\n%s" % (op, number, stderr))
    errors = [line for line in stderr.splitlines() if re.search(r"error: ", line)
              and not line.startswith("aoa-run: rank 0: stopped")]
    if not errors:
        raise Failure("no error message:\n" + stderr)
    for line in errors:
        if ("Input/output error" in line and re.search(DOING[op], line)
                and (re.search(r"'[^']+'|\S+\.safetensors", line)
                     or (op == "message" and re.search(r"rank \d+", line)))):
            return
    raise Failure("no error names the file and the %s that failed:\n%s" % (op, stderr))


def sweep(args, tools, work):
    total = failed = 0
    summary = []
    for name in args.scenario.split(","):
        scenario = Scenario(name, work, tools, args.backend, args.mpirun_command,
                            args.overwrite)
        counts = scenario.counts()
        tried = 0
        for rank in sorted(counts):
            for op in args.ops.split(","):
                count = counts[rank][op]
                numbers = list(range(1, count + 1, args.every))
                if count and numbers[-1] != count:
                    numbers.append(count)
                for number in numbers:
                    tried += 1
                    fault = "%s:%d" % (op, number)
                    where = "%s %s%s" % (name, fault,
                                         " rank %d" % rank if args.backend != "local" else "")
                    try:
                        trial(scenario, fault, op, number, rank, args.self_check)
                        if args.verbose:
                            print("ok:", where, flush=True)
                    except Failure as failure:
                        failed += 1
                        print("FAIL: %s: %s" % (where, failure), flush=True)
                        if not args.keep_going:
                            return report_sweep(summary, total + tried, failed)
        total += tried
        points = sum(counts[r][op] for r in counts for op in args.ops.split(","))
        summary.append("%s %d of %d" % (name, tried, points))
    return report_sweep(summary, total, failed)


def report_sweep(summary, total, failed):
    print("fault sweep: %d fault points tried (%s), %d recovered, %d failed"
          % (total, ", ".join(summary) or "stopped early", total - failed, failed))
    return 1 if failed else 0


def trial(scenario, fault, op, number, rank, self_check):
    dst = os.path.join(scenario.work, "dst")
    shutil.rmtree(dst, ignore_errors=True)
    if scenario.previous:
        shutil.copytree(scenario.previous, dst)
    result = run(scenario.command(dst, fault, rank), check=False)
    if result.returncode != 1:
        raise Failure("exit status %d with %s, expected 1:\n%s"
                      % (result.returncode, fault, result.stderr))
    check_error(op, number, result.stderr)
    check_failed_state(scenario.reference, dst, scenario.previous)
    again = run(scenario.command(dst), check=False)
    if again.returncode != 0:
        raise Failure("the run after the fault failed (%d):\n%s%s" % (
            again.returncode, result.stderr, again.stderr))
    check_same_tree(scenario.reference, dst)
    if self_check:
        corrupt_one_byte(dst)
        try:
            check_same_tree(scenario.reference, dst)
        except Failure:
            return
        raise Failure("self-check: a flipped byte went unnoticed")


def corrupt_one_byte(dst):
    name = sorted(p for p in tree(dst) if p.endswith(".safetensors"))[0]
    path = os.path.join(dst, name)
    data = bytearray(open(path, "rb").read())
    data[-1] ^= 1
    open(path, "wb").write(data)


def kill_trials(args, tools, work):
    scenario = Scenario(args.scenario, work, tools, args.backend, args.mpirun_command,
                        args.overwrite)
    counts = scenario.counts()
    # How long an uninterrupted run takes bounds the random delays.
    started = time.monotonic()
    probe = os.path.join(scenario.work, "timed")
    shutil.rmtree(probe, ignore_errors=True)
    run(scenario.command(probe))
    duration = time.monotonic() - started
    rng = random.Random(args.seed)
    outcomes = {"killed": 0, "complete": 0, "finished first": 0, "identical": 0}
    failures = 0
    points = [(rank, op, n) for rank in counts for op in OPS
              for n in range(1, counts[rank][op] + 1)]
    for t in range(args.trials):
        dst = os.path.join(scenario.work, "dst")
        shutil.rmtree(dst, ignore_errors=True)
        if scenario.previous:
            shutil.copytree(scenario.previous, dst)
        by_point = args.mode == "point" or (args.mode == "mixed" and t % 2 == 0)
        if by_point:
            rank, op, n = rng.choice(points)
            how = "kill:%s:%d%s" % (op, n, " rank %d" % rank if args.backend != "local" else "")
            result = run(scenario.command(dst, "kill:%s:%d" % (op, n), rank), check=False)
            killed = result.returncode != 0
            if scenario.backend == "local" and result.returncode != -signal.SIGKILL:
                failures += 1
                print("FAIL: trial %d, %s: exit status %d, expected SIGKILL:\n%s"
                      % (t, how, result.returncode, result.stderr))
                continue
        else:
            delay = rng.uniform(0, 0.8 * duration)
            how = "SIGKILL after %.3f s" % delay
            process = subprocess.Popen(scenario.command(dst), stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=True)
            try:
                process.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            killed = process.returncode != 0
            if killed and process.returncode != -signal.SIGKILL:
                failures += 1
                print("FAIL: trial %d, %s: exit status %d" % (t, how, process.returncode))
                continue
        outcomes["killed" if killed else "finished first"] += 1
        try:
            if killed:
                state = check_failed_state(scenario.reference, dst, scenario.previous,
                                           killed=True)
                if state == "the new checkpoint" and not os.path.exists(
                        os.path.join(dst, ".aoa-run")):
                    # Killed after its last step (removing DST/.aoa-run):
                    # the run was complete, and the same command would say
                    # that DST holds a checkpoint.
                    state = "complete: killed before exiting"
                    outcomes["complete"] += 1
                else:
                    again = run(scenario.command(dst), check=False)
                    if again.returncode != 0:
                        raise Failure("the run after the kill (%s) failed (%d):\n%s" % (
                            state, again.returncode, again.stderr))
            else:
                state = "finished before the kill"
            check_same_tree(scenario.reference, dst)
            outcomes["identical"] += 1
            if args.verbose:
                print("ok: trial %d, %s (%s)" % (t, how, state), flush=True)
        except Failure as failure:
            failures += 1
            print("FAIL: trial %d, %s: %s" % (t, how, failure), flush=True)
            if not args.keep_going:
                break
    print("kill trials (%s, %s): %d trials, %d killed (%d once complete, before exiting), "
          "%d finished before the kill, %d byte-identical after the rerun, %d failed"
          % (scenario.name, args.backend, outcomes["killed"] + outcomes["finished first"],
             outcomes["killed"], outcomes["complete"], outcomes["finished first"],
             outcomes["identical"], failures))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["sweep", "kill"])
    on_path = shutil.which("aoa-run")
    parser.add_argument("--bin", default=os.path.dirname(on_path) if on_path
                        else os.path.join(ROOT, "build", "bin"),
                        help="the built tools (default: where PATH finds aoa-run, "
                        "else build/bin)")
    parser.add_argument("--work", help="keep the conversions here (default: a "
                        "temporary directory, removed when every trial passed)")
    parser.add_argument("--scenario", help="sweep: a comma list of tp, hf, big "
                        "(default tp,hf); kill: one of them (default big)")
    parser.add_argument("--backend", choices=["local", "mpi", "nccl-emulated"], default="local",
                        help="nccl-emulated: the nccl backend on its emulated device "
                        "(--emulate-device), under mpirun")
    parser.add_argument("--mpirun", default="mpirun --allow-run-as-root --oversubscribe",
                        help="how to start mpi jobs (with --backend=mpi or nccl-emulated; a trailing "
                        "-np is dropped)")
    parser.add_argument("--ops", default=",".join(OPS),
                        help="sweep: the operations to fail (default: all)")
    parser.add_argument("--every", type=int, default=1,
                        help="sweep: try every K-th point of each operation (and the last)")
    parser.add_argument("--self-check", action="store_true",
                        help="sweep: also flip a byte of each rerun's output, which must be caught")
    parser.add_argument("--overwrite", action="store_true",
                        help="DST starts as a complete checkpoint of the same layout with "
                        "other values, converted over with --overwrite")
    parser.add_argument("--trials", type=int, default=50, help="kill: how many")
    parser.add_argument("--seed", type=int, default=1, help="kill: the random seed")
    parser.add_argument("--mode", choices=["point", "delay", "mixed"], default="mixed",
                        help="kill: at a random fault point, after a random delay, or "
                        "alternating (default)")
    parser.add_argument("--keep-going", action="store_true", help="do not stop at the first failure")
    parser.add_argument("--verbose", "-v", action="store_true", help="one line per trial")
    args = parser.parse_args()
    if args.every < 1:
        parser.error("--every must be at least 1")
    if not args.scenario:
        args.scenario = "tp,hf" if args.what == "sweep" else "big"
    if args.what == "kill" and "," in args.scenario:
        parser.error("kill trials take one scenario")
    if args.backend != "local" and not (args.scenario in ("tp", "big") or args.what == "sweep"):
        parser.error("--backend=mpi needs a scenario with several ranks (tp, big)")
    args.mpirun_command = args.mpirun.split()
    if args.mpirun_command[-1:] == ["-np"]:  # lit's %mpirun
        args.mpirun_command.pop()
    tools = os.path.abspath(args.bin)
    work = args.work or tempfile.mkdtemp(prefix="aoa-fault-trials-")
    os.makedirs(work, exist_ok=True)
    try:
        status = sweep(args, tools, work) if args.what == "sweep" else kill_trials(args, tools, work)
    except Failure as failure:
        print("fault_trials: error: %s" % failure)
        status = 2
    if status == 0 and not args.work:
        shutil.rmtree(work, ignore_errors=True)
    elif status:
        print("fault_trials: the conversions are in %s" % work)
    return status


if __name__ == "__main__":
    sys.exit(main())
