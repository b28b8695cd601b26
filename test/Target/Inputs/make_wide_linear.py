"""Writes wide_linear.onnx (y = x @ W + b, W a 1024 x 1280 constant: 5 MiB
of weights) with input_0.npy and the expected output_0.npy."""
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1]
rng = np.random.default_rng(7)
w = rng.standard_normal((1024, 1280), dtype=np.float32) * 0.03
b = rng.standard_normal(1280, dtype=np.float32)
x = rng.standard_normal((4, 1024), dtype=np.float32)
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
     helper.make_node("Add", ["xw", "b"], ["y"], name="bias")],
    "wide_linear",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 1024])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 1280])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, f"{out}/wide_linear.onnx")
np.save(f"{out}/input_0.npy", x)
np.save(f"{out}/output_0.npy", (x.astype(np.float64) @ w + b).astype(np.float32))
