"""Writes the inputs and the expected output of Inputs/linear.mlir, and
sgemm.check: FileCheck lines for the fake driver's log of cuBLAS's product
x @ w (its first and last elements) on each of three runs."""
import sys
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(0)
x = rng.standard_normal((4, 16)).astype(np.float32)
w = rng.standard_normal((16, 8)).astype(np.float32)
b = np.array([0.5, -0.5, 1.0, -1.0, 0.25, -0.25, 2.0, -2.0], np.float32)
np.save(f"{out}/input_0.npy", x)
np.save(f"{out}/input_1.npy", w)
np.save(f"{out}/output_0.npy", np.maximum(x @ w + b, 0).astype(np.float32))
xw = x @ w
with open(f"{out}/sgemm.check", "w") as f:
    for _ in range(3):
        f.write(f"CHECK: sgemm result: first {xw[0, 0]:.4f} last {xw[-1, -1]:.4f}\n")
