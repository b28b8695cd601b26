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


# The findings of a fuzz campaign seeded with the ONNX suite: each once
# crashed tcc or gave two diagnostics.

def max_unpool_indices():
    """Indices of 88 elements for an X of 4."""
    return model([helper.make_node("MaxUnpool", ["X", "I"], ["Y"],
                                   kernel_shape=[2, 2])],
                 [io("X", TensorProto.FLOAT, [1, 1, 2, 2]),
                  io("I", TensorProto.INT64, [1, 1, 8, 11])],
                 [io("Y", TensorProto.FLOAT, None)], opset=11)


def recurrent(op, gates, bias_type=TensorProto.FLOAT, bias_size=None):
    """An LSTM/GRU of hidden size 2 whose bias has `bias_size` elements
    (2 * gates * hidden when None) of `bias_type`."""
    h = 2
    b = helper.make_tensor("B", bias_type, [1, bias_size or 2 * gates * h],
                           [1] * (bias_size or 2 * gates * h))
    w = helper.make_tensor("W", TensorProto.FLOAT, [1, gates * h, 3],
                           [0.5] * (gates * h * 3))
    r = helper.make_tensor("R", TensorProto.FLOAT, [1, gates * h, h],
                           [0.5] * (gates * h * h))
    return model([helper.make_node(op, ["X", "W", "R", "B"], ["Y"],
                                   hidden_size=h)],
                 [io("X", TensorProto.FLOAT, [2, 1, 3])],
                 [io("Y", TensorProto.FLOAT, None)], [w, r, b], opset=14)


def hardmax_unknown_dim():
    """A dimension with neither dim_value nor dim_param."""
    x = io("X", TensorProto.FLOAT, [2, 3])
    x.type.tensor_type.shape.dim[1].Clear()
    return model([helper.make_node("Hardmax", ["X"], ["Y"])], [x],
                 [io("Y", TensorProto.FLOAT, None)], opset=13)


def branch(nodes, outputs, inputs=()):
    return helper.make_graph(nodes, "branch", list(inputs), outputs)


def if_of(then_branch, opset=13):
    leaf = branch([helper.make_node("Relu", ["X"], ["E"])],
                  [io("E", TensorProto.FLOAT, [2])])
    return model([helper.make_node("If", ["C"], ["Y"], then_branch=then_branch,
                                   else_branch=leaf)],
                 [io("C", TensorProto.BOOL, []), io("X", TensorProto.FLOAT, [2])],
                 [io("Y", TensorProto.FLOAT, None)], opset=opset)


def if_dangling():
    """The then-branch lists an output no node makes."""
    return if_of(branch([helper.make_node("Relu", ["X"], ["T"])],
                        [io("Nowhere", TensorProto.FLOAT, [2])]))


def if_slice_start():
    """A Slice in the then-branch whose start is computed, not constant."""
    return if_of(branch([
        helper.make_node("ArgMax", ["X"], ["S"], keepdims=1),
        helper.make_node("Slice", ["X", "S", "S"], ["T"])],
        [io("T", TensorProto.FLOAT, [2])]))


def if_short_constant():
    """A Constant in the then-branch whose raw_data is 4 bytes for 2 floats."""
    t = TensorProto(name="v", data_type=TensorProto.FLOAT, dims=[2],
                    raw_data=b"\0\0\x80\x3f")
    return if_of(branch([helper.make_node("Constant", [], ["T"], value=t)],
                        [io("T", TensorProto.FLOAT, [2])]))


def if_optional():
    """An Optional in the then-branch."""
    return if_of(branch([helper.make_node("Optional", ["X"], ["O"]),
                         helper.make_node("OptionalGetElement", ["O"], ["T"])],
                        [io("T", TensorProto.FLOAT, [2])]), opset=18)


def loop_sequence_output():
    """The body of a Loop makes a sequence."""
    body = branch([helper.make_node("Identity", ["cond"], ["cond_out"]),
                   helper.make_node("SequenceConstruct", ["X"], ["S"])],
                  [io("cond_out", TensorProto.BOOL, []),
                   helper.make_tensor_sequence_value_info("S", TensorProto.FLOAT, [2])],
                  [io("i", TensorProto.INT64, []), io("cond", TensorProto.BOOL, [])])
    return model([helper.make_node("Loop", ["N", ""], ["Y"], body=body)],
                 [io("N", TensorProto.INT64, []), io("X", TensorProto.FLOAT, [2])],
                 [io("Y", TensorProto.FLOAT, None)], opset=13)


def scan_dangling():
    """A Scan (opset 9) body that lists an output no node makes."""
    body = branch([helper.make_node("Add", ["s", "x"], ["s_out"])],
                  [io("s_out", TensorProto.FLOAT, [2]),
                   io("Nowhere", TensorProto.FLOAT, [2])],
                  [io("s", TensorProto.FLOAT, [2]), io("x", TensorProto.FLOAT, [2])])
    return model([helper.make_node("Scan", ["S0", "X"], ["S", "Y"], body=body,
                                   num_scan_inputs=1)],
                 [io("S0", TensorProto.FLOAT, [2]), io("X", TensorProto.FLOAT, [3, 2])],
                 [io("S", TensorProto.FLOAT, None), io("Y", TensorProto.FLOAT, None)],
                 opset=9)


def split_no_outputs():
    """A Split node with no outputs (the text syntax needs one): nothing to
    divide the axis by. Opset 18, past what libonnx 1.12's checker knows."""
    return model([helper.make_node("Identity", ["X"], ["Y"]),
                  helper.make_node("Split", ["X"], [], axis=1)],
                 [io("X", TensorProto.FLOAT, [4, 6])],
                 [io("Y", TensorProto.FLOAT, [4, 6])], opset=18)


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
    "max-unpool-indices": max_unpool_indices,
    "lstm-bias-size": lambda: recurrent("LSTM", 4, bias_size=2),
    "gru-bias-i16": lambda: recurrent("GRU", 3, bias_type=TensorProto.INT16),
    "hardmax-unknown-dim": hardmax_unknown_dim,
    "if-dangling": if_dangling,
    "if-slice-start": if_slice_start,
    "if-short-constant": if_short_constant,
    "if-optional": if_optional,
    "loop-sequence-output": loop_sequence_output,
    "scan-dangling": scan_dangling,
    "split-no-outputs": split_no_outputs,
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
