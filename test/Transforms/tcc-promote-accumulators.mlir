// RUN: tcc-opt %s --tcc-promote-accumulators --split-input-file | FileCheck %s

// A sum into an arena view from another view that lies elsewhere in the
// arena: the element is loaded once, carried through both loops of the
// reduction and stored once.
// CHECK-LABEL: func.func @disjoint_views
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c4
// CHECK: %[[INIT:.*]] = memref.load %[[ACC:.*]][%[[I]]] : memref<4xf32>
// CHECK: %[[OUTER:.*]] = scf.for %{{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f32)
// CHECK: %[[INNER:.*]] = scf.for %{{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (f32)
// CHECK: %[[X:.*]] = memref.load %{{.*}} : memref<4x3x5xf32>
// CHECK: %[[S:.*]] = arith.addf %[[B]], %[[X]]
// CHECK: scf.yield %[[S]] : f32
// CHECK: scf.yield %[[INNER]] : f32
// CHECK: memref.store %[[OUTER]], %[[ACC]][%[[I]]] : memref<4xf32>
func.func @disjoint_views(%arena: memref<1024xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c256 = arith.constant 256 : index
  %x = memref.view %arena[%c0][] : memref<1024xi8> to memref<4x3x5xf32>
  %acc = memref.view %arena[%c256][] : memref<1024xi8> to memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      scf.for %k = %c0 to %c5 step %c1 {
        %v = memref.load %x[%i, %j, %k] : memref<4x3x5xf32>
        %a = memref.load %acc[%i] : memref<4xf32>
        %s = arith.addf %a, %v fastmath<reassoc> : f32
        memref.store %s, %acc[%i] : memref<4xf32>
      }
    }
  }
  return
}

// -----

// Distinct function arguments (an input and an output) are distinct memory.
// CHECK-LABEL: func.func @arguments
// CHECK: memref.load %arg1[%{{.*}}] : memref<4xf32>
// CHECK: scf.for {{.*}} iter_args
// CHECK: memref.store %{{.*}}, %arg1[%{{.*}}] : memref<4xf32>
func.func @arguments(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      %a = memref.load %y[%i] : memref<4xf32>
      %m = arith.maximumf %a, %v : f32
      memref.store %m, %y[%i] : memref<4xf32>
    }
  }
  return
}

// -----

// What may share memory with the element keeps it in memory: views that
// overlap, a view at an offset only the run knows, another element of the
// same buffer written in the loop, a call; and a loop that may not run at
// all (hoisting would touch an element the loop never does).
// CHECK-LABEL: func.func @overlapping_views
// CHECK-NOT: iter_args
// CHECK-LABEL: func.func @unknown_offset
// CHECK-NOT: iter_args
// CHECK-LABEL: func.func @another_element
// CHECK-NOT: iter_args
// CHECK-LABEL: func.func @call_in_loop
// CHECK-NOT: iter_args
// CHECK-LABEL: func.func @maybe_no_iteration
// CHECK-NOT: iter_args
// CHECK: return
func.func @overlapping_views(%arena: memref<1024xi8>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %x = memref.view %arena[%c0][] : memref<1024xi8> to memref<8xf32>
  %acc = memref.view %arena[%c16][] : memref<1024xi8> to memref<4xf32>
  scf.for %j = %c0 to %c8 step %c1 {
    %v = memref.load %x[%j] : memref<8xf32>
    %a = memref.load %acc[%i] : memref<4xf32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %acc[%i] : memref<4xf32>
  }
  return
}
func.func @unknown_offset(%arena: memref<1024xi8>, %i: index, %at: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %x = memref.view %arena[%at][] : memref<1024xi8> to memref<8xf32>
  %acc = memref.view %arena[%c0][] : memref<1024xi8> to memref<4xf32>
  scf.for %j = %c0 to %c8 step %c1 {
    %v = memref.load %x[%j] : memref<8xf32>
    %a = memref.load %acc[%i] : memref<4xf32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %acc[%i] : memref<4xf32>
  }
  return
}
func.func @another_element(%x: memref<8xf32>, %acc: memref<4xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  scf.for %j = %c0 to %c8 step %c1 {
    %v = memref.load %x[%j] : memref<8xf32>
    %a = memref.load %acc[%i] : memref<4xf32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %acc[%i] : memref<4xf32>
    memref.store %v, %acc[%c3] : memref<4xf32>
  }
  return
}
func.func private @effect(f32)
func.func @call_in_loop(%x: memref<8xf32>, %acc: memref<4xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %j = %c0 to %c8 step %c1 {
    %v = memref.load %x[%j] : memref<8xf32>
    %a = memref.load %acc[%i] : memref<4xf32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %acc[%i] : memref<4xf32>
    func.call @effect(%s) : (f32) -> ()
  }
  return
}
func.func @maybe_no_iteration(%x: memref<8xf32>, %acc: memref<4xf32>, %i: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %j = %c0 to %n step %c1 {
    %v = memref.load %x[%j] : memref<8xf32>
    %a = memref.load %acc[%i] : memref<4xf32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %acc[%i] : memref<4xf32>
  }
  return
}
