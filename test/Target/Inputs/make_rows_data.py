"""Writes the input and the expected output of Inputs/rows.mlir."""
import sys
import numpy as np

out = sys.argv[1]
x = np.random.default_rng(0).standard_normal((300, 257)).astype(np.float32)
z = np.exp(x.astype(np.float64)) - x
z = np.exp(z - z.max(axis=1, keepdims=True))
np.save(f"{out}/input_0.npy", x)
np.save(f"{out}/output_0.npy", (z / z.sum(axis=1, keepdims=True)).astype(np.float32))
