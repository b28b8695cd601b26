#!/usr/bin/env bash
# Builds the libFuzzer targets (test/fuzz/CMakeLists.txt: clang-19,
# -fsanitize=fuzzer,address,undefined) and runs each for a short session
# over its seed corpus. ctest runs it as `fuzz-smoke`; by hand:
#   test/fuzz/run.sh [--build-dir DIR] [--seconds N] [--jobs N] [--python PY]
# A crash, a leak, undefined behaviour, an allocation over 2 GiB or an input
# that takes over 20 s fails the run; the input is left in DIR/crashes/
# (reproduce: DIR/bin/<target> FILE). Turn it into a test under
# test/Frontends/Onnx/hostile/ and copy it into test/fuzz/corpus/<target>/.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$root/build-fuzz
seconds=60
jobs=1
python=${TCC_PYTHON:-$HOME/.cache/tcc/venv/bin/python}
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    *) echo "usage: $0 [--build-dir DIR] [--seconds N] [--jobs N] [--python PY]" >&2; exit 2 ;;
  esac
done

log() { printf '[fuzz] %s\n' "$*" >&2; }

# clang-19 and its libFuzzer runtime (Debian: clang-19, libclang-rt-19-dev;
# tools/dev.sh installs both). Without them this test fails: it is never
# skipped silently.
cxx=$(command -v clang++-19 || echo /usr/lib/llvm-19/bin/clang++)
cc=$(command -v clang-19 || echo /usr/lib/llvm-19/bin/clang)
if [ ! -x "$cxx" ]; then
  log "error: clang++-19 is missing (apt-get install clang-19)"
  exit 1
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <stddef.h>\n#include <stdint.h>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' \
  > "$probe/probe.cc"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/probe.cc" -o "$probe/probe" 2> "$probe/err"; then
  cat "$probe/err" >&2
  log "error: clang-19 cannot link a fuzzer: its libFuzzer runtime is missing (apt-get install libclang-rt-19-dev)"
  exit 1
fi

if [ ! -f "$build/build.ninja" ]; then
  log "configuring $build"
  mkdir -p "$build"
  cmake -S "$root/test/fuzz" -B "$build" -G Ninja \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" > "$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; rm -f "$build/build.ninja"; exit 1; }
fi
targets=(tcc-fuzz-onnx tcc-fuzz-onnx-text tcc-fuzz-tensor)
log "building ${targets[*]}"
ninja -C "$build" -j "$jobs" "${targets[@]}" >&2

# Seeds: the checked-in corpus (reproducers of past crashes among them),
# every model of the lit tests (split at their `#--- name` markers), the same
# models in binary form, and the tensor files of the bundled models.
seeds=$build/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{onnx,onnx-text,tensor}
"$python" "$root/test/fuzz/make_seeds.py" --root "$root" --out "$seeds" >&2

status=0
for target in "${targets[@]}"; do
  kind=${target#tcc-fuzz-}
  corpus=$build/corpus/$kind
  crashes=$build/crashes/$kind
  mkdir -p "$corpus" "$crashes"
  log "$target: ${seconds}s over $(ls "$seeds/$kind" "$root/test/fuzz/corpus/$kind" 2>/dev/null | wc -l) seeds"
  # ASan: no leak check between runs (LLVM's and onnx's static state), but
  # at the end of the session it runs.
  # The checked-in corpus of a target may not exist yet (git keeps no
  # empty folders); libFuzzer refuses a missing folder.
  dirs=("$corpus" "$seeds/$kind")
  [ -d "$root/test/fuzz/corpus/$kind" ] && dirs+=("$root/test/fuzz/corpus/$kind")
  if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
       UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       "$build/bin/$target" -max_total_time="$seconds" -timeout=20 \
         -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
         -print_final_stats=1 -artifact_prefix="$crashes/" \
         "${dirs[@]}" > "$build/$kind.log" 2>&1; then
    tail -n 60 "$build/$kind.log" >&2
    log "FAILED: $target; the input is in $crashes/ (reproduce: $build/bin/$target FILE)"
    status=1
  else
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done )' "$build/$kind.log" | sed "s/^/[fuzz] $target: /" >&2 || true
  fi
done
exit $status
