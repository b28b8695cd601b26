// RUN: rm -rf %t && mkdir -p %t/out
// RUN: tcc %S/Inputs/affine.mlir -o %t/affine
// RUN: %python %S/Inputs/make_affine_data.py %t
// RUN: %t/affine --inputs %t --outputs %t/out | FileCheck %s
// RUN: %python -c "import numpy as np, onnx, onnx.numpy_helper as h; t = onnx.TensorProto(); t.ParseFromString(open('%t/out/output_1.pb', 'rb').read()); print(h.to_array(t))" | FileCheck %s --check-prefix=FILE

// Tests the standalone executable: it reads the input files, runs, prints
// and writes each output.
// CHECK: y: f32[2,3] 0.25 0 1.25 3.25 0 2.75
// CHECK: total: f32[] 7.5
// FILE: 7.5
