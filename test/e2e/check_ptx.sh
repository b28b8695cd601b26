#!/bin/sh
# Compiles the bench models with --target=cuda for each architecture and
# assembles their PTX with the CUDA toolkit's ptxas: every kernel must be
# valid PTX for sm_80 and sm_90. Exit 77 (a skip) without ptxas.
# usage: check_ptx.sh TCC MODELS_DIR OUT_DIR MODEL...
set -eu
tcc=$1 models=$2 out=$3
shift 3
ptxas=$(command -v ptxas || true)
[ -n "$ptxas" ] || [ ! -x /usr/local/cuda/bin/ptxas ] || ptxas=/usr/local/cuda/bin/ptxas
if [ -z "$ptxas" ]; then
  echo "SKIP: no ptxas (the CUDA toolkit) to check the PTX with"
  exit 77
fi
mkdir -p "$out"
for model in "$@"; do
  for arch in sm_80 sm_90; do
    ptx="$out/$model.$arch.ptx"
    "$tcc" "$models/$model/model.onnx" --target=cuda --cuda-arch=$arch \
      --emit=ptx -o "$ptx"
    "$ptxas" -arch=$arch "$ptx" -o "$out/$model.$arch.cubin"
    echo "$model $arch: $(grep -c '\.entry' "$ptx") kernels assembled"
  done
done
