// RUN: tcc-opt %s --convert-memref-copy-to-linalg --split-input-file | FileCheck %s

// Tests that a copy out of a strided view becomes linalg.copy.
// CHECK-LABEL: func @strided
// CHECK: linalg.copy ins(%{{.*}} : memref<4xf32, strided<[2]>>) outs(%{{.*}} : memref<4xf32>)
// CHECK-NOT: memref.copy
func.func @strided(%a: memref<4xf32, strided<[2]>>, %b: memref<4xf32>) {
  memref.copy %a, %b : memref<4xf32, strided<[2]>> to memref<4xf32>
  return
}

// -----

// Tests that contiguous copies stay (they become memcpy).
// CHECK-LABEL: func @contiguous
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<2x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 8>>
// CHECK-NOT: linalg.copy
func.func @contiguous(%a: memref<2x4xf32>, %b: memref<2x4xf32, strided<[4, 1], offset: 8>>) {
  memref.copy %a, %b : memref<2x4xf32> to memref<2x4xf32, strided<[4, 1], offset: 8>>
  return
}
