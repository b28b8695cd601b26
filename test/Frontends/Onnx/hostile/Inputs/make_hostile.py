"""Writes the hostile inputs that the ONNX text syntax cannot express.

usage: make_hostile.py KIND OUTPUT

Every kind is deterministic (random bytes come from a fixed seed).
"""
import os
import random
import sys

import onnx
from onnx import TensorProto, helper


def model(nodes, inputs, outputs, initializers=(), opset=13, name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def io(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def relu_of(w):
    return model([helper.make_node("Relu", [w.name], ["Y"])], [],
                 [io("Y", w.data_type, None)], [w])


def valid():
    """A small model with an initializer: the source of the truncated ones."""
    w = helper.make_tensor("W", TensorProto.FLOAT, [4, 4], [float(i) for i in range(16)])
    return model([helper.make_node("MatMul", ["X", "W"], ["T"]),
                  helper.make_node("Relu", ["T"], ["Y"])],
                 [io("X", TensorProto.FLOAT, [2, 4])], [io("Y", TensorProto.FLOAT, [2, 4])], [w])


def huge_initializer():
    """2^40 elements declared, no data: refused before anything is allocated."""
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[1 << 40])
    return relu_of(w)


def negative_initializer():
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[2, -3])
    return relu_of(w)


def negative_input():
    return model([helper.make_node("Relu", ["X"], ["Y"])],
                 [io("X", TensorProto.FLOAT, [2, -3])], [io("Y", TensorProto.FLOAT, None)])


def typed_count():
    """float_data holds 3 values for a 2x3 shape."""
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[2, 3])
    w.float_data.extend([1.0, 2.0, 3.0])
    return relu_of(w)


def external(location, offset="0"):
    def make():
        w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[2])
        w.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", offset)):
            e = w.external_data.add()
            e.key, e.value = k, v
        return relu_of(w)
    return make


def nested_if_text(depth):
    """If nodes nested `depth` deep through their then-branches, in the ONNX
    text syntax (returned as text); each else-branch is a Relu."""
    def make():
        body = "Y0 = Relu(X)"
        for d in range(1, depth + 1):
            branch = f"g{d} () => (float[2] Y{d - 1}) {{ {body} }}"
            leaf = f"e{d} () => (float[2] E{d}) {{ E{d} = Relu(X) }}"
            body = f"Y{d} = If <then_branch = {branch}, else_branch = {leaf}> (C)"
        return (f'<ir_version: 8, opset_import: ["" : 13]>\n'
                f"g (bool C, float[2] X) => (float[2] Y{depth}) {{\n  {body}\n}}\n")
    return make


def header_names():
    """Names that would break, or inject code into, the generated header."""
    return model([helper.make_node("Add", ["int", "a\nb */ int injected; /*"], ["Y"])],
                 [io("int", TensorProto.FLOAT, [2]),
                  io("a\nb */ int injected; /*", TensorProto.FLOAT, [2])],
                 [io("Y", TensorProto.FLOAT, [2])], name="m */ int evil = 1; /*")


def random_bytes(seed, size):
    def make():
        return random.Random(seed).randbytes(size)
    return make


KINDS = {
    "valid": valid,
    "huge-initializer": huge_initializer,
    "negative-initializer": negative_initializer,
    "negative-input": negative_input,
    "typed-count": typed_count,
    "external-absolute": external("/etc/hostname"),
    "external-fifo": external("fifo"),
    "external-offset": external("weights.bin", offset="-1"),
    "nested-if-text-300": nested_if_text(300),
    "header-names": header_names,
    "random-1": random_bytes(1, 64),
    "random-2": random_bytes(2, 1000),
    "random-3": random_bytes(3, 4096),
}

if __name__ == "__main__":
    kind, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    made = KINDS[kind]()
    with open(out, "wb") as f:
        if isinstance(made, onnx.ModelProto):
            f.write(made.SerializeToString())
        else:
            f.write(made.encode() if isinstance(made, str) else made)
