// RUN: tcc-opt %s --tcc-gpu-launches-to-calls | FileCheck %s

// Tests that the binary's PTX (without its NUL) and the kernels' names
// become module attributes, and that a launch packs its arguments into
// 8-byte slots (a view as its address plus byte shift, an index, a float's
// bits) allocated at the function's entry and calls @tcc_cuda_launch with
// the kernel's index (kernels numbered in the order of their first launch).
// CHECK: module attributes {tcc.cuda.kernels = ["k1", "k0"], tcc.cuda.ptx = "PTX TEXT"}
// CHECK-NOT: gpu.binary
// CHECK-LABEL: func.func @main
// CHECK: memref.alloca() : memref<1xi64>
// CHECK: %[[SLOTS:.*]] = memref.alloca() : memref<3xi64>
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[AT:.*]] = arith.addi %[[BASE]], %c64
// CHECK: %[[P:.*]] = arith.index_castui %[[AT]] : index to i64
// CHECK: memref.store %[[P]], %[[SLOTS]][%c0]
// CHECK: %[[N:.*]] = arith.index_cast %c7 : index to i64
// CHECK: memref.store %[[N]], %[[SLOTS]][%c1_1]
// CHECK: %[[BITS:.*]] = arith.bitcast %arg1 : f32 to i32
// CHECK: %[[WIDE:.*]] = arith.extui %[[BITS]] : i32 to i64
// CHECK: memref.store %[[WIDE]], %[[SLOTS]][%c2]
// CHECK: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[SLOTS]]
// CHECK: %[[A64:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK: call @tcc_cuda_launch(%c0_i64, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[A64]], %c3_i64)
// CHECK: call @tcc_cuda_launch(%c1_i64, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1_i64_6)
// CHECK-NOT: gpu.launch_func
module attributes {gpu.container_module} {
  gpu.binary @tcc_kernels [#gpu.object<#nvvm.target, "PTX TEXT\00">]
  func.func @main(%arena: memref<256xi8>, %f: f32) {
    %c1 = arith.constant 1 : index
    %c7 = arith.constant 7 : index
    %c64 = arith.constant 64 : index
    %v = memref.view %arena[%c64][] : memref<256xi8> to memref<4xf32>
    gpu.launch_func @tcc_kernels::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%v : memref<4xf32>, %c7 : index, %f : f32)
    gpu.launch_func @tcc_kernels::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%v : memref<4xf32>)
    return
  }
}
