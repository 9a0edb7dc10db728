# lit configuration for the aoa tool tests. Run through ctest (see
# test/CMakeLists.txt), which passes build_dir, llvm_tools_dir, examples_dir.
import os
import sys
import lit.formats

config.name = "aoa"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test", ".aoa"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)

build_dir = lit_config.params["build_dir"]
config.test_exec_root = os.path.join(build_dir, "lit-out")
bin_dir = os.path.join(build_dir, "bin")

# Every plan a lit test compiles is verified whole (rounds, messages,
# coverage), as aoa-run would before running it; aoa-compile alone checks
# only the plan's tables.
config.substitutions.append(
    ("%aoa-compile", os.path.join(bin_dir, "aoa-compile") + " --verify-plan"))
config.substitutions.append(("%aoa-plan", os.path.join(bin_dir, "aoa-plan")))
config.substitutions.append(("%examples", lit_config.params["examples_dir"]))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))

config.environment["PATH"] = os.pathsep.join(
    [bin_dir, lit_config.params["llvm_tools_dir"], config.environment.get("PATH", "")])
config.environment["NO_COLOR"] = "1"

# aoa-compile and aoa-plan run on mimalloc when the build links it
# (AOA_USE_MIMALLOC); their --version says which allocator serves malloc.
if lit_config.params.get("enable_mimalloc", "OFF").upper() in ("1", "ON", "TRUE", "YES"):
    config.available_features.add("mimalloc")
