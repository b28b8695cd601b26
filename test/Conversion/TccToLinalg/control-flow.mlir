// RUN: tcc-opt %s --convert-tcc-to-linalg --split-input-file | FileCheck %s

// Tests that tcc.if becomes scf.if on the condition's element, with the
// regions moved over and their ops lowered in place.
// CHECK-LABEL: func @if_else
// CHECK: %[[C:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
// CHECK: scf.if %[[C]] -> (tensor<2xf32>) {
// CHECK:   linalg.generic
// CHECK:   scf.yield
// CHECK: } else {
// CHECK:   scf.yield
// CHECK-NOT: tcc.
func.func @if_else(%c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = tcc.if %c : tensor<i1> -> tensor<2xf32> {
    %s = tcc.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    tcc.yield %s : tensor<2xf32>
  } else {
    tcc.yield %b : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// Tests that tcc.loop becomes scf.while carrying the iteration number, the
// carried value (copied into its block argument, so that bufferization
// keeps one buffer), a scan buffer filled slice by slice (before the
// copies, which may overwrite what the slice reads), and last the
// condition (so that dropping it where the body does not read it leaves the
// tensors in their places); the loop stops at the trip count, the
// condition or the scan length.
// CHECK-LABEL: func @loop
// CHECK: %[[BUF:.*]] = tensor.empty() : tensor<3x2xf32>
// CHECK: scf.while (%[[I:.*]] = %{{.*}}, %[[X:.*]] = %{{.*}}, %[[S:.*]] = %[[BUF]], %[[GO:.*]] = %{{.*}})
// CHECK:   arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK:   arith.cmpi slt, %[[I]], %{{.*}} : index
// CHECK:   scf.condition
// CHECK: } do {
// CHECK: ^bb0(%[[AI:.*]]: index, %[[AX:.*]]: tensor<2xf32>, %[[AS:.*]]: tensor<3x2xf32>, %{{.*}}: i1):
// CHECK:   %[[Y:.*]] = linalg.generic
// CHECK:   %[[NEXT:.*]] = arith.addi %[[AI]], %{{.*}} : index
// CHECK:   %[[INS:.*]] = tensor.insert_slice %[[Y]] into %[[AS]][%[[AI]], 0] [1, 2] [1, 1]
// CHECK:   %[[COPY:.*]] = linalg.copy ins(%[[Y]] : tensor<2xf32>) outs(%[[AX]] : tensor<2xf32>)
// CHECK:   scf.yield %[[NEXT]], %[[COPY]], %[[INS]], %{{.*}}
// CHECK-NOT: tcc.
func.func @loop(%n: tensor<i64>, %c: tensor<i1>, %a: tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %r:2 = tcc.loop %n, %c, %a : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %x: tensor<2xf32>):
    %y = tcc.add %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    tcc.yield %go, %y, %y : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  return %r#0, %r#1 : tensor<2xf32>, tensor<3x2xf32>
}

// -----

// Tests that a scan output reading a carried value as it came in (ONNX's
// expanded Range: `range = prev`, `prev = prev + delta`) is stored before
// the copy overwrites that value, and that carried values swapped by the
// body are each copied out to a fresh tensor before either block argument
// is overwritten.
// CHECK-LABEL: func @loop_reads_before_copies
// CHECK: } do {
// CHECK: ^bb0(%[[AI:.*]]: index, %[[AX:.*]]: tensor<2xf32>, %[[AY:.*]]: tensor<2xf32>, %[[AS:.*]]: tensor<3x2xf32>
// CHECK:   %[[INS:.*]] = tensor.insert_slice %[[AX]] into %[[AS]][%[[AI]], 0]
// CHECK:   %[[E1:.*]] = tensor.empty() : tensor<2xf32>
// CHECK:   %[[OUTY:.*]] = linalg.copy ins(%[[AY]] : tensor<2xf32>) outs(%[[E1]] : tensor<2xf32>)
// CHECK:   %[[E2:.*]] = tensor.empty() : tensor<2xf32>
// CHECK:   %[[OUTX:.*]] = linalg.copy ins(%[[AX]] : tensor<2xf32>) outs(%[[E2]] : tensor<2xf32>)
// CHECK:   %[[CX:.*]] = linalg.copy ins(%[[OUTY]] : tensor<2xf32>) outs(%[[AX]] : tensor<2xf32>)
// CHECK:   %[[CY:.*]] = linalg.copy ins(%[[OUTX]] : tensor<2xf32>) outs(%[[AY]] : tensor<2xf32>)
// CHECK:   scf.yield %{{.*}}, %[[CX]], %[[CY]], %[[INS]]
func.func @loop_reads_before_copies(%n: tensor<i64>, %c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<3x2xf32>) {
  %r:3 = tcc.loop %n, %c, %a, %b : (tensor<i64>, tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<3x2xf32>) {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %x: tensor<2xf32>, %y: tensor<2xf32>):
    tcc.yield %go, %y, %x, %x : tensor<i1>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<2xf32>, tensor<2xf32>, tensor<3x2xf32>
}
