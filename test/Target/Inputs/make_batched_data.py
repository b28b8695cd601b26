"""Writes the inputs and the expected output of Inputs/batched.mlir."""
import sys
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(1)
a = rng.standard_normal((6, 32, 40)).astype(np.float32)
b = rng.standard_normal((6, 40, 24)).astype(np.float32)
np.save(f"{out}/input_0.npy", a)
np.save(f"{out}/input_1.npy", b)
np.save(f"{out}/output_0.npy", (np.matmul(a, b) + 0.5).astype(np.float32))
