# lit configuration for the end-to-end conversion tests: real checkpoints are
# written (aoa-shard), converted (aoa-compile, aoa-run) and checked bit for
# bit (aoa-compare, Inputs/expected_checkpoint.py). Run through ctest (see
# test/CMakeLists.txt), which passes build_dir, llvm_tools_dir, examples_dir.
import os
import shlex
import subprocess
import sys
import lit.formats

config.name = "aoa-e2e"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)

build_dir = lit_config.params["build_dir"]
config.test_exec_root = os.path.join(build_dir, "e2e-out")
bin_dir = os.path.join(build_dir, "bin")
inputs = os.path.join(config.test_source_root, "Inputs")
examples = lit_config.params.get(
    "examples_dir", os.path.join(config.test_source_root, "..", "..", "examples"))

for tool in ["aoa-compile", "aoa-run", "aoa-layout", "aoa-shard", "aoa-compare",
             "aoa-scan", "aoa-convert", "aoa-plan"]:
    config.substitutions.append(("%" + tool, os.path.join(bin_dir, tool)))
config.substitutions.append(("%examples", examples))
config.substitutions.append(("%inputs", inputs))
# The oracle: the checkpoint a conversion must produce, from the source
# checkpoint and the compiler's --emit=mappings answer.
config.substitutions.append(("%expected", sys.executable + " " + os.path.join(inputs, "expected_checkpoint.py")))
config.substitutions.append(("%make-metadata", sys.executable + " " + os.path.join(
    config.test_source_root, "..", "lit", "passes", "Inputs", "make_metadata.py")))
# `%exit N CMD ...` succeeds only if CMD exits with status N (`not` accepts
# any failure; aoa-compare's 1, "different", is not its 2, "error").
config.substitutions.append(("%exit", sys.executable + " " + os.path.join(inputs, "exit_status.py")))
config.substitutions.append(("%python", sys.executable))
# The README's model: a Hugging Face-style Llama directory written by the
# standard library alone (scripts/make-hf-model.py), independent of aoa.
config.substitutions.append(("%make-hf-model", sys.executable + " " + os.path.join(
    config.test_source_root, "..", "..", "scripts", "make-hf-model.py")))

llvm_tools_dir = lit_config.params.get("llvm_tools_dir", "/usr/lib/llvm-14/bin")
config.environment["PATH"] = os.pathsep.join(
    [bin_dir, llvm_tools_dir, config.environment.get("PATH", "")])
config.environment["NO_COLOR"] = "1"
# Scripts that import Inputs/*.py leave no __pycache__ in the source tree.
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"

# The mpi backend: `mpi-backend` when this build has it (AOA_ENABLE_MPI),
# `mpi` when mpirun can also be run, so `REQUIRES: mpi` tests skip cleanly
# elsewhere. `%mpirun N CMD` starts N processes; Open MPI needs flags to run as
# root and to start more processes than there are cores.
if lit_config.params.get("enable_mpi", "OFF").upper() in ("1", "ON", "TRUE", "YES"):
    config.available_features.add("mpi-backend")
    mpiexec = lit_config.params.get("mpiexec", "") or "mpirun"
    try:
        version = subprocess.run([mpiexec, "--version"], capture_output=True,
                                 text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        version = None
    if version is not None:
        flags = []
        if "Open MPI" in version or "OpenRTE" in version:
            flags = ["--allow-run-as-root", "--oversubscribe"]
            # No cross-memory attach (containers often forbid ptrace);
            # copies through shared memory work everywhere.
            config.environment["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
            # One node: Open MPI's own point-to-point layer over shared
            # memory, without UCX, whose start-up probes every transport (and
            # under ASan leaves allocations that 16 frames do not trace to a
            # library the suppressions name).
            config.environment["OMPI_MCA_pml"] = "ob1"
            config.environment["OMPI_MCA_btl"] = "self,vader"
            config.environment["OMPI_MCA_osc"] = "^ucx"
        # Under AddressSanitizer (scripts/check.sh) the ranks unwind every
        # allocation's stack fully: Open MPI's libraries have no frame
        # pointers, and its leaks are suppressed by library name, which the
        # fast unwinder's one-frame stacks do not show (nor stacks cut short:
        # the frames nearest malloc are often in plugins Open MPI unloaded
        # before the leak check, so 30 frames are kept). The option reaches
        # the ranks through mpiexec's own environment, which they inherit:
        # `-x` would apply to the first application context only, and tests
        # run one context per rank (`-np 1 A : -np 1 B`).
        launcher = [mpiexec]
        if flags:  # Open MPI: each mpiexec gets a session directory of its own
            launcher = ["sh", shlex.quote(os.path.join(config.test_source_root, "Inputs",
                                                       "mpiexec_own_session.sh")), mpiexec]
        if os.environ.get("ASAN_OPTIONS"):
            launcher = ["env", shlex.quote("ASAN_OPTIONS=" + os.environ["ASAN_OPTIONS"]
                                           + ":fast_unwind_on_malloc=0:malloc_context_size=30")] + launcher
        config.available_features.add("mpi")
        config.substitutions.append(("%mpirun", " ".join(launcher + flags + ["-np"])))
        for name in ["HOME", "TMPDIR"]:
            if name in os.environ:
                config.environment[name] = os.environ[name]

# The nccl backend: `cuda-build` when this build has it (AOA_ENABLE_CUDA),
# `cuda-gpu` when a GPU can also be used (nvidia-smi lists one), so GPU tests
# skip cleanly on machines without one.
if lit_config.params.get("enable_cuda", "OFF").upper() in ("1", "ON", "TRUE", "YES"):
    config.available_features.add("cuda-build")
    try:
        gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                              text=True, timeout=60)
        if gpus.returncode == 0 and "GPU" in gpus.stdout:
            config.available_features.add("cuda-gpu")
    except (OSError, subprocess.SubprocessError):
        pass
    for name in ["CUDA_VISIBLE_DEVICES", "NCCL_DEBUG"]:
        if name in os.environ:
            config.environment[name] = os.environ[name]
