#!/bin/sh
# The GPU check of the CUDA target, in two halves:
#   tools/gpu-check.sh prepare DIR [MODEL...]   (here, with tcc built)
#       compiles the bench models (default: mlp resnet18 mobilenet_v2
#       encoder) for sm_90 into DIR, with their test data (PyTorch's
#       outputs), tcc-run and libtccrt.so: nothing of MLIR/LLVM. The
#       artifacts carry their weights (resnet18 52 MB, the encoder 34 MB,
#       mobilenet_v2 19 MB): where what travels to the GPU machine is
#       limited (64 MiB), prepare two folders, resnet18 alone and the rest;
#   DIR/gpu-check.sh run DIR   (on the GPU machine, which has CUDA,
#       PyTorch and nothing of tcc) runs each artifact against PyTorch's
#       outputs (rtol 1e-3), times it, times PyTorch eager and
#       torch.compile beside it when torchvision is there, and prints one
#       table. Exit status 1 when any check fails.
set -eu
mode=${1:-}
dir=${2:-}
[ -n "$mode" ] && [ -n "$dir" ] || {
  echo "usage: $0 prepare DIR [MODEL...] | run DIR" >&2
  exit 2
}
shift 2

case $mode in
prepare)
  models=${*:-mlp resnet18 mobilenet_v2 encoder}
  root=$(cd "$(dirname "$0")/.." && pwd)
  build=${TCC_BUILD_DIR:-$root/build}
  mkdir -p "$dir/bin" "$dir/lib"
  cp "$build/bin/tcc-run" "$dir/bin/"
  cp -L "$build/lib/libtccrt.so"* "$dir/lib/" 2>/dev/null || true
  for m in $models; do
    "$build/bin/tcc" "$build/models/$m/model.onnx" --target=cuda \
      --cuda-arch=sm_90 -o "$dir/$m.so"
    rm -rf "$dir/$m.data"
    cp -r "$build/models/$m/test_data_set_0" "$dir/$m.data"
  done
  cp "$0" "$dir/gpu-check.sh"
  du -sh "$dir"
  ;;
run)
  export LD_LIBRARY_PATH="$dir/lib:${LD_LIBRARY_PATH:-}"
  models=$(cd "$dir" && ls *.so | sed 's/\.so$//')
  status=0
  printf '%-14s %-6s %s\n' model check "tcc ms (median of 50)"
  for m in $models; do
    if "$dir/bin/tcc-run" "$dir/$m.so" --inputs "$dir/$m.data" --check \
        --rtol 1e-3 --atol 1e-4 > "$dir/$m.check.txt" 2>&1; then
      check=PASS
    else
      check=FAIL
      status=1
    fi
    time=$("$dir/bin/tcc-run" "$dir/$m.so" --inputs "$dir/$m.data" \
      --bench 50 --warmup 5 2>&1 | grep -m1 -o 'median [0-9.]* ms' || echo '-')
    printf '%-14s %-6s %s\n' "$m" "$check" "$time"
    [ $check = PASS ] || sed 's/^/    /' "$dir/$m.check.txt"
  done
  # PyTorch on the same GPU, batch as the artifacts (timing only).
  python3 - <<'PY' || true
import time
try:
    import torch, torchvision
except ImportError as e:
    print(f"(no PyTorch comparison: {e})")
    raise SystemExit
if not torch.cuda.is_available():
    print("(no PyTorch comparison: torch.cuda is not available)")
    raise SystemExit
def bench(f, x, n=50):
    with torch.no_grad():
        for _ in range(5):
            f(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(n):
            t = time.perf_counter(); f(x); torch.cuda.synchronize()
            times.append((time.perf_counter() - t) * 1e3)
    return sorted(times)[n // 2]
for name, make in [("resnet18", torchvision.models.resnet18),
                   ("mobilenet_v2", torchvision.models.mobilenet_v2)]:
    m = make().eval().cuda()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    eager = bench(m, x)
    compiled = bench(torch.compile(m), x)
    print(f"{name:14s} torch eager {eager:.3f} ms, torch.compile {compiled:.3f} ms")
PY
  exit $status
  ;;
*)
  echo "usage: $0 prepare DIR [MODEL...] | run DIR" >&2
  exit 2
  ;;
esac
