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
// CHECK: linalg.copy ins(%[[C]] : {{.*}}) outs(%[[Y]] :
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
    memref.dealloc %b : memref<64xf32>
    linalg.copy ins(%c : memref<64xf32>) outs(%y : memref<64xf32>)
    memref.dealloc %c : memref<64xf32>
    return
  }
}

// -----

// Tests that an elementwise generic writes into an input buffer that dies
// there (one buffer instead of two), but not into one read through a
// broadcast or still used afterwards.
// CHECK: tcc.workspace_bytes = 512 : i64
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
    linalg.copy ins(%c : memref<64xf32>) outs(%y : memref<64xf32>)
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
    linalg.copy ins(%a : memref<64xf32>) outs(%y : memref<64xf32>)
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
    linalg.copy ins(%c : memref<64xf32>) outs(%y : memref<64xf32>)
    memref.dealloc %c : memref<64xf32>
    return
  }
}
