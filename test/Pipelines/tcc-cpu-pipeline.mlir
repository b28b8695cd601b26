// RUN: tcc-opt %s --tcc-cpu-pipeline | FileCheck %s

// Tests that the CPU pipeline ends in the LLVM dialect with inputs, results
// (as trailing out-parameters) and the workspace arena as bare pointers,
// allocates nothing at run time, and needs no MLIR runtime library for
// strided copies.
// CHECK: tcc.workspace_bytes = {{[1-9][0-9]*}} : i64
// CHECK-LABEL: llvm.func @main
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT: memrefCopy
// CHECK-NOT: malloc
// CHECK: llvm.return
// CHECK-NOT: tcc.
// CHECK-NOT: linalg.
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>) {
  %0 = tcc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = tcc.softmax %0 axis = 1 : tensor<4x8xf32>
  %2 = tcc.slice %1 offsets = [0, 0] steps = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x4xf32>
}
