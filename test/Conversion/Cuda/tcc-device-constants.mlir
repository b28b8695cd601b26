// RUN: tcc-opt %s --tcc-device-constants | FileCheck %s

// Tests that each constant global gets a 256-byte aligned place in one
// device buffer, which the graph takes last, and that the upload function
// copies each global to its place.
// CHECK: module attributes {tcc.cuda.weights_bytes = 768 : i64}
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[OUT:.*]]: memref<4xf32>, %[[W:.*]]: memref<768xi8>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: memref.view %[[W]][%[[C0]]][] : memref<768xi8> to memref<4xf32>
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: memref.view %[[W]][%[[C256]]][] : memref<768xi8> to memref<2xi64>
// CHECK-NOT: memref.get_global
// CHECK: return
// CHECK-LABEL: func.func @tcc_cuda_upload_weights
// CHECK-SAME: (%[[B:.*]]: memref<768xi8>)
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: memref.get_global @a
// CHECK: call @tcc_cuda_h2d(%{{.*}}, %{{.*}}, %c16_i64)
// CHECK: memref.get_global @b
// CHECK: %[[AT:.*]] = arith.addi %[[BASE]], %c256
// CHECK: call @tcc_cuda_h2d(%[[AT]], %{{.*}}, %{{.*}}) : (index, index, i64) -> ()
// CHECK: memref.get_global @m
// CHECK: %[[C20:.*]] = arith.constant 20 : i64
// CHECK: call @tcc_cuda_h2d(%{{.*}}, %{{.*}}, %[[C20]])
memref.global "private" constant @a : memref<4xf32> = dense<1.0>
memref.global "private" constant @b : memref<2xi64> = dense<7>
memref.global "private" constant @m : memref<4x5xi1> = dense<true>
func.func @main(%out: memref<4xf32>) {
  %a = memref.get_global @a : memref<4xf32>
  %b = memref.get_global @b : memref<2xi64>
  %a2 = memref.get_global @a : memref<4xf32>
  %mask = memref.get_global @m : memref<4x5xi1>
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  return
}
