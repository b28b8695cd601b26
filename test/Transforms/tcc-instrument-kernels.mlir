// RUN: tcc-opt %s --split-input-file --tcc-instrument-kernels | FileCheck %s

// Tests that every kernel of @main (a call, a linalg op, a loop) is
// bracketed by profile calls with its index, a NUL-terminated name from its
// location (the nodes it names, else the callee or op name) and end = 0/1,
// and that views, constants and allocations are not kernels.
// CHECK-DAG: func.func private @tcc_ukabi_profile(i64, i64, i64)
// CHECK-DAG: memref.global "private" constant @__tcc_kernel_name_0 : memref<8xi8> = dense<[101, 32, 40, 69, 120, 112, 41, 0]>
// CHECK-DAG: memref.global "private" constant @__tcc_kernel_name_1 : memref<4xi8> = dense<[101, 120, 116, 0]>
// CHECK-DAG: memref.global "private" constant @__tcc_kernel_name_2 : memref<8xi8> = dense<[115, 99, 102, 46, 102, 111, 114, 0]>
// CHECK-LABEL: func @main
// CHECK: memref.alloc
// CHECK-NOT: call @tcc_ukabi_profile
// CHECK: %[[N0:.*]] = memref.get_global @__tcc_kernel_name_0
// CHECK: %[[P0:.*]] = memref.extract_aligned_pointer_as_index %[[N0]]
// CHECK: %[[A0:.*]] = arith.index_cast %[[P0]] : index to i64
// CHECK: %[[K0:.*]] = arith.constant 0 : i64
// CHECK: %[[B0:.*]] = arith.constant 0 : i64
// CHECK: call @tcc_ukabi_profile(%[[K0]], %[[A0]], %[[B0]])
// CHECK-NEXT: linalg.exp
// CHECK-NEXT: %[[E0:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @tcc_ukabi_profile(%[[K0]], %[[A0]], %[[E0]])
// CHECK: memref.expand_shape
// CHECK: call @tcc_ukabi_profile
// CHECK-NEXT: call @ext
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: call @tcc_ukabi_profile
// CHECK: call @tcc_ukabi_profile
// CHECK-NEXT: scf.for
// CHECK: call @tcc_ukabi_profile
// CHECK-NEXT: return
module {
  func.func private @ext(memref<4xf32>)
  func.func @main(%x: memref<4xf32>, %y: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %a = memref.alloc() : memref<4xf32>
    linalg.exp ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) loc("e (Exp)")
    %v = memref.expand_shape %a [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
    call @ext(%a) : (memref<4xf32>) -> ()
    scf.for %i = %c0 to %c4 step %c1 {
      %e = memref.load %a[%i] : memref<4xf32>
      memref.store %e, %y[%i] : memref<4xf32>
    }
    return
  }
}

// -----

// The slabs of a dynamic batch: each one's kernels, numbered one slab
// after the other.
// CHECK-LABEL: func @main_chunk2
// CHECK: %[[K2:.*]] = arith.constant 0 : i64
// CHECK: call @tcc_ukabi_profile(%[[K2]],
// CHECK-NEXT: linalg.exp
// CHECK-LABEL: func @main_chunk1
// CHECK: %[[K1:.*]] = arith.constant 1 : i64
// CHECK: call @tcc_ukabi_profile(%[[K1]],
// CHECK-NEXT: linalg.exp
module {
  func.func @main_chunk2(%x: memref<2x4xf32>, %y: memref<2x4xf32>) {
    linalg.exp ins(%x : memref<2x4xf32>) outs(%y : memref<2x4xf32>) loc("e (Exp)")
    return
  }
  func.func @main_chunk1(%x: memref<1x4xf32>, %y: memref<1x4xf32>) {
    linalg.exp ins(%x : memref<1x4xf32>) outs(%y : memref<1x4xf32>) loc("e (Exp)")
    return
  }
}
