// RUN: tcc-opt %s --tcc-plan-memory --split-input-file | FileCheck %s

// Tests that intermediates become views into one arena argument, that
// buffers with disjoint lifetimes share memory, and that the deallocations
// go away.
// CHECK: module attributes {tcc.memory_plan = {arena_bytes = 512 : i64, buffers = [{{.*}}], naive_bytes = 768 : i64, peak_live_bytes = 512 : i64}, tcc.workspace_bytes = 512 : i64}
// CHECK-LABEL: func @main
// CHECK-SAME: (%[[X:.*]]: memref<64xf32>, %[[Y:.*]]: memref<64xf32>, %[[ARENA:.*]]: memref<512xi8>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%[[C0]]][] : memref<512xi8> to memref<64xf32>
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[B:.*]] = memref.view %[[ARENA]][%[[C256]]][] : memref<512xi8> to memref<64xf32>
// CHECK: linalg.add ins(%[[X]], %[[X]] : {{.*}}) outs(%[[A]] :
// CHECK: linalg.mul ins(%[[A]], %[[X]] : {{.*}}) outs(%[[B]] :
// CHECK: %[[C0B:.*]] = arith.constant 0 : index
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%[[C0B]]][] : memref<512xi8> to memref<64xf32>
// CHECK: linalg.sub ins(%[[B]], %[[X]] : {{.*}}) outs(%[[C]] :
// CHECK: linalg.add ins(%[[C]], %[[B]] : {{.*}}) outs(%[[Y]] :
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
module {
  func.func @main(%x: memref<64xf32>, %y: memref<64xf32>) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    %b = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    linalg.add ins(%x, %x : memref<64xf32>, memref<64xf32>) outs(%a : memref<64xf32>)
    linalg.mul ins(%a, %x : memref<64xf32>, memref<64xf32>) outs(%b : memref<64xf32>)
    memref.dealloc %a : memref<64xf32>
    %c = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    linalg.sub ins(%b, %x : memref<64xf32>, memref<64xf32>) outs(%c : memref<64xf32>)
    linalg.add ins(%c, %b : memref<64xf32>, memref<64xf32>) outs(%y : memref<64xf32>)
    memref.dealloc %b : memref<64xf32>
    memref.dealloc %c : memref<64xf32>
    return
  }
}

// -----

// Tests that an elementwise generic writes into an input buffer that dies
// there (one buffer instead of two; naive still counts both), but not into
// one read through a broadcast or still used afterwards.
// CHECK: naive_bytes = 768 : i64
// CHECK-SAME: tcc.workspace_bytes = 512 : i64
// CHECK-LABEL: func @main
// CHECK: %[[A:.*]] = memref.view {{.*}} to memref<64xf32>
// CHECK: linalg.generic {{.*}} outs(%[[A]] : memref<64xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[A]] : memref<64xf32>) outs(%[[A]] : memref<64xf32>)
// CHECK: %[[S:.*]] = memref.view {{.*}} to memref<64xf32>
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[A]] : memref<64xf32>, memref<64xf32>) outs(%[[S]] : memref<64xf32>)
#id = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (63 - d0)>
module {
  func.func @main(%x: memref<64xf32>, %y: memref<64xf32>) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<64xf32>) outs(%a : memref<64xf32>) {
    ^bb0(%i: f32, %o: f32):
      %e = math.exp %i : f32
      linalg.yield %e : f32
    }
    %b = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : memref<64xf32>) outs(%b : memref<64xf32>) {
    ^bb0(%i: f32, %o: f32):
      %e = math.exp %i : f32
      linalg.yield %e : f32
    }
    %c = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    linalg.generic {indexing_maps = [#id, #rev, #id], iterator_types = ["parallel"]} ins(%b, %b : memref<64xf32>, memref<64xf32>) outs(%c : memref<64xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %e = arith.addf %i, %j : f32
      linalg.yield %e : f32
    }
    linalg.exp ins(%c : memref<64xf32>) outs(%y : memref<64xf32>)
    return
  }
}

// -----

// Tests that a function with nothing to place gets no arena argument.
// CHECK: tcc.workspace_bytes = 0 : i64
// CHECK-LABEL: func @main
// CHECK-SAME: (%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
// CHECK-NEXT: linalg.copy
module {
  func.func @main(%x: memref<4xf32>, %y: memref<4xf32>) {
    linalg.copy ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
    return
  }
}

// -----

// Tests that a row temporary's mark moves to the arena view replacing it.
// CHECK-LABEL: func @main
// CHECK: memref.view %{{.*}}[%{{.*}}][] {tcc.row_temporary} : memref<{{[0-9]+}}xi8> to memref<16xf32>
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<{{[0-9]+}}xi8> to memref<64xf32>
module {
  func.func @main(%x: memref<64xf32>, %y: memref<64xf32>) {
    %t = memref.alloc() {alignment = 64 : i64, tcc.row_temporary} : memref<16xf32>
    %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    %cst = arith.constant 0.0 : f32
    linalg.fill ins(%cst : f32) outs(%t : memref<16xf32>)
    linalg.copy ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
    linalg.exp ins(%a : memref<64xf32>) outs(%y : memref<64xf32>)
    memref.dealloc %t : memref<16xf32>
    memref.dealloc %a : memref<64xf32>
    return
  }
}

// -----

// Tests that a buffer's life starts at the first op that touches it, not at
// its alloc or at a view of it: %c, allocated (and viewed) first, shares %a's
// memory because it is first written after %a's last use.
// CHECK: module attributes {tcc.memory_plan = {arena_bytes = 512 : i64, buffers = [{bytes = 256 : i64, first = 8 : i64, last = 11 : i64, offset = 0 : i64, {{[^}]*}}}, {bytes = 256 : i64, first = 4 : i64, last = 6 : i64, offset = 0 : i64, {{[^}]*}}}, {bytes = 256 : i64, first = 5 : i64, last = 9 : i64, offset = 256 : i64, {{[^}]*}}}], naive_bytes = 768 : i64, peak_live_bytes = 512 : i64}
// CHECK-LABEL: func @main
module {
  func.func @main(%x: memref<64xf32>, %y: memref<64xf32>) {
    %c = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    %cv = memref.expand_shape %c [[0, 1]] output_shape [8, 8] : memref<64xf32> into memref<8x8xf32>
    %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    %b = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    linalg.add ins(%x, %x : memref<64xf32>, memref<64xf32>) outs(%a : memref<64xf32>)
    linalg.mul ins(%a, %x : memref<64xf32>, memref<64xf32>) outs(%b : memref<64xf32>)
    memref.dealloc %a : memref<64xf32>
    %cf = memref.collapse_shape %cv [[0, 1]] : memref<8x8xf32> into memref<64xf32>
    linalg.sub ins(%b, %x : memref<64xf32>, memref<64xf32>) outs(%cf : memref<64xf32>)
    memref.dealloc %b : memref<64xf32>
    linalg.exp ins(%c : memref<64xf32>) outs(%y : memref<64xf32>)
    memref.dealloc %c : memref<64xf32>
    return
  }
}

// -----

// Tests that a result computed into a buffer and then copied into the
// caller's out-parameter is computed straight into it (no copy, nothing to
// place), and that a copy out of a buffer still read afterwards, or into an
// out-parameter used elsewhere too, stays.
// CHECK: tcc.workspace_bytes = 0 : i64
// CHECK-LABEL: func @main
// CHECK-SAME: (%[[X:.*]]: memref<64xf32>, %[[Y:.*]]: memref<64xf32>)
// CHECK-NEXT: linalg.exp ins(%[[X]] : memref<64xf32>) outs(%[[Y]] : memref<64xf32>)
// CHECK-NEXT: return
module {
  func.func @main(%x: memref<64xf32>, %y: memref<64xf32>) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    linalg.exp ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
    linalg.copy ins(%a : memref<64xf32>) outs(%y : memref<64xf32>)
    memref.dealloc %a : memref<64xf32>
    return
  }
}

// -----

// CHECK-LABEL: func @main
// CHECK-SAME: (%[[X:.*]]: memref<64xf32>, %[[Y:.*]]: memref<64xf32>, %[[Z:.*]]: memref<64xf32>, %[[W:.*]]: memref<64xf32>, %[[ARENA:.*]]: memref<256xi8>)
// CHECK: %[[A:.*]] = memref.view %[[ARENA]]
// CHECK: %[[B:.*]] = memref.view %[[ARENA]]
// CHECK: linalg.exp ins(%[[X]] : memref<64xf32>) outs(%[[A]] : memref<64xf32>)
// CHECK: linalg.copy ins(%[[A]] : memref<64xf32>) outs(%[[Y]] : memref<64xf32>)
// CHECK: linalg.add ins(%[[A]], %[[X]] : {{.*}}) outs(%[[Z]] :
// CHECK: linalg.exp ins(%[[X]] : memref<64xf32>) outs(%[[B]] : memref<64xf32>)
// CHECK: linalg.copy ins(%[[B]] : memref<64xf32>) outs(%[[W]] : memref<64xf32>)
// CHECK: linalg.add ins(%[[W]], %[[W]] : {{.*}}) outs(%[[W]] :
module {
  func.func @main(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>, %w: memref<64xf32>) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    %b = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
    linalg.exp ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
    linalg.copy ins(%a : memref<64xf32>) outs(%y : memref<64xf32>)
    linalg.add ins(%a, %x : memref<64xf32>, memref<64xf32>) outs(%z : memref<64xf32>)
    linalg.exp ins(%x : memref<64xf32>) outs(%b : memref<64xf32>)
    linalg.copy ins(%b : memref<64xf32>) outs(%w : memref<64xf32>)
    linalg.add ins(%w, %w : memref<64xf32>, memref<64xf32>) outs(%w : memref<64xf32>)
    return
  }
}

// -----

// Tests that a rows loop stores its result rows over the rows of an input
// that dies there (each iteration reads its row before it stores), and not
// over an input read after the store or through a different window.
// CHECK-LABEL: func @main
// CHECK: %[[IN:.*]] = memref.view {{.*}} to memref<4x8xf32>
// CHECK: linalg.exp ins(%{{.*}} : memref<4x8xf32>) outs(%[[IN]] : memref<4x8xf32>)
// CHECK: scf.for %[[I:.*]] =
// CHECK: memref.subview %[[IN]][%[[I]], 0] [1, 8] [1, 1]
// CHECK: %[[OUT:.*]] = memref.subview %[[IN]][%[[I]], 0] [1, 8] [1, 1]
// CHECK: memref.copy %{{.*}}, %[[OUT]]
// CHECK: } {tcc.rows_loop}
// CHECK: linalg.exp ins(%[[IN]] : memref<4x8xf32>)
module {
  func.func @main(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %in = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    %out = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    %t = memref.alloc() {alignment = 64 : i64, tcc.row_temporary} : memref<1x8xf32>
    linalg.exp ins(%x : memref<4x8xf32>) outs(%in : memref<4x8xf32>)
    scf.for %i = %c0 to %c4 step %c1 {
      %row = memref.subview %in[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      linalg.exp ins(%row : memref<1x8xf32, strided<[8, 1], offset: ?>>) outs(%t : memref<1x8xf32>)
      %dst = memref.subview %out[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      memref.copy %t, %dst : memref<1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    } {tcc.rows_loop}
    linalg.exp ins(%out : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
    return
  }
}

// -----

// CHECK-LABEL: func @main
// CHECK: %[[IN:.*]] = memref.view {{.*}} to memref<4x8xf32>
// CHECK: %[[OUT:.*]] = memref.view {{.*}} to memref<4x8xf32>
// CHECK: scf.for
// CHECK: memref.subview %[[IN]]
// CHECK: memref.subview %[[OUT]]
// CHECK: } {tcc.rows_loop}
// CHECK: %[[OUT2:.*]] = memref.view {{.*}} to memref<4x8xf32>
// CHECK: scf.for
// CHECK: memref.subview %[[OUT]]
// CHECK: memref.subview %[[OUT2]]
// CHECK: } {tcc.rows_loop}
module {
  func.func @main(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %in = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    %out = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    %t = memref.alloc() {alignment = 64 : i64, tcc.row_temporary} : memref<1x8xf32>
    linalg.exp ins(%x : memref<4x8xf32>) outs(%in : memref<4x8xf32>)
    // Reads its row again after the store.
    scf.for %i = %c0 to %c4 step %c1 {
      %row = memref.subview %in[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      linalg.exp ins(%row : memref<1x8xf32, strided<[8, 1], offset: ?>>) outs(%t : memref<1x8xf32>)
      %dst = memref.subview %out[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      memref.copy %t, %dst : memref<1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      linalg.exp ins(%row : memref<1x8xf32, strided<[8, 1], offset: ?>>) outs(%t : memref<1x8xf32>)
    } {tcc.rows_loop}
    %out2 = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    // Reads another row than it stores.
    scf.for %i = %c0 to %c4 step %c1 {
      %j = arith.subi %c3, %i : index
      %row = memref.subview %out[%j, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      linalg.exp ins(%row : memref<1x8xf32, strided<[8, 1], offset: ?>>) outs(%t : memref<1x8xf32>)
      %dst = memref.subview %out2[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      memref.copy %t, %dst : memref<1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    } {tcc.rows_loop}
    linalg.exp ins(%out2 : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
    return
  }
}

// -----

// Tests that a GEMM whose residual buffer dies at it accumulates into that
// buffer instead (its accumulate params replace its params: flags gains
// TCC_UK_ACCUMULATE = 1, the residual operand goes), and that one whose
// residual is read later keeps it.
// CHECK-LABEL: func @main
// CHECK: %[[R:.*]] = memref.view {{.*}} to memref<4x8xf32>
// CHECK: %[[C2:.*]] = memref.view {{.*}} to memref<4x8xf32>
// CHECK: linalg.exp ins(%{{.*}}) outs(%[[R]] : memref<4x8xf32>)
// CHECK: tcc.ukernel "sgemm" ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<4x2xf32>, memref<2x8xf32>, memref<8xf32>) outs(%[[R]] : memref<4x8xf32>) params {{{.*}}flags = 1 : i64, has_bias = 1 : i64, has_residual = 0 : i64
// CHECK: tcc.ukernel "sgemm" ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[R]] : {{.*}}) outs(%[[C2]] : memref<4x8xf32>) params {{{.*}}flags = 0 : i64, has_bias = 1 : i64, has_residual = 1 : i64
module {
  func.func @main(%a: memref<4x2xf32>, %b: memref<2x8xf32>, %bias: memref<8xf32>, %x: memref<4x8xf32>, %y: memref<4x8xf32>) {
    %r = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    %c = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    %c2 = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    linalg.exp ins(%x : memref<4x8xf32>) outs(%r : memref<4x8xf32>)
    tcc.ukernel "sgemm" ins(%a, %b, %bias, %r : memref<4x2xf32>, memref<2x8xf32>, memref<8xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>) params {batch = 1 : i64, m = 4 : i64, n = 8 : i64, k = 2 : i64, ldc = 8 : i64, stride_c = 0 : i64, flags = 0 : i64, has_bias = 1 : i64, has_residual = 1 : i64} accumulate {batch = 1 : i64, m = 4 : i64, n = 8 : i64, k = 2 : i64, ldc = 8 : i64, stride_c = 0 : i64, flags = 1 : i64, has_bias = 1 : i64, has_residual = 0 : i64}
    tcc.ukernel "sgemm" ins(%a, %b, %bias, %c : memref<4x2xf32>, memref<2x8xf32>, memref<8xf32>, memref<4x8xf32>) outs(%c2 : memref<4x8xf32>) params {batch = 1 : i64, m = 4 : i64, n = 8 : i64, k = 2 : i64, ldc = 8 : i64, stride_c = 0 : i64, flags = 0 : i64, has_bias = 1 : i64, has_residual = 1 : i64} accumulate {batch = 1 : i64, m = 4 : i64, n = 8 : i64, k = 2 : i64, ldc = 8 : i64, stride_c = 0 : i64, flags = 1 : i64, has_bias = 1 : i64, has_residual = 0 : i64}
    linalg.add ins(%c2, %c : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>)
    return
  }
}

// -----

// Tests that an elementwise op does not write into a dying input buffer that
// another operand reads through a view (a transpose reads other elements
// than the one written), and that a GEMM does not accumulate into a dying
// residual that one of its other inputs views.
// CHECK-LABEL: func @main
// CHECK: %[[B:.*]] = memref.view {{.*}} to memref<8x8xf32>
// CHECK: %[[C:.*]] = memref.view {{.*}} to memref<8x8xf32>
// CHECK: %[[BT:.*]] = memref.transpose %[[B]]
// CHECK: linalg.generic {{.*}} ins(%[[B]], %[[BT]] : {{.*}}) outs(%[[C]] : memref<8x8xf32>)
// CHECK: %[[R:.*]] = memref.view {{.*}} to memref<4x4xf32>
// CHECK: %[[G:.*]] = memref.view {{.*}} to memref<4x4xf32>
// CHECK: %[[RV:.*]] = memref.cast %[[R]]
// CHECK: tcc.ukernel "sgemm" ins(%[[RV]], %{{.*}}, %{{.*}}, %[[R]] : {{.*}}) outs(%[[G]] : memref<4x4xf32>) params {{{.*}}has_residual = 1 : i64
#id2 = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @main(%x: memref<8x8xf32>, %y: memref<8x8xf32>, %bb: memref<4x4xf32>, %bias: memref<4xf32>, %z: memref<4x4xf32>) {
    %b = memref.alloc() {alignment = 64 : i64} : memref<8x8xf32>
    %c = memref.alloc() {alignment = 64 : i64} : memref<8x8xf32>
    linalg.exp ins(%x : memref<8x8xf32>) outs(%b : memref<8x8xf32>)
    %bt = memref.transpose %b (d0, d1) -> (d1, d0) : memref<8x8xf32> to memref<8x8xf32, strided<[1, 8]>>
    linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b, %bt : memref<8x8xf32>, memref<8x8xf32, strided<[1, 8]>>) outs(%c : memref<8x8xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %e = arith.subf %i, %j : f32
      linalg.yield %e : f32
    }
    linalg.exp ins(%c : memref<8x8xf32>) outs(%y : memref<8x8xf32>)
    %r = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
    %g = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
    linalg.exp ins(%bb : memref<4x4xf32>) outs(%r : memref<4x4xf32>)
    %rv = memref.cast %r : memref<4x4xf32> to memref<4x4xf32, strided<[4, 1]>>
    tcc.ukernel "sgemm" ins(%rv, %bb, %bias, %r : memref<4x4xf32, strided<[4, 1]>>, memref<4x4xf32>, memref<4xf32>, memref<4x4xf32>) outs(%g : memref<4x4xf32>) params {batch = 1 : i64, m = 4 : i64, n = 4 : i64, k = 4 : i64, ldc = 4 : i64, stride_c = 0 : i64, flags = 0 : i64, has_bias = 1 : i64, has_residual = 1 : i64} accumulate {batch = 1 : i64, m = 4 : i64, n = 4 : i64, k = 4 : i64, ldc = 4 : i64, stride_c = 0 : i64, flags = 1 : i64, has_bias = 1 : i64, has_residual = 0 : i64}
    linalg.exp ins(%g : memref<4x4xf32>) outs(%z : memref<4x4xf32>)
    return
  }
}

// -----

// Tests what the plan says made each buffer (for tcc --memory-report): the
// node named by the first writer's location, a kernel's scratch, a rows
// loop's temporary, or the writer's op name when it has no location.
// CHECK: buffers = [{bytes = 128 : i64, {{.*}}writer = "gemm (MatMul)"}, {bytes = 256 : i64, {{.*}}writer = "scratch of gemm (MatMul)"}, {bytes = 32 : i64, {{.*}}writer = "row temporary of scf.for"}, {bytes = 128 : i64, {{.*}}writer = "scf.for"}]
// CHECK-LABEL: func @main
module {
  func.func @main(%a: memref<4x2xf32>, %b: memref<2x8xf32>, %y: memref<4x8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    %s = memref.alloc() {alignment = 64 : i64} : memref<256xi8>
    %t = memref.alloc() {alignment = 64 : i64, tcc.row_temporary} : memref<1x8xf32>
    %r = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    tcc.ukernel "sgemm" ins(%a, %b : memref<4x2xf32>, memref<2x8xf32>) outs(%c, %s : memref<4x8xf32>, memref<256xi8>) params {batch = 1 : i64, m = 4 : i64, n = 8 : i64, k = 2 : i64, flags = 0 : i64, has_bias = 0 : i64, has_residual = 0 : i64} loc("gemm (MatMul)")
    scf.for %i = %c0 to %c4 step %c1 {
      %row = memref.subview %c[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      linalg.exp ins(%row : memref<1x8xf32, strided<[8, 1], offset: ?>>) outs(%t : memref<1x8xf32>)
      %dst = memref.subview %r[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      memref.copy %t, %dst : memref<1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      %again = memref.subview %c[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      linalg.exp ins(%again : memref<1x8xf32, strided<[8, 1], offset: ?>>) outs(%t : memref<1x8xf32>)
    }
    linalg.add ins(%r, %c : memref<4x8xf32>, memref<4x8xf32>) outs(%y : memref<4x8xf32>)
    return
  }
}

// -----

// Tests that a convolution whose residual dies there accumulates into it as
// a GEMM does, and that a GEMM without accumulate params (as the lowering
// makes one whose C rows are padded, ldc != n, unlike the dense residual)
// keeps its residual.
// CHECK-LABEL: func @main
// CHECK: %[[R:.*]] = memref.view {{.*}} to memref<1x4x4x4xf32>
// CHECK: tcc.ukernel "conv2d" ins(%{{.*}}, %{{.*}} : memref<1x4x4x4xf32>, memref<64xf32>) outs(%[[R]] : memref<1x4x4x4xf32>) params {{{.*}}flags = 3 : i64{{.*}}has_residual = 0 : i64
// CHECK: tcc.ukernel "sgemm" ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<4x2xf32>, memref<2x8xf32>, memref<4x8xf32>) outs(%{{.*}} : memref<4x8xf32>) params {{{.*}}has_residual = 1 : i64
module {
  func.func @main(%x: memref<1x4x4x4xf32>, %w: memref<64xf32>, %a: memref<4x2xf32>, %b: memref<2x8xf32>, %m: memref<4x8xf32>, %y: memref<1x4x4x4xf32>, %z: memref<4x8xf32>) {
    %r = memref.alloc() {alignment = 64 : i64} : memref<1x4x4x4xf32>
    %o = memref.alloc() {alignment = 64 : i64} : memref<1x4x4x4xf32>
    linalg.exp ins(%x : memref<1x4x4x4xf32>) outs(%r : memref<1x4x4x4xf32>)
    tcc.ukernel "conv2d" ins(%x, %w, %r : memref<1x4x4x4xf32>, memref<64xf32>, memref<1x4x4x4xf32>) outs(%o : memref<1x4x4x4xf32>) params {flags = 2 : i64, has_bias = 0 : i64, has_residual = 1 : i64} accumulate {flags = 3 : i64, has_bias = 0 : i64, has_residual = 0 : i64}
    linalg.exp ins(%o : memref<1x4x4x4xf32>) outs(%y : memref<1x4x4x4xf32>)
    %q = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    %c = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
    linalg.exp ins(%m : memref<4x8xf32>) outs(%q : memref<4x8xf32>)
    tcc.ukernel "sgemm" ins(%a, %b, %q : memref<4x2xf32>, memref<2x8xf32>, memref<4x8xf32>) outs(%c : memref<4x8xf32>) params {batch = 1 : i64, m = 4 : i64, n = 8 : i64, k = 2 : i64, ldc = 16 : i64, stride_c = 0 : i64, flags = 0 : i64, has_bias = 0 : i64, has_residual = 1 : i64}
    linalg.exp ins(%c : memref<4x8xf32>) outs(%z : memref<4x8xf32>)
    return
  }
}

// -----

// Tests that a depthwise convolution's plane means (the second output of a
// conv2d call with has_means) are named as its result, not as its
// scratch, which comes after them.
// CHECK: buffers = [{bytes = 1024 : i64, {{.*}}writer = "dw (Conv)"}, {bytes = 64 : i64, {{.*}}writer = "dw (Conv)"}, {bytes = 128 : i64, {{.*}}writer = "scratch of dw (Conv)"}]
// CHECK-LABEL: func @main
module {
  func.func @main(%x: memref<1x16x4x4xf32>, %w: memref<144xf32>, %y: memref<1x16x4x4xf32>, %z: memref<1x16x1x1xf32>) {
    %o = memref.alloc() {alignment = 64 : i64} : memref<1x16x4x4xf32>
    %m = memref.alloc() {alignment = 64 : i64} : memref<1x16x1x1xf32>
    %s = memref.alloc() {alignment = 64 : i64} : memref<128xi8>
    tcc.ukernel "conv2d" ins(%x, %w : memref<1x16x4x4xf32>, memref<144xf32>) outs(%o, %m, %s : memref<1x16x4x4xf32>, memref<1x16x1x1xf32>, memref<128xi8>) params {n = 1 : i64, c = 16 : i64, h = 4 : i64, w = 4 : i64, f = 16 : i64, kh = 3 : i64, kw = 3 : i64, groups = 16 : i64, flags = 0 : i64, has_bias = 0 : i64, has_residual = 0 : i64, has_means = 1 : i64} loc("dw (Conv)")
    linalg.exp ins(%o : memref<1x16x4x4xf32>) outs(%y : memref<1x16x4x4xf32>)
    linalg.exp ins(%m : memref<1x16x1x1xf32>) outs(%z : memref<1x16x1x1xf32>)
    return
  }
}
