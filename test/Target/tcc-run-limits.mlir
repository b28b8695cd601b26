// RUN: rm -rf %t && mkdir -p %t
// RUN: tcc %S/Inputs/affine.mlir -o %t/affine.so
// RUN: %python %S/Inputs/make_affine_data.py %t
// RUN: not tcc-run %t/affine.so --inputs %t --max-input-bytes 16 2>&1 | FileCheck %s
// RUN: tcc-run %t/affine.so --inputs %t --max-input-bytes 1K --check | FileCheck %s --check-prefix=OK
// RUN: not tcc-run %t/affine.so --inputs %t --max-input-bytes 0 2>&1 | FileCheck %s --check-prefix=USAGE
// RUN: not tcc-run %t/affine.so --inputs %t --max-input-bytes 12Q 2>&1 | FileCheck %s --check-prefix=USAGE

// Tests that an input file over the cap is refused before it is read,
// naming the file and the cap.
// CHECK: error: {{.*}}input_0.npy' holds {{[0-9]+}} bytes, more than the limit of 16 for a tensor file

// Tests that a file under the cap (with a suffix) loads.
// OK: output 1 'total' f32[]: PASS

// Tests that a bad size is a usage error.
// USAGE: --max-input-bytes expects a positive size such as 4096, 64M or 4G
