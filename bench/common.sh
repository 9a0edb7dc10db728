# Sourced by the benchmarks: prints the machine, makes sure
# the generated DeepSeek-V3 metadata is in $out_dir (and in the page cache),
# and sets up mpirun.
print_machine() {
  echo "== machine"
  echo "nproc: $(nproc)"
  lscpu | grep 'Model name' || true
  grep PRETTY_NAME /etc/os-release || true
  uptime
}

ensure_deepseek_metadata() {
  local build_dir="$1" out_dir="$2"
  if [[ ! -f "$out_dir/src.json" || ! -f "$out_dir/dst.json" ]]; then
    "$build_dir/bin/aoa-bench-gen-metadata" --src "$out_dir/src.json" --dst "$out_dir/dst.json"
  fi
  cat "$out_dir/src.json" "$out_dir/dst.json" > /dev/null # warm the page cache
}

# Sets up mpirun for the benchmarks: containers often forbid cross-memory
# attach (shared-memory copies work), 4 processes share 2 cores, and root
# must say so. Fills the array mpirun_flags.
setup_mpirun() {
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  mpirun_flags=(--oversubscribe)
  if [[ $(id -u) == 0 ]]; then mpirun_flags+=(--allow-run-as-root); fi
}
