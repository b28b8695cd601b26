#!/usr/bin/env bash
# tcc's one entry point for a fresh Debian 12 machine (run as root):
#   tools/dev.sh run    install what is missing, build, compile and run the
#                       bundled model (prints its outputs and latency)
#   tools/dev.sh test   install what is missing, build, run every test (ctest)
#   tools/dev.sh setup  only install and build
# Each step is skipped when already done, so reruns are quick.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TCC_BUILD_DIR:-$root/build}
venv=${TCC_VENV:-$HOME/.cache/tcc/venv}
jobs=${TCC_JOBS:-$(nproc)}

apt_packages=(
  cmake ninja-build ccache g++ python3-venv python3-dev
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools clang-19 libclang-rt-19-dev
  zlib1g-dev libzstd-dev libedit-dev libxml2-dev libcurl4-openssl-dev libffi-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libgtest-dev nlohmann-json3-dev
  clang-format-19 pkg-config
)
pip_packages=(torch torchvision onnx onnxruntime onnxscript numpy pytest pybind11 expecttest)

log() { printf '\033[1m[tcc] %s\033[0m\n' "$*" >&2; }

install_system_packages() {
  local missing=()
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  log "installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

install_python_packages() {
  if [ ! -x "$venv/bin/python" ]; then
    log "creating the Python environment in $venv"
    python3 -m venv "$venv"
  fi
  local missing=()
  for p in "${pip_packages[@]}"; do
    "$venv/bin/python" -m pip show -q "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  log "pip-installing ${missing[*]} (torch is a large download, once)"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "${missing[@]}"
}

build_tcc() {
  if [ ! -f "$build/build.ninja" ]; then
    log "configuring in $build"
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DTCC_PYTHON="$venv/bin/python"
  fi
  log "building"
  ninja -C "$build" -j "$jobs"
}

setup() {
  install_system_packages
  install_python_packages
  build_tcc
}

run_main_job() {
  local model=$root/models/tiny_cnn
  log "compiling $model/model.onnx"
  "$build/bin/tcc" "$model/model.onnx" -o "$build/tiny_cnn.so"
  log "running it on $model/test_data_set_0 (checked against PyTorch)"
  "$build/bin/tcc-run" "$build/tiny_cnn.so" --inputs "$model/test_data_set_0" \
    --check --rtol 1e-3 --atol 1e-4
  "$build/bin/tcc-run" "$build/tiny_cnn.so" --inputs "$model/test_data_set_0" \
    --bench 200 --warmup 20
}

case "${1:-}" in
  run) setup; run_main_job ;;
  test) setup; log "running the test suite"; cd "$build" && ctest --output-on-failure -j "$jobs" ;;
  setup) setup ;;
  *) echo "usage: $0 run|test|setup" >&2; exit 2 ;;
esac
