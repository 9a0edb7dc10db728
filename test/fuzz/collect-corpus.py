#!/usr/bin/env python3
"""Collects the seed corpora of the fuzz targets (test/fuzz/corpus/<target>/)
from the repository's examples and tests, plus inputs made by the test
generators and, with --build, by the built tools (plans, safetensors files
of several dtypes) and the plans the test suites left in the build (run
ctest there first). Each seed is named by the SHA-1 of its bytes, as libFuzzer
names what it finds; seeds over --max-size bytes are left out (small inputs
fuzz faster). Rerun it when the formats grow:

  test/fuzz/collect-corpus.py [--build build] [--max-size 32768]
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MAKE_METADATA = os.path.join(ROOT, "test", "lit", "passes", "Inputs", "make_metadata.py")
MAKE_HF_MODEL = os.path.join(ROOT, "scripts", "make-hf-model.py")


def repository_files():
    listed = subprocess.run(["git", "ls-files", "examples", "test"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    for path in listed.split():
        if "/fuzz/corpus/" not in path:
            yield os.path.join(ROOT, path)


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Corpus:
    def __init__(self, max_size):
        self.max_size = max_size
        self.seeds = {}

    def add(self, target, data):
        if isinstance(data, str):
            data = data.encode()
        if 0 < len(data) <= self.max_size:
            self.seeds.setdefault(target, {})[hashlib.sha1(data).hexdigest()] = data

    def write(self):
        for target, seeds in sorted(self.seeds.items()):
            directory = os.path.join(ROOT, "test", "fuzz", "corpus", target)
            os.makedirs(directory, exist_ok=True)
            for old in os.listdir(directory):
                os.remove(os.path.join(directory, old))
            for name, data in seeds.items():
                with open(os.path.join(directory, name), "wb") as f:
                    f.write(data)
            print("%s: %d seeds, %d bytes" % (target, len(seeds), sum(map(len, seeds.values()))))


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, check=True, **kwargs).stdout


def collect_files(corpus):
    for path in repository_files():
        if path.endswith(".aoa"):
            corpus.add("fuzz-config", read(path))
        elif path.endswith(".plan"):
            corpus.add("fuzz-plan", read(path))
        elif path.endswith(".json"):
            data = read(path)
            if b'"aoa_statements"' in data:
                corpus.add("fuzz-config", data)
            if b'"aoa-metadata"' in data:
                corpus.add("fuzz-metadata", data)
            if b'"aoa-layout"' in data:
                corpus.add("fuzz-layout-spec", data)


METADATA_ARGS = [
    ["llama", "--layers", "1", "--tp", "2"],
    ["ernie", "--layers", "1", "--tp", "1"],
    ["tensors", "a:bfloat16:4x6:0:2", "b:float32:6x4:1:2", "c:int8:8"],
    ["tensors", "g:float16:4x4:0,1:2,2", "u:float64:10x2:0:4+6"],
]


def collect_generated(corpus, build, work):
    for args in METADATA_ARGS:
        corpus.add("fuzz-metadata", run([sys.executable, MAKE_METADATA] + args))
    hf = os.path.join(work, "hf")
    run([sys.executable, MAKE_HF_MODEL, hf, "--layers", "1", "--hidden", "8", "--heads", "2",
         "--kv-heads", "1", "--intermediate", "16", "--vocab", "16", "--shard-size", "2048"])
    for name in sorted(os.listdir(hf)):
        path = os.path.join(hf, name)
        if name.endswith(".safetensors"):
            corpus.add("fuzz-safetensors-header", read(path))
        elif name == "config.json":
            corpus.add("fuzz-config", read(path))  # not a config: a near miss
    if not build:
        return
    bin_dir = os.path.join(build, "bin")
    # Plans: a re-layout, the fused examples, a budget that makes rounds, a
    # Hugging Face destination.
    src, dst = os.path.join(work, "src.json"), os.path.join(work, "dst.json")
    with open(src, "wb") as f:
        f.write(run([sys.executable, MAKE_METADATA, "llama", "--layers", "1", "--tp", "2"]))
    with open(dst, "wb") as f:
        f.write(run([sys.executable, MAKE_METADATA, "llama", "--layers", "1", "--tp", "4"]))
    compile_ = os.path.join(bin_dir, "aoa-compile")
    examples = os.path.join(ROOT, "examples")
    plans = [
        [os.path.join(examples, "llama_fused_ffn.json"), "--src", src, "--dst", dst],
        [os.path.join(examples, "llama_fused_ffn.json"), "--src", src, "--dst", dst,
         "--memory-budget=4K"],
        [os.path.join(work, "relayout.aoa"), "--src", src, "--to-hf", "--max-shard-size", "40KB"],
        [os.path.join(examples, "seed_concat_cast_transpose_split.json"), "--src",
         os.path.join(work, "seed.src.json")],
    ]
    with open(os.path.join(work, "relayout.aoa"), "w") as f:
        f.write("# every key keeps its name\n")
    with open(os.path.join(work, "seed.src.json"), "wb") as f:
        f.write(run([sys.executable, MAKE_METADATA, "tensors", "s0:float32:2x2:1:2",
                     "s1:float32:2x2:1:2"]))
    for args in plans:
        corpus.add("fuzz-plan", run([compile_] + args + ["--emit=plan-text", "-o", "-"]))
        corpus.add("fuzz-binary-plan", run([compile_] + args + ["--emit=plan", "-o", "-"]))
    # The plans the test suites wrote (when ctest has run in the build),
    # the deliberately damaged ones included.
    for suite_output in ("lit-out", "e2e-out"):
        for directory, _, names in sorted(os.walk(os.path.join(build, suite_output))):
            for name in sorted(names):
                path = os.path.join(directory, name)
                if os.path.islink(path) or os.path.getsize(path) > corpus.max_size:
                    continue
                data = read(path)
                if data.startswith(b"AOAPLAN\0"):
                    corpus.add("fuzz-binary-plan", data)
                elif data.startswith(b"aoa-plan "):
                    corpus.add("fuzz-plan", data)
    # The binary form of every valid text plan of the repository.
    assembled = os.path.join(work, "assembled.plan")
    for path in repository_files():
        if path.endswith(".plan"):
            result = subprocess.run([os.path.join(bin_dir, "aoa-plan"), "assemble", path,
                                     "-o", assembled], capture_output=True)
            if result.returncode == 0:
                corpus.add("fuzz-binary-plan", read(assembled))
    # Safetensors files of every dtype aoa-shard writes.
    shard = os.path.join(bin_dir, "aoa-shard")
    layout = {"format": "aoa-metadata", "version": 1, "tensors": {}}
    dtypes = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int16",
              "int8", "uint8", "bool", "float8_e4m3fn", "float8_e5m2"]
    for i, dtype in enumerate(dtypes):
        key = "t%d" % i
        shape = [2, 3] if i % 2 else [5]
        layout["tensors"][key] = {"dtype": dtype, "global_shape": shape, "shards": [
            {"rank": 0, "file": "rank00000.safetensors", "name": key,
             "global_offset": [0] * len(shape), "local_shape": shape}]}
    layout_path = os.path.join(work, "dtypes.json")
    with open(layout_path, "w") as f:
        json.dump(layout, f)
    out = os.path.join(work, "dtypes")
    run([shard, layout_path, "-o", out, "--fill=random:1"])
    for name in sorted(os.listdir(out)):
        if name.endswith(".safetensors"):
            corpus.add("fuzz-safetensors-header", read(os.path.join(out, name)))
        elif name == "metadata.json":
            corpus.add("fuzz-metadata", read(os.path.join(out, name)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", help="a build directory whose tools make plans and "
                        "safetensors files (without it, those seeds are not made)")
    parser.add_argument("--max-size", type=int, default=32768)
    args = parser.parse_args()
    corpus = Corpus(args.max_size)
    collect_files(corpus)
    with tempfile.TemporaryDirectory() as work:
        collect_generated(corpus, args.build and os.path.abspath(args.build), work)
    corpus.write()


if __name__ == "__main__":
    main()
