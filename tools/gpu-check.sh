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
#       table; with PyTorch there, it also runs each artifact on torch CUDA
#       tensors in place (tcc_context_run_device through libtccrt.so, as
#       the Python binding does), checked and timed. Exit status 1 when
#       any check fails.
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
  # The artifacts on torch CUDA tensors, as a framework runs them
  # (tcc_context_run_device through libtccrt.so: in place, one CUDA graph
  # replayed), checked and timed; then PyTorch itself (timing only).
  TCC_CHECK_DIR="$dir" python3 - <<'PY' || status=1
import ctypes, glob, os, sys, time
try:
    import numpy as np, torch
except ImportError as e:
    print(f"(no run on torch tensors: {e})")
    raise SystemExit
if not torch.cuda.is_available():
    print("(no run on torch tensors: torch.cuda is not available)")
    raise SystemExit
d = os.environ["TCC_CHECK_DIR"]
lib = ctypes.CDLL(os.path.join(d, "lib", "libtccrt.so"))
P, S = ctypes.c_void_p, ctypes.c_size_t
lib.tcc_status_message.restype = ctypes.c_char_p
lib.tcc_status_message.argtypes = [P]
for name, args in [("tcc_model_load", [ctypes.c_char_p, ctypes.POINTER(P)]),
                   ("tcc_context_create", [P, P, ctypes.POINTER(P)]),
                   ("tcc_context_run_device",
                    [P, ctypes.POINTER(P), S, ctypes.POINTER(P), S]),
                   ("tcc_tensor_load_file", [ctypes.c_char_p, ctypes.POINTER(P)])]:
    getattr(lib, name).restype = P
    getattr(lib, name).argtypes = args
lib.tcc_tensor_data.restype = P
lib.tcc_tensor_data.argtypes = [P]
lib.tcc_tensor_byte_size.restype = S
lib.tcc_tensor_byte_size.argtypes = [P]
lib.tcc_tensor_rank.restype = ctypes.c_int32
lib.tcc_tensor_rank.argtypes = [P]
lib.tcc_tensor_shape.restype = ctypes.POINTER(ctypes.c_int64)
lib.tcc_tensor_shape.argtypes = [P]

def ok(status, what):
    if status:
        raise RuntimeError(f"{what}: {lib.tcc_status_message(status).decode()}")

def tensor(path):  # a test data file as a float32 numpy array
    t = P()
    ok(lib.tcc_tensor_load_file(path.encode(), ctypes.byref(t)), path)
    shape = [lib.tcc_tensor_shape(t)[i] for i in range(lib.tcc_tensor_rank(t))]
    data = ctypes.string_at(lib.tcc_tensor_data(t), lib.tcc_tensor_byte_size(t))
    return np.frombuffer(data, np.float32).reshape(shape).copy()

failed = False
print(f"{'model':14s} on torch CUDA tensors (median of 50)")
for so in sorted(glob.glob(os.path.join(d, "*.so"))):
    m = os.path.basename(so)[:-3]
    data = os.path.join(d, m + ".data")
    ins = [torch.from_numpy(tensor(f)).cuda() for f in
           sorted(glob.glob(os.path.join(data, "input_*.pb")))]
    want = [tensor(f) for f in sorted(glob.glob(os.path.join(data, "output_*.pb")))]
    outs = [torch.empty(w.shape, device="cuda") for w in want]
    model, ctx = P(), P()
    try:
        ok(lib.tcc_model_load(so.encode(), ctypes.byref(model)), so)
        ok(lib.tcc_context_create(model, None, ctypes.byref(ctx)), so)
        ip = (P * len(ins))(*[t.data_ptr() for t in ins])
        op = (P * len(outs))(*[t.data_ptr() for t in outs])
        run = lambda: ok(lib.tcc_context_run_device(ctx, ip, len(ins), op, len(outs)), so)
        torch.cuda.synchronize()
        run()
        good = all(np.allclose(o.cpu().numpy(), w, rtol=1e-3, atol=1e-4)
                   for o, w in zip(outs, want))
        times = []
        for _ in range(55):
            t = time.perf_counter(); run(); times.append((time.perf_counter() - t) * 1e3)
        ms = sorted(times[5:])[25]
        print(f"{m:14s} {'PASS' if good else 'FAIL'}  {ms:.3f} ms")
        failed |= not good
    except RuntimeError as e:
        print(f"{m:14s} FAIL  {e}")
        failed = True

# PyTorch on the same GPU, batch as the artifacts (timing only).
try:
    import torchvision
except ImportError as e:
    print(f"(no PyTorch comparison: {e})")
    sys.exit(1 if failed else 0)
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
    try:  # a comparison that fails is reported, not a failed check
        m = make().eval().cuda()
        x = torch.randn(1, 3, 224, 224, device="cuda")
        eager = bench(m, x)
        compiled = bench(torch.compile(m), x)
        print(f"{name:14s} torch eager {eager:.3f} ms, torch.compile {compiled:.3f} ms")
    except Exception as e:
        print(f"{name:14s} (no PyTorch timing: {e})")
sys.exit(1 if failed else 0)
PY
  exit $status
  ;;
*)
  echo "usage: $0 prepare DIR [MODEL...] | run DIR" >&2
  exit 2
  ;;
esac
