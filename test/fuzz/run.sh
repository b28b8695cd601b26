#!/usr/bin/env bash
# Builds the libFuzzer targets (test/fuzz/CMakeLists.txt: clang-19,
# -fsanitize=fuzzer,address,undefined) and runs each for a short session
# over its seed corpus. ctest runs it as `fuzz-smoke`; by hand:
#   test/fuzz/run.sh [--build-dir DIR] [--seconds N] [--jobs N] [--python PY]
#                    [--campaign N] [--targets "T1 T2"]
# --campaign N is a long session: N fuzzing processes (-fork=N) that go on
# past a crash, seeded also with the ONNX backend suite (the pip onnx
# package's test data, build/onnx-backend/node, Debian's libonnx-testdata);
# every crash, leak or timeout found is left in DIR/crashes/ and fails the
# run at the end.
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
campaign=0
targets=(tcc-fuzz-onnx tcc-fuzz-onnx-text tcc-fuzz-tensor tcc-fuzz-torchscript)
while [ $# -gt 0 ]; do
  case "$1" in
    --campaign) campaign=$2; shift 2 ;;
    --targets) read -r -a targets <<< "$2"; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    *) echo "usage: $0 [--build-dir DIR] [--seconds N] [--jobs N] [--python PY] [--campaign N] [--targets LIST]" >&2; exit 2 ;;
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
# tcc-fuzz-torchscript is not a libFuzzer binary: torchscript_fuzz.py
# mutates TorchScript archives and imports them with the torch frontend of
# the main build (the parent of DIR: its python/ package and bin/tcc).
native=()
for target in "${targets[@]}"; do
  [ "$target" = tcc-fuzz-torchscript ] || native+=("$target")
done
if [ ${#native[@]} -gt 0 ]; then
  log "building ${native[*]}"
  ninja -C "$build" -j "$jobs" "${native[@]}" >&2
fi

# Seeds: the checked-in corpus (reproducers of past crashes among them),
# every model of the lit tests (split at their `#--- name` markers), the same
# models in binary form, and the tensor files of the bundled models.
seeds=$build/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{onnx,onnx-text,tensor}
suites=()
if [ "$campaign" -gt 0 ]; then
  onnx_data=$("$python" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data"))')
  for d in "$onnx_data" "$root/build/onnx-backend/node" /usr/share/libonnx-testdata/data; do
    [ -d "$d" ] && suites+=(--suite "$d")
  done
fi
"$python" "$root/test/fuzz/make_seeds.py" --root "$root" --out "$seeds" "${suites[@]}" >&2

status=0
for target in "${targets[@]}"; do
  kind=${target#tcc-fuzz-}
  if [ "$target" = tcc-fuzz-torchscript ]; then
    main=$(dirname "$build")
    log "$target: ${seconds}s"
    if ! PYTHONPATH="$main/python" "$python" "$root/test/fuzz/torchscript_fuzz.py" \
         --seconds "$seconds" --out "$build/torchscript" --tcc "$main/bin/tcc" \
         > "$build/torchscript.log" 2>&1; then
      tail -n 30 "$build/torchscript.log" >&2
      log "FAILED: $target; the inputs are in $build/torchscript/crashes/"
      status=1
    else
      tail -n 1 "$build/torchscript.log" | sed "s/^/[fuzz] /" >&2
    fi
    continue
  fi
  corpus=$build/corpus/$kind
  crashes=$build/crashes/$kind
  rm -rf "$crashes"
  mkdir -p "$corpus" "$crashes"
  log "$target: ${seconds}s over $(ls "$seeds/$kind" "$root/test/fuzz/corpus/$kind" 2>/dev/null | wc -l) seeds"
  # ASan: no leak check between runs (LLVM's and onnx's static state), but
  # at the end of the session it runs.
  # The checked-in corpus of a target may not exist yet (git keeps no
  # empty folders); libFuzzer refuses a missing folder.
  dirs=("$corpus" "$seeds/$kind")
  [ -d "$root/test/fuzz/corpus/$kind" ] && dirs+=("$root/test/fuzz/corpus/$kind")
  mode=()
  [ "$campaign" -gt 0 ] && mode=(-fork="$campaign" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
       UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       "$build/bin/$target" -max_total_time="$seconds" -timeout=20 \
         -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
         -print_final_stats=1 -artifact_prefix="$crashes/" "${mode[@]}" \
         "${dirs[@]}" > "$build/$kind.log" 2>&1 ||
     [ -n "$(ls -A "$crashes")" ]; then
    tail -n 60 "$build/$kind.log" >&2
    log "FAILED: $target; the input is in $crashes/ (reproduce: $build/bin/$target FILE)"
    status=1
  else
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done )' "$build/$kind.log" | sed "s/^/[fuzz] $target: /" >&2 || true
  fi
done
exit $status
