// RUN: tcc-opt %s --tcc-parallelize-loops --allow-unregistered-dialect --split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// A big elementwise op: its outer loop becomes an scf.parallel, the inner
// one stays sequential.
// CHECK-LABEL: func.func @big
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c256) step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c512
// CHECK: math.exp
// CHECK: memref.store
// CHECK: scf.reduce
func.func @big(%x: memref<256x512xf32>, %y: memref<256x512xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<256x512xf32>) outs(%y : memref<256x512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// Batch 1: the channel loop is the parallel one.
// CHECK-LABEL: func.func @nchw
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c64)
func.func @nchw(%x: memref<1x64x56x56xf32>, %y: memref<1x64x56x56xf32>) {
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<1x64x56x56xf32>) outs(%y : memref<1x64x56x56xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Too small to be worth a fork: left to convert-linalg-to-loops.
// CHECK-LABEL: func.func @small
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
func.func @small(%x: memref<16x64xf32>, %y: memref<16x64xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x64xf32>) outs(%y : memref<16x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>

// A reduction over the outermost loop is not split (threads would write
// the same elements).
// CHECK-LABEL: func.func @column_sums
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
func.func @column_sums(%x: memref<1024x256xf32>, %y: memref<256xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<1024x256xf32>) outs(%y : memref<256xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>

// Row sums: the rows run in parallel, each row's sum sequentially.
// CHECK-LABEL: func.func @row_sums
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1024)
// CHECK: scf.for
// CHECK: arith.addf
func.func @row_sums(%x: memref<1024x256xf32>, %y: memref<1024xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<1024x256xf32>) outs(%y : memref<1024xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a rows loop runs its rows in parallel, its marked temporaries
// becoming buffers of the loop body (one per thread, later), while buffers
// shared with the rest of the function stay where they are.
// CHECK-LABEL: func.func @rows_loop
// CHECK-SAME: (%[[X:.*]]: memref<256x512xf32>, %[[Y:.*]]: memref<256x512xf32>, %[[ARENA:.*]]: memref<4096xi8>)
// CHECK: %[[SHARED:.*]] = memref.view %[[ARENA]]
// CHECK-NOT: tcc.row_temporary
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c256) step (%{{.*}}) {
// CHECK:   %[[T:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1x512xf32>
// CHECK:   memref.subview %[[X]][%[[I]], 0]
// CHECK:   linalg.copy ins(%{{.*}} : {{.*}}) outs(%[[T]] :
// CHECK:   linalg.copy ins(%[[T]] : {{.*}}) outs(%{{.*}} :
// CHECK-NOT: tcc.rows_loop
// CHECK: "test.use"(%[[SHARED]])
func.func @rows_loop(%x: memref<256x512xf32>, %y: memref<256x512xf32>, %arena: memref<4096xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c2048 = arith.constant 2048 : index
  %t = memref.view %arena[%c0][] {tcc.row_temporary} : memref<4096xi8> to memref<1x512xf32>
  %shared = memref.view %arena[%c2048][] : memref<4096xi8> to memref<1x512xf32>
  scf.for %i = %c0 to %c256 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 512] [1, 1] : memref<256x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    linalg.copy ins(%row : memref<1x512xf32, strided<[512, 1], offset: ?>>) outs(%t : memref<1x512xf32>)
    %dst = memref.subview %y[%i, 0] [1, 512] [1, 1] : memref<256x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    linalg.copy ins(%t : memref<1x512xf32>) outs(%dst : memref<1x512xf32, strided<[512, 1], offset: ?>>)
  } {tcc.rows_loop}
  "test.use"(%shared) : (memref<1x512xf32>) -> ()
  return
}

// -----

// Tests that a rows loop stays sequential when a temporary is also used
// after it (a private copy would lose what it holds), when its temporaries
// are too big for each thread's stack, and when it is too small to split.
// CHECK-LABEL: func.func @rows_loop_kept
// CHECK-NOT: scf.parallel
// CHECK-COUNT-3: } {tcc.rows_loop}
func.func @rows_loop_kept(%x: memref<256x512xf32>, %arena: memref<1048576xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %t = memref.view %arena[%c0][] {tcc.row_temporary} : memref<1048576xi8> to memref<1x512xf32>
  scf.for %i = %c0 to %c256 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 512] [1, 1] : memref<256x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    linalg.copy ins(%row : memref<1x512xf32, strided<[512, 1], offset: ?>>) outs(%t : memref<1x512xf32>)
  } {tcc.rows_loop}
  "test.use"(%t) : (memref<1x512xf32>) -> ()
  %big = memref.view %arena[%c0][] {tcc.row_temporary} : memref<1048576xi8> to memref<256x512xf32>
  scf.for %i = %c0 to %c256 step %c1 {
    linalg.copy ins(%x : memref<256x512xf32>) outs(%big : memref<256x512xf32>)
  } {tcc.rows_loop}
  %small = memref.view %arena[%c0][] {tcc.row_temporary} : memref<1048576xi8> to memref<1x512xf32>
  scf.for %i = %c0 to %c2 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 512] [1, 1] : memref<256x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    linalg.copy ins(%row : memref<1x512xf32, strided<[512, 1], offset: ?>>) outs(%small : memref<1x512xf32>)
  } {tcc.rows_loop}
  return
}

// -----

// Tests that two rows loops whose temporaries CSE made one view (the same
// arena offset) both run in parallel, each with its own buffers, and the
// view goes once neither uses it.
// CHECK-LABEL: func.func @rows_loops_sharing_a_view
// CHECK-NOT: memref.view
// CHECK: scf.parallel
// CHECK:   memref.alloca() {alignment = 64 : i64} : memref<1x512xf32>
// CHECK: scf.parallel
// CHECK:   memref.alloca() {alignment = 64 : i64} : memref<1x512xf32>
// CHECK-NOT: tcc.rows_loop
func.func @rows_loops_sharing_a_view(%x: memref<256x512xf32>, %y: memref<256x512xf32>, %arena: memref<4096xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %t = memref.view %arena[%c0][] {tcc.row_temporary} : memref<4096xi8> to memref<1x512xf32>
  scf.for %i = %c0 to %c256 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 512] [1, 1] : memref<256x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    linalg.copy ins(%row : memref<1x512xf32, strided<[512, 1], offset: ?>>) outs(%t : memref<1x512xf32>)
    %dst = memref.subview %y[%i, 0] [1, 512] [1, 1] : memref<256x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    linalg.copy ins(%t : memref<1x512xf32>) outs(%dst : memref<1x512xf32, strided<[512, 1], offset: ?>>)
  } {tcc.rows_loop}
  scf.for %i = %c0 to %c256 step %c1 {
    %row = memref.subview %y[%i, 0] [1, 512] [1, 1] : memref<256x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    linalg.copy ins(%row : memref<1x512xf32, strided<[512, 1], offset: ?>>) outs(%t : memref<1x512xf32>)
    %dst = memref.subview %x[%i, 0] [1, 512] [1, 1] : memref<256x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    linalg.copy ins(%t : memref<1x512xf32>) outs(%dst : memref<1x512xf32, strided<[512, 1], offset: ?>>)
  } {tcc.rows_loop}
  return
}

// -----

#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1)>

// A global average pool's sum: the trailing reduction loops (14 x 14,
// contiguous in every operand) become one loop of 196, whether or not the
// op is big enough to run in parallel.
// CHECK-LABEL: func.func @collapse_trailing_reductions
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : memref<32x64x14x14xf32> into memref<32x64x196xf32>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c32)
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64
// CHECK: scf.for %{{.*}} = %{{.*}} to %c196
// CHECK: memref.load %[[FLAT]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<32x64x196xf32>
// CHECK-LABEL: func.func @collapse_small
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%{{.*}} : memref<2x12xf32>)
func.func @collapse_trailing_reductions(%x: memref<32x64x14x14xf32>, %y: memref<32x64xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x : memref<32x64x14x14xf32>) outs(%y : memref<32x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}
func.func @collapse_small(%x: memref<2x3x4xf32>, %y: memref<2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : memref<2x3x4xf32>) outs(%y : memref<2xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Reduction loops that are not contiguous in an operand (the input read
// transposed) stay as they are.
// CHECK-LABEL: func.func @strided_reductions_stay
// CHECK-NOT: memref.collapse_shape
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "reduction"]
func.func @strided_reductions_stay(%x: memref<2x4x3xf32>, %y: memref<2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : memref<2x4x3xf32>) outs(%y : memref<2xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A window's input is indexed by sums of loops (an average pool's
// oy * 2 + ky): its reduction loops stay as they are.
// CHECK-LABEL: func.func @window_reductions_stay
// CHECK-NOT: memref.collapse_shape
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction", "reduction"]
func.func @window_reductions_stay(%x: memref<2x9x9xf32>, %w: memref<3xf32>, %y: memref<2x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1 * 2 + d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : memref<2x9x9xf32>, memref<3xf32>) outs(%y : memref<2x4xf32>) {
  ^bb0(%a: f32, %k: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A rows loop's elementwise body over one channel's [1, 1, 56, 56] (a
// squeeze-and-excitation scale) becomes one loop of 3136 contiguous
// elements: the row slices are flattened to 1-D, the per-channel scalar to
// rank 0 (an inner loop of 56 was unrolled whole and the loop around it
// vectorized with gathers).
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @se_scale
// CHECK: scf.parallel
// CHECK-DAG: memref.subview {{.*}} to memref<f32, strided<[], offset: ?>>
// CHECK-DAG: memref.collapse_shape {{.*}} into memref<3136xf32, strided<[1], offset: ?>>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}} ins({{.*}} : memref<f32, strided<[], offset: ?>>, memref<3136xf32, strided<[1], offset: ?>>) outs({{.*}} : memref<3136xf32, strided<[1], offset: ?>>)
// CHECK: arith.mulf
func.func @se_scale(%s: memref<1x8x1x1xf32>, %x: memref<1x8x56x56xf32>, %y: memref<1x8x56x56xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %a = memref.subview %s[0, %i, 0, 0] [1, 1, 1, 1] [1, 1, 1, 1] : memref<1x8x1x1xf32> to memref<1x1x1x1xf32, strided<[8, 1, 1, 1], offset: ?>>
    %b = memref.subview %x[0, %i, 0, 0] [1, 1, 56, 56] [1, 1, 1, 1] : memref<1x8x56x56xf32> to memref<1x1x56x56xf32, strided<[25088, 3136, 56, 1], offset: ?>>
    %o = memref.subview %y[0, %i, 0, 0] [1, 1, 56, 56] [1, 1, 1, 1] : memref<1x8x56x56xf32> to memref<1x1x56x56xf32, strided<[25088, 3136, 56, 1], offset: ?>>
    linalg.generic {indexing_maps = [#bcast, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a, %b : memref<1x1x1x1xf32, strided<[8, 1, 1, 1], offset: ?>>, memref<1x1x56x56xf32, strided<[25088, 3136, 56, 1], offset: ?>>) outs(%o : memref<1x1x56x56xf32, strided<[25088, 3136, 56, 1], offset: ?>>) {
    ^bb0(%in: f32, %in2: f32, %out: f32):
      %m = arith.mulf %in, %in2 : f32
      linalg.yield %m : f32
    }
  } {tcc.rows_loop}
  return
}

// -----

// Not where an operand reads the row along other loops (a transpose): left
// as it is.
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#id4t = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @row_transposed
// CHECK-NOT: memref.collapse_shape
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]
func.func @row_transposed(%x: memref<1x8x56x56xf32>, %y: memref<1x8x56x56xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %b = memref.subview %x[0, %i, 0, 0] [1, 1, 56, 56] [1, 1, 1, 1] : memref<1x8x56x56xf32> to memref<1x1x56x56xf32, strided<[25088, 3136, 56, 1], offset: ?>>
    %o = memref.subview %y[0, %i, 0, 0] [1, 1, 56, 56] [1, 1, 1, 1] : memref<1x8x56x56xf32> to memref<1x1x56x56xf32, strided<[25088, 3136, 56, 1], offset: ?>>
    linalg.generic {indexing_maps = [#tr, #id4t], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<1x1x56x56xf32, strided<[25088, 3136, 56, 1], offset: ?>>) outs(%o : memref<1x1x56x56xf32, strided<[25088, 3136, 56, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }
  } {tcc.rows_loop}
  return
}
