#!/usr/bin/env python3
"""Writes ONNX's node backend tests as data: DIR/<test>/model.onnx and
DIR/<test>/test_data_set_0/{input,output}_K.pb.

The pip onnx wheel ships the model tests (simple, pytorch-converted, ...)
as files but not the node tests: those exist only as the Python case
definitions in onnx.backend.test.case.node, which this script runs (ONNX
seeds numpy before every case, so the data is the same on every run). It is
ONNX's own `backend-test-tools generate-data` restricted to node cases.

Usage: generate_node_data.py --out DIR   (skips the work when DIR/.complete
exists and names the same onnx version)
"""
import argparse
import os
import shutil
import sys

import onnx
from onnx import TensorProto, numpy_helper


def _serialize(value, value_info) -> bytes:
    t = value_info.type
    if t.HasField("sequence_type"):
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if t.HasField("optional_type"):
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if t.HasField("map_type"):
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, value_info.name).SerializeToString()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    stamp = os.path.join(args.out, ".complete")
    if os.path.exists(stamp) and open(stamp).read().strip() == onnx.__version__:
        return 0
    from onnx.backend.test.case import node as node_cases

    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    cases = node_cases.collect_testcases()
    for case in cases:
        case_dir = os.path.join(args.out, case.name)
        os.makedirs(case_dir)
        with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            set_dir = os.path.join(case_dir, f"test_data_set_{i}")
            os.makedirs(set_dir)
            for kind, values, infos in (("input", inputs, graph.input),
                                        ("output", outputs, graph.output)):
                for j, value in enumerate(values):
                    with open(os.path.join(set_dir, f"{kind}_{j}.pb"), "wb") as f:
                        f.write(_serialize(value, infos[j]))
    with open(stamp, "w") as f:
        f.write(onnx.__version__ + "\n")
    print(f"wrote {len(cases)} node tests to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
