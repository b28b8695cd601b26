// RUN: tcc-opt %s --tcc-inline-alloca-scopes | FileCheck %s

// A scope that allocates nothing is inlined, results and all.
// CHECK-LABEL: func.func @no_alloca
// CHECK-NOT: memref.alloca_scope
// CHECK: scf.for
// CHECK: %[[V:.*]] = arith.addf
// CHECK: return %[[V]]
func.func @no_alloca(%m: memref<8xf32>, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = memref.alloca_scope -> f32 {
    scf.for %i = %c0 to %c8 step %c1 {
      memref.store %x, %m[%i] : memref<8xf32>
    }
    %s = arith.addf %x, %x : f32
    memref.alloca_scope.return %s : f32
  }
  return %r : f32
}

// A scope with an alloca stays.
// CHECK-LABEL: func.func @with_alloca
// CHECK: memref.alloca_scope
// CHECK: memref.alloca
func.func @with_alloca(%x: f32) {
  memref.alloca_scope {
    %a = memref.alloca() : memref<4xf32>
    %c0 = arith.constant 0 : index
    memref.store %x, %a[%c0] : memref<4xf32>
  }
  return
}

// Tests that the statically shaped allocas of a parallel loop body move to
// the top of the omp.parallel region (one buffer per thread) and the scope
// is inlined.
// CHECK-LABEL: func.func @parallel_body
// CHECK: omp.parallel {
// CHECK-NEXT: %[[A:.*]] = memref.alloca() : memref<16xf32>
// CHECK-NOT: memref.alloca_scope
// CHECK: omp.wsloop
// CHECK: memref.store %{{.*}}, %[[A]]
func.func @parallel_body(%x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        memref.alloca_scope {
          %a = memref.alloca() : memref<16xf32>
          memref.store %x, %a[%i] : memref<16xf32>
        }
        omp.yield
      }
      omp.terminator
    }
    omp.terminator
  }
  return
}
