#!/usr/bin/env bash
# The AddressSanitizer + UndefinedBehaviorSanitizer run: builds the project
# with -DTCC_SANITIZE=address,undefined in its own folder and runs the unit
# tests, the lit suite (tcc, tcc-opt and tcc-run instrumented) and the
# end-to-end model tests under it. Its last result is in docs/security.md.
#
#   tools/sanitize.sh [--build-dir DIR] [--jobs N] [-- extra ctest arguments]
#
# Not run: tests that load the project's code into an uninstrumented Python
# (python-binding, autodiff-gradcheck, bench-smoke) or that exercise no code
# of the project's (docs-current-*), the ONNX backend suite (its models go
# through the same importer paths as lit and e2e, at 20x the time),
# runtime-tsan (ThreadSanitizer cannot share a build with ASan), and
# fuzz-smoke (the fuzzers have a sanitizer build of their own).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build-asan
jobs=${TCC_JOBS:-$(nproc)}
venv=${TCC_VENV:-$HOME/.cache/tcc/venv}
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [--build-dir DIR] [--jobs N] [-- ctest args]" >&2; exit 2 ;;
  esac
done

log() { printf '\033[1m[sanitize] %s\033[0m\n' "$*" >&2; }

if [ ! -f "$build/build.ninja" ]; then
  log "configuring $build"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTCC_SANITIZE=address,undefined -DTCC_PYTHON="$venv/bin/python"
fi
log "building (-j$jobs)"
ninja -C "$build" -j "$jobs"

# A sanitizer report aborts the process (a signal, which lit's `not` does
# not mistake for an expected failure). Leaks are reported too.
# allocator_may_return_null: the runtime reports a failed huge allocation
# (Tensor.HugeAllocationIsResourceExhausted), which ASan would abort on.
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# LLVM's and MLIR's own one-time allocations (uninstrumented libraries).
export LSAN_OPTIONS=suppressions=$root/tools/lsan.supp:print_suppressions=0
log "running the unit, lit and e2e tests under ASan+UBSan"
cd "$build"
exec ctest --output-on-failure -j "$jobs" \
  -E '^(onnx-backend|python-binding|autodiff-gradcheck|bench-smoke|docs-current|runtime-tsan|fuzz-smoke)' "$@"
