# Sourced by the DeepSeek-V3 benchmarks: prints the machine and makes sure
# the generated metadata is in $out_dir (and in the page cache).
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
