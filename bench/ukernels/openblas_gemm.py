#!/usr/bin/env python3
"""GFLOP/s of numpy's float32 matmul (OpenBLAS) at the sizes and thread
counts that tcc-ukernel-bench uses, so the two tables can be compared.

Run it with the project venv and OpenBLAS free to pick its own kernels:

    env -u OPENBLAS_CORETYPE /root/.cache/tcc/venv/bin/python \
        bench/ukernels/openblas_gemm.py [--threads 1,2] [--seconds 0.5]

Each thread count runs in a fresh process (OpenBLAS reads
OPENBLAS_NUM_THREADS when it loads). Like tcc-ukernel-bench, it times C = A*B
into a preallocated C and reports the best and the median of the runs.
"""
import argparse
import ctypes
import glob
import os
import subprocess
import sys
import time

SIZES = (256, 512, 1024, 2048)
SHAPES = ((64, 3136, 576), (1, 1000, 512), (512, 49, 4608), (128, 784, 1152))


def openblas_corename():
    import numpy

    libs = glob.glob(os.path.join(os.path.dirname(numpy.__file__) + ".libs",
                                  "libscipy_openblas*.so"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_corename64_",
                     "scipy_openblas_get_corename", "openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return "unknown"


def time_matmul(m, n, k, seconds):
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.random((m, k), dtype=np.float32)
    b = rng.random((k, n), dtype=np.float32)
    c = np.empty((m, n), dtype=np.float32)
    np.matmul(a, b, out=c)
    times = []
    start = time.perf_counter()
    while len(times) < 3 or time.perf_counter() - start < seconds:
        t = time.perf_counter()
        np.matmul(a, b, out=c)
        times.append(time.perf_counter() - t)
    times.sort()
    return times[0], times[len(times) // 2]


def worker(threads, seconds):
    print(f"OpenBLAS core: {openblas_corename()}, threads: {threads}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    for m, n, k in [(s, s, s) for s in SIZES] + list(SHAPES):
        best, median = time_matmul(m, n, k, seconds)
        flops = 2.0 * m * n * k
        print(f"  {m:5d} x {n:5d} x {k:5d}  T={threads}  "
              f"{flops / best / 1e9:8.1f} GFLOP/s best  "
              f"{flops / median / 1e9:8.1f} median  {best * 1e3:9.3f} ms",
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--seconds", type=float, default=0.5,
                        help="time spent on each size (at least 3 runs)")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.seconds)
        return
    if "OPENBLAS_CORETYPE" in os.environ:
        print("note: OPENBLAS_CORETYPE is set; run with "
              "`env -u OPENBLAS_CORETYPE` to let OpenBLAS pick its kernels",
              file=sys.stderr)
    for t in (int(x) for x in args.threads.split(",")):
        env = dict(os.environ)
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
            env[var] = str(t)
        subprocess.run([sys.executable, __file__, "--worker", str(t),
                        "--seconds", str(args.seconds)], env=env, check=True)


if __name__ == "__main__":
    main()
