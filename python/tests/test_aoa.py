"""Tests of the Python module aoa (docs/python.md), run by ctest ("python").

The inputs are made here, in a temporary directory: a small Hugging
Face-style Llama directory (scripts/make-hf-model.py), converted to TP4 with
fused QKV / gate-up (examples/), and back to a Hugging Face directory. For
every rank of both plans, aoa.load must give exactly the bytes that aoa.run
and the aoa-run tool write into that rank's files; the written files are
read with a few lines of Python here (8-byte header length, JSON header,
data offsets), not with aoa.
"""

import filecmp
import json
import os
import re
import signal
import struct
import subprocess
import sys

import numpy
import pytest

import aoa

SOURCE_DIR = os.environ.get(
    "AOA_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_DIR = os.environ.get("AOA_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
CONFIG = os.path.join(SOURCE_DIR, "examples", "hf_llama_fused_qkv_ffn.aoa")
LAYOUT = os.path.join(SOURCE_DIR, "examples", "layouts", "hf_llama_fused_tp4.json")


def read_safetensors(path):
    """name -> (dtype, shape, bytes) of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    base = 8 + length
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], info["shape"], data[base + begin:base + end])
    return tensors


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    root = tmp_path_factory.mktemp("aoa")
    hf = root / "hf"
    subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "make-hf-model.py"),
                    str(hf), "--layers", "2", "--hidden", "64", "--heads", "32",
                    "--kv-heads", "8", "--intermediate", "128", "--vocab", "64",
                    "--shard-size", "40000"], check=True, stdout=subprocess.DEVNULL)
    # Small rounds, so that the plans have several.
    to_tp4 = aoa.compile(CONFIG, src=str(hf), layout=LAYOUT, memory_budget=16384)
    aoa.run(to_tp4, hf, root / "tp4", threads=2)
    to_hf = aoa.compile(CONFIG, str(root / "tp4"), reverse=True, to_hf=True,
                        max_shard_size=20000, memory_budget=16384)
    return {"root": root, "hf": hf, "tp4": root / "tp4", "to_tp4": to_tp4,
            "to_hf": to_hf}


def expect_rank_matches_files(plan, rank, src, dst):
    loaded = aoa.load(plan, rank, src, threads=2)
    assert loaded, f"rank {rank} has no tensors"
    files = {}
    for name, array in loaded.items():
        path = os.path.join(dst, loaded.files[name])
        if path not in files:
            files[path] = read_safetensors(path)
        dtype, shape, data = files[path][name]
        assert list(array.shape) == shape, name
        assert array.flags["C_CONTIGUOUS"]
        assert array.tobytes() == data, f"rank {rank}: {name} differs"
    # Every tensor of the rank's files was loaded.
    expected = {(os.path.join(dst, f["path"])) for f in plan.destination_files
                if f["rank"] == rank}
    assert set(files) == expected
    for path in expected:
        assert set(files[path]) <= set(loaded)
    return loaded


def test_load_equals_what_run_writes_for_every_rank(work):
    plan = work["to_tp4"]
    assert plan.ranks == 4
    for rank in range(plan.ranks):
        loaded = expect_rank_matches_files(plan, rank, work["hf"], work["tp4"])
        for name, dtype in loaded.dtypes.items():
            assert dtype == "bfloat16"
            assert loaded[name].dtype == numpy.uint16


def test_load_of_a_rank_that_receives_from_the_others(work):
    # TP4 -> one Hugging Face directory: rank 0 writes every file, and most
    # of its bytes are read by ranks 1-3 and sent to it.
    plan = work["to_hf"]
    out = work["root"] / "hf_again"
    aoa.run(plan, work["tp4"], out)
    for rank in range(plan.ranks):
        if any(f["rank"] == rank for f in plan.destination_files):
            expect_rank_matches_files(plan, rank, work["tp4"], out)
    # The round trip gives the original tensors back.
    original = {}
    for name in os.listdir(work["hf"]):
        if name.endswith(".safetensors"):
            original.update(read_safetensors(os.path.join(work["hf"], name)))
    loaded = aoa.load(plan, 0, work["tp4"])
    assert set(loaded) == set(original)
    for name, (dtype, shape, data) in original.items():
        assert loaded[name].tobytes() == data, name


def test_the_aoa_run_tool_writes_the_same_files(work, tmp_path):
    plan_path = tmp_path / "plan"
    work["to_tp4"].save(plan_path)
    subprocess.run([os.path.join(BUILD_DIR, "bin", "aoa-run"), str(plan_path),
                    "--src-dir", str(work["hf"]), "--dst-dir", str(tmp_path / "tp4"),
                    "--progress=none"], check=True, stderr=subprocess.DEVNULL)
    names = [f["path"] for f in work["to_tp4"].destination_files]
    match, mismatch, errors = filecmp.cmpfiles(work["tp4"], tmp_path / "tp4", names,
                                               shallow=False)
    assert mismatch == [] and errors == [] and sorted(match) == sorted(names)
    # And aoa.load, from the saved plan read back, the same bytes.
    expect_rank_matches_files(aoa.Plan.load(plan_path), 2, work["hf"], tmp_path / "tp4")


def test_load_into_numpy_arrays_and_a_bytearray(work):
    plan = work["to_tp4"]
    tensors = aoa.rank_tensors(plan, 1)
    buffers = {}
    for i, t in enumerate(tensors):
        if i == 0:
            buffers[t["name"]] = bytearray(t["bytes"])
        else:
            buffers[t["name"]] = numpy.zeros(t["shape"], dtype=aoa.numpy_dtype(t["dtype"]))
    counts = aoa.load_into(plan, 1, work["hf"], buffers)
    assert counts["bytes_written"] == sum(t["bytes"] for t in tensors)
    for t in tensors:
        written = read_safetensors(os.path.join(work["tp4"], t["file"]))[t["name"]][2]
        assert bytes(buffers[t["name"]]) == written, t["name"]


def test_compile_takes_dicts_and_statement_lists(work):
    metadata = aoa.scan(work["hf"])
    with open(CONFIG) as f:
        statements = [line for line in f.read().splitlines()
                      if line.strip() and not line.lstrip().startswith("#")]
    with open(LAYOUT) as f:
        layout = json.load(f)
    plan = aoa.compile(statements, metadata, layout=layout, memory_budget=16384)
    assert plan.ranks == 4
    assert "rank" in plan.summary()
    loaded = aoa.load(plan, 3, work["hf"])
    expected = aoa.load(work["to_tp4"], 3, work["hf"])
    assert set(loaded) == set(expected)
    for name in expected:
        assert loaded[name].tobytes() == expected[name].tobytes(), name


def test_shared_src_plan_reads_on_the_writing_rank(work, tmp_path):
    # TP4 -> Hugging Face: the default plan sends most bytes to rank 0; with
    # shared_src rank 0 reads them itself, and writes the same bytes.
    plan = aoa.compile(CONFIG, str(work["tp4"]), reverse=True, to_hf=True,
                       max_shard_size=20000, memory_budget=16384, shared_src=True)
    assert "source access: shared" in plan.summary()
    assert "source access" not in work["to_hf"].summary()
    assert "send" not in plan.text() and "recv" not in plan.text()
    aoa.run(plan, work["tp4"], tmp_path / "shared", threads=2)
    aoa.run(work["to_hf"], work["tp4"], tmp_path / "default", threads=2)
    names = sorted(os.listdir(tmp_path / "default"))
    assert names == sorted(os.listdir(tmp_path / "shared"))
    for name in names:
        with open(tmp_path / "default" / name, "rb") as a, \
                open(tmp_path / "shared" / name, "rb") as b:
            assert a.read() == b.read(), name


def test_plan_save_load_text_and_summary(work, tmp_path):
    plan = work["to_tp4"]
    path = tmp_path / "tp4.plan"
    plan.save(path)
    again = aoa.Plan.load(path)
    assert again.ranks == plan.ranks
    assert again.text() == plan.text()
    assert again.summary() == plan.summary()
    assert plan.text().startswith("aoa-plan")
    with pytest.raises(aoa.Error, match="mappings are answered by the compiler"):
        again.mappings()


def test_mappings_are_aoa_compile_s(work, tmp_path):
    mappings = work["to_tp4"].mappings()
    assert isinstance(mappings, list) and mappings
    assert all(isinstance(m, dict) for m in mappings)
    tool = subprocess.run(
        [os.path.join(BUILD_DIR, "bin", "aoa-compile"), CONFIG, "--src", str(work["hf"]),
         "--emit=mappings"],
        check=True, capture_output=True, text=True)
    expected = json.loads(tool.stdout)
    assert mappings == (expected if isinstance(expected, list) else [expected])


def test_scan_gives_the_shard_metadata(work):
    metadata = aoa.scan(work["hf"])
    tool = subprocess.run([os.path.join(BUILD_DIR, "bin", "aoa-scan"), str(work["hf"])],
                          check=True, capture_output=True, text=True)
    assert metadata == json.loads(tool.stdout)
    with pytest.raises(aoa.Error):
        aoa.scan(work["root"] / "no-such-directory")


def test_a_bad_statement_is_a_located_error(work):
    with pytest.raises(aoa.Error) as raised:
        aoa.compile(["model.embed_tokens.weight -> x, axis=", "y -> z"], work["hf"])
    text = str(raised.value)
    assert re.search(r":\d+:\d+: error: ", text), text
    assert isinstance(raised.value, Exception)


def test_missing_source_files_are_an_error(work, tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(aoa.Error, match="cannot open|No such file"):
        aoa.load(work["to_tp4"], 0, tmp_path / "empty")
    with pytest.raises(aoa.Error):
        aoa.run(work["to_tp4"], tmp_path / "empty", tmp_path / "out")
    assert not (tmp_path / "out" / "metadata.json").exists()


def test_wrong_buffer_sizes_and_unknown_names_are_errors(work):
    plan = work["to_tp4"]
    tensors = aoa.rank_tensors(plan, 0)
    buffers = {t["name"]: bytearray(t["bytes"]) for t in tensors}
    first = tensors[0]
    buffers[first["name"]] = bytearray(first["bytes"] - 2)
    with pytest.raises(aoa.Error) as raised:
        aoa.load_into(plan, 0, work["hf"], buffers)
    text = str(raised.value)
    assert f"{first['name']} is given {first['bytes'] - 2} bytes but holds" in text, text
    assert f"({first['bytes']} bytes)" in text
    buffers = {t["name"]: bytearray(t["bytes"]) for t in tensors}
    buffers["no.such.tensor"] = bytearray(4)
    with pytest.raises(aoa.Error, match="no.such.tensor is not a tensor of this "
                       "rank's destination files"):
        aoa.load_into(plan, 0, work["hf"], buffers)
    # Read-only memory and non-contiguous arrays are refused too.
    buffers = {t["name"]: bytearray(t["bytes"]) for t in tensors}
    buffers[first["name"]] = bytes(first["bytes"])
    with pytest.raises(aoa.Error, match="not a writable, C-contiguous buffer"):
        aoa.load_into(plan, 0, work["hf"], buffers)
    with pytest.raises(aoa.Error, match="is not a rank of the plan"):
        aoa.load(plan, 7, work["hf"])


def test_ctrl_c_stops_a_run_without_a_checkpoint(tmp_path):
    # A 5 MB model in many small rounds. From 10 ms on, a timer
    # signal raises KeyboardInterrupt (once), as Ctrl-C does; the module
    # notices it within 100 ms and the run stops before its next round.
    hf = tmp_path / "hf"
    subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "make-hf-model.py"),
                    str(hf), "--heads", "32", "--kv-heads", "8"], check=True,
                   stdout=subprocess.DEVNULL)
    plan = aoa.compile(CONFIG, hf, layout=LAYOUT, memory_budget=16384)
    dst = tmp_path / "out"
    raised = []

    def ctrl_c(signum, frame):
        if not raised:
            raised.append(True)
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, ctrl_c)
    interrupted = False
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)
        try:
            aoa.run(plan, hf, dst, threads=1)
            while not raised:  # a run faster than the timer
                signal.pause()
        except KeyboardInterrupt:
            interrupted = True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, previous)
    assert interrupted
    if not (dst / "metadata.json").exists():
        # Stopped between rounds: no checkpoint, and nothing outside
        # DST/.aoa-run (which holds what a resume needs; without finished
        # files the run removes it, and DST, which it created).
        if dst.exists():
            assert [p.name for p in dst.iterdir() if p.name != ".aoa-run"] == []
        # The same call finishes (resumes) the run.
        aoa.run(plan, hf, dst, threads=1)
    assert (dst / "metadata.json").exists()
    assert not (dst / ".aoa-run").exists()
    expect_rank_matches_files(plan, 3, hf, dst)
