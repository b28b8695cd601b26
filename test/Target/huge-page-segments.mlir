// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_wide_linear.py %t
// RUN: tcc %t/wide_linear.onnx -o %t/wide.so
// RUN: tcc-run %t/wide.so --inputs %t --check --rtol 1e-4 --atol 1e-4 | FileCheck %s
// RUN: llvm-readelf -lW %t/wide.so | FileCheck %s --check-prefix=HUGE
// RUN: tcc %t/wide_linear.onnx -o %t/wide
// RUN: llvm-readelf -lW %t/wide | FileCheck %s --check-prefix=HUGE
// RUN: tcc %S/Inputs/affine.mlir -o %t/affine.so
// RUN: llvm-readelf -lW %t/affine.so | FileCheck %s --check-prefix=SMALL

// Tests that a library or executable holding megabytes of weights has its
// segments aligned to 2 MiB in the file as in memory (so the kernel may map
// the weights with huge pages), and still runs and matches numpy (float64
// reference; 1e-4 for float32 sums over 1024 products), while a small one
// keeps 4 KiB pages and its small size.
// CHECK: output 0 'y' f32[4x1280]: PASS
// HUGE: LOAD {{.*}} R E 0x200000
// HUGE: LOAD {{.*}} R 0x200000
// SMALL-NOT: 0x200000
// SMALL: LOAD {{.*}} R E 0x1000
// SMALL-NOT: 0x200000
