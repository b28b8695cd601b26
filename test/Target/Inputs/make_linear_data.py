"""Writes the inputs and the expected output of Inputs/linear.mlir."""
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
