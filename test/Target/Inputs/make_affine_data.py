"""Writes input_0.npy and the expected outputs of Inputs/affine.mlir."""
import sys
import numpy as np

out = sys.argv[1]
x = np.arange(6, dtype=np.float32).reshape(2, 3)
y = np.maximum(x * np.array([1.0, -2.0, 0.5], np.float32) + 0.25, 0)
np.save(f"{out}/input_0.npy", x)
np.save(f"{out}/output_0.npy", y.astype(np.float32))
np.save(f"{out}/output_1.npy", np.array(y.sum(), np.float32))
