#!/usr/bin/env bash
# Installs every build and test dependency of aoa from Debian 12 packages.
# CUDA and NCCL are optional and not installed here: the build uses them when
# a toolkit is found (e.g. /usr/local/cuda).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config python3
  default-jre-headless antlr4 libantlr4-runtime-dev uuid-dev   # grammar
  llvm-14-dev llvm-14-tools                                    # Support/ADT, lit, FileCheck
  nlohmann-json3-dev libsimdjson-dev libxxhash-dev             # formats, hashing
  libmimalloc-dev                                              # aoa-compile's allocator
  libgtest-dev libgmock-dev libbenchmark-dev                   # tests, benchmarks
  openmpi-bin libopenmpi-dev                                   # mpi backend
  python3-dev pybind11-dev python3-pybind11                    # the Python module (python/)
  python3-numpy python3-pytest                                 # its arrays and tests
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
echo "setup-debian: installed ${#packages[@]} packages"
