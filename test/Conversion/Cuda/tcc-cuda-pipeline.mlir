// RUN: tcc-opt %s --tcc-linalg-to-cuda-pipeline="chip=sm_80" | FileCheck %s

// Tests the whole CUDA pipeline on a linear layer with a ReLU: the matmul
// goes to cuBLAS, the bias and ReLU become one PTX kernel for sm_80, the
// weights sit in the device buffer the graph takes last, and the host code
// is LLVM with bare pointers (input, output, arena, weights).
// CHECK: module attributes
// CHECK-SAME: tcc.cuda.kernels = ["main_kernel"]
// CHECK-SAME: tcc.cuda.ptx = "{{.*}}.target sm_80{{.*}}.entry main_kernel
// CHECK-SAME: tcc.cuda.weights_bytes = 768 : i64
// CHECK-NOT: gpu.module
// CHECK-NOT: gpu.binary
// CHECK-LABEL: llvm.func @main
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: llvm.call @tcc_cuda_gemm
// CHECK: llvm.call @tcc_cuda_launch
// CHECK-NOT: llvm.call
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @tcc_cuda_upload_weights
// CHECK-COUNT-2: llvm.call @tcc_cuda_h2d
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %w = arith.constant dense<0.5> : tensor<16x8xf32>
  %b = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %y = arith.maximumf %s, %zero : f32
    linalg.yield %y : f32
  }  -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
