// RUN: rm -rf %t && mkdir -p %t
// RUN: tcc %s -o %t/ret.so
// RUN: %python -c "import numpy as np; np.save('%t/input_0.npy', np.arange(4, dtype=np.float32)); np.save('%t/output_0.npy', np.arange(4, dtype=np.float32)); np.save('%t/output_1.npy', np.arange(4, dtype=np.float32)); np.save('%t/output_2.npy', np.array([1, 2], np.float32))"
// RUN: tcc-run %t/ret.so --inputs %t --check | FileCheck %s

// Tests a model that returns its input twice and a constant: each output
// is its own buffer and gets the right values.
// CHECK: output 0 {{.*}}: PASS
// CHECK: output 1 {{.*}}: PASS
// CHECK: output 2 {{.*}}: PASS
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2xf32>) {
  %c = tcc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %x, %x, %c : tensor<4xf32>, tensor<4xf32>, tensor<2xf32>
}
