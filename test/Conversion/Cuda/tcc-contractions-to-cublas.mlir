// RUN: tcc-opt %s --tcc-contractions-to-cublas --canonicalize --split-input-file | FileCheck %s

// Tests a row-major matmul whose weight is transposed first (x * W^T, as
// ONNX Gemm/MatMul lower): the transpose becomes a strided view, the zero
// fill becomes beta = 0, and cuBLAS computes C^T = op(W^T as stored) * X^T
// with W transposed (ld 784) and X as is (ld 784), C with ld 512.
// CHECK-LABEL: func.func @linear
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[T:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[N:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[M512:.*]] = arith.constant 512 : i64
// CHECK-DAG: %[[M64:.*]] = arith.constant 64 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 784 : i64
// CHECK-DAG: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: call @tcc_cuda_gemm(%[[T]], %[[N]], %[[M512]], %[[M64]], %[[K]], %{{.*}}, %[[K]], %{{.*}}, %{{.*}}, %[[K]], %{{.*}}, %{{.*}}, %[[M512]], %{{.*}}, %{{.*}}, %[[BETA]])
// CHECK-NOT: linalg.matmul
func.func @linear(%x: memref<64x784xf32>, %w: memref<512x784xf32>,
                  %t: memref<784x512xf32>, %y: memref<64x512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.transpose ins(%w : memref<512x784xf32>) outs(%t : memref<784x512xf32>) permutation = [1, 0]
  linalg.fill ins(%zero : f32) outs(%y : memref<64x512xf32>)
  linalg.matmul ins(%x, %t : memref<64x784xf32>, memref<784x512xf32>) outs(%y : memref<64x512xf32>)
  return
}

// -----

// Tests a batched matmul accumulating into its output (beta = 1), with the
// batch strides of each operand, and the address of a view at a byte shift.
// CHECK-LABEL: func.func @batched
// CHECK-DAG: %[[N:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : i64
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : i64
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK: %[[AT:.*]] = arith.addi %[[BASE]], %c128
// CHECK: arith.index_cast %[[AT]]
// CHECK: call @tcc_cuda_gemm(%[[N]], %[[N]], %[[C8]], %[[C4]], %[[C16]], %{{.*}}, %[[C8]], %[[C128:.*]], %{{.*}}, %[[C16]], %[[C64]], %{{.*}}, %[[C8]], %[[C32]], %[[C3]], %[[ONE]])
func.func @batched(%a: memref<3x4x16xf32>, %b: memref<3x16x8xf32>,
                   %c: memref<3x4x8xf32>, %arena: memref<1024xi8>) {
  %shift = arith.constant 128 : index
  %bv = memref.view %arena[%shift][] : memref<1024xi8> to memref<3x16x8xf32>
  linalg.batch_matmul ins(%a, %bv : memref<3x4x16xf32>, memref<3x16x8xf32>) outs(%c : memref<3x4x8xf32>)
  return
}

// -----

// Tests that a contraction with two k dimensions stays a loop nest.
// CHECK-LABEL: func.func @two_k
// CHECK-NOT: call @tcc_cuda_gemm
// CHECK: linalg.generic
func.func @two_k(%a: memref<4x2x3xf32>, %b: memref<2x3x5xf32>, %c: memref<4x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k1, k2) -> (m, k1, k2)>,
                                   affine_map<(m, n, k1, k2) -> (k1, k2, n)>,
                                   affine_map<(m, n, k1, k2) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<4x2x3xf32>, memref<2x3x5xf32>) outs(%c : memref<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
