// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python %S/Inputs/make_weights_model.py > %t/w.mlir
// RUN: tcc %t/w.mlir --emit=asm -o - | FileCheck %s
// RUN: tcc %t/w.mlir --jobs=2 -o %t/w.so
// RUN: %python -c "import numpy as np; np.save('%t/in/input_0.npy', np.ones(2048, np.float32)); np.save('%t/in/input_1.npy', np.zeros(2, np.float32))"
// RUN: tcc-run %t/w.so --inputs %t/in | FileCheck %s --check-prefix=OUT

// Tests that a large constant of numbers (2048 distinct floats, 8 KB) is
// written as one byte string (the asm printer writes other arrays an
// element at a time) and a small one is not, and that the weights of a
// library compiled in pieces (--jobs, its weights in a piece of their own)
// reach its code.
// CHECK: .long 0x40000000
// CHECK: .long 0x40400000
// CHECK: {{^}}__constant_2048xf32:
// CHECK-NEXT: .ascii "\000\000\000\000\000\000\200>
// CHECK-NOT: .long 0x3e800000

// OUT: output 0 'y' f32[2048] = [1, 1.25, 1.5, 1.75, 2, 2.25
// OUT: output 1 't' f32[2] = [2, 3]
