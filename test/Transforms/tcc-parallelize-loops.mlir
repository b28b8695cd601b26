// RUN: tcc-opt %s --tcc-parallelize-loops --split-input-file | FileCheck %s

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
