"""Writes the binary .onnx models that the ONNX text syntax cannot express.

usage: make_model.py KIND OUTPUT.onnx
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def io(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def initializers(out):
    """Every way a TensorProto stores data: raw_data, typed fields (float16 and
    bool bit patterns in int32_data, uint64_data, double_data), and a big
    tensor in an external file."""
    inits = [
        numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "raw"),
        helper.make_tensor("typed", TensorProto.FLOAT, [3], [1.5, 2.5, 3.5]),
        helper.make_tensor("half", TensorProto.FLOAT16, [2], [1.0, -2.0]),
        helper.make_tensor("flags", TensorProto.BOOL, [3], [1, 0, 1]),
        helper.make_tensor("small", TensorProto.INT8, [2], [-7, 100]),
        helper.make_tensor("wide", TensorProto.UINT64, [2], [1, 2**63]),
        helper.make_tensor("dbl", TensorProto.DOUBLE, [2], [0.25, -8.0]),
        numpy_helper.from_array(np.ones((100,), np.float32), "big"),
    ]
    ext = numpy_helper.from_array(np.full((4, 32), 2.0, np.float32), "ext")
    ext.ClearField("raw_data")
    ext.data_location = TensorProto.EXTERNAL
    data = np.full((4, 32), 2.0, np.float32).tobytes()
    with open(os.path.join(os.path.dirname(out), "weights.bin"), "wb") as f:
        f.write(b"\0" * 16 + data)
    for k, v in (("location", "weights.bin"), ("offset", "16"), ("length", str(len(data)))):
        e = ext.external_data.add()
        e.key, e.value = k, v
    inits.append(ext)
    outs = [io(t.name + "_out", t.data_type, list(t.dims)) for t in inits]
    nodes = [helper.make_node("Identity", [t.name], [t.name + "_out"]) for t in inits]
    return model(nodes, [], outs, inits)


def raw_data_mismatch(out):
    w = numpy_helper.from_array(np.zeros((2, 3), np.float32), "W")
    w.raw_data = w.raw_data[:20]
    return model([helper.make_node("Relu", ["W"], ["Y"])], [],
                 [io("Y", TensorProto.FLOAT, [2, 3])], [w])


def float8_initializer(out):
    w = helper.make_tensor("W", TensorProto.FLOAT8E4M3FN, [2], [1.0, 2.0])
    return model([helper.make_node("Identity", ["W"], ["Y"])], [],
                 [io("Y", TensorProto.FLOAT, [2])], [w])


def external(location, offset=0, size=None):
    def make(out):
        w = helper.make_tensor("W", TensorProto.FLOAT, [2, 3], [0.0] * 6)
        w.ClearField("float_data")
        w.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", str(offset))):
            e = w.external_data.add()
            e.key, e.value = k, v
        return model([helper.make_node("Relu", ["W"], ["Y"])], [],
                     [io("Y", TensorProto.FLOAT, [2, 3])], [w])
    return make


def named_node(out):
    """A node with a name (the text syntax of libonnx 1.12 has none)."""
    return model([helper.make_node("Relu", ["X"], ["Y"], name="block1/relu")],
                 [io("X", TensorProto.FLOAT, [2])], [io("Y", TensorProto.FLOAT, [2])])


def unsupported_node(out):
    return model([helper.make_node("Relu", ["X"], ["T"], name="ok"),
                  helper.make_node("RandomUniformLike", ["T"], ["Y"],
                                   name="block2/random")],
                 [io("X", TensorProto.FLOAT, [2])], [io("Y", TensorProto.FLOAT, [2])])


KINDS = {
    "initializers": initializers,
    "raw-data-mismatch": raw_data_mismatch,
    "float8-initializer": float8_initializer,
    "external-escape": external("../outside.bin"),
    "external-link": external("link.bin"),
    "external-range": external("weights.bin", offset=16),
    "external-missing": external("missing.bin"),
    "named-node": named_node,
    "unsupported-node": unsupported_node,
}

if __name__ == "__main__":
    kind, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    onnx.save(KINDS[kind](out), out)
