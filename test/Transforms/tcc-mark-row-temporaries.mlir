// RUN: tcc-opt %s --tcc-mark-row-temporaries --allow-unregistered-dialect | FileCheck %s

// Tests that the buffers allocated inside a rows loop, at any depth, are
// marked, and that those outside it are not.
// CHECK-LABEL: func.func @rows
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<8x16xf32>
// CHECK: scf.for
// CHECK: memref.alloc() {tcc.row_temporary} : memref<1x16xf32>
// CHECK: scf.if
// CHECK: memref.alloc() {tcc.row_temporary} : memref<1x1xf32>
// CHECK: } {tcc.rows_loop}
func.func @rows(%x: memref<8x16xf32>, %p: i1) -> memref<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<8x16xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %t = memref.alloc() : memref<1x16xf32>
    scf.if %p {
      %s = memref.alloc() : memref<1x1xf32>
      "test.use"(%s) : (memref<1x1xf32>) -> ()
    }
    "test.use"(%t) : (memref<1x16xf32>) -> ()
  } {tcc.rows_loop}
  return %out : memref<8x16xf32>
}

// Tests that an ordinary loop's buffers are left alone.
// CHECK-LABEL: func.func @plain_loop
// CHECK: scf.for
// CHECK-NOT: tcc.row_temporary
// CHECK: return
func.func @plain_loop() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %t = memref.alloc() : memref<1x16xf32>
    "test.use"(%t) : (memref<1x16xf32>) -> ()
  }
  return
}
