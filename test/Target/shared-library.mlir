// RUN: rm -rf %t && mkdir -p %t
// RUN: tcc %S/Inputs/affine.mlir -o %t/affine.so
// RUN: %python %S/Inputs/make_affine_data.py %t
// RUN: tcc-run %t/affine.so --inputs %t --check | FileCheck %s
// RUN: nm -D --defined-only %t/affine.so | FileCheck %s --check-prefix=EXPORTS
// RUN: ldd %t/affine.so | FileCheck %s --check-prefix=LDD
// RUN: ldd %tcc_lib/libtccrt.so | FileCheck %s --check-prefix=LDD

// Tests that a shared library runs under the runtime and matches numpy.
// CHECK: model 'affine'
// CHECK: output 0 'y' f32[2x3]: PASS
// CHECK: output 1 'total' f32[]: PASS

// Tests that it exports nothing but the getters, and that neither it nor the
// runtime needs MLIR or LLVM.
// EXPORTS: T affine_artifact_get
// EXPORTS-NEXT: T tcc_artifact_get
// EXPORTS-NOT: T
// LDD-NOT: MLIR
// LDD-NOT: LLVM
