// RUN: tcc-opt %s --convert-tcc-to-linalg | FileCheck %s

// Tests that scatter copies the data, then loops over the updates, skipping
// indices out of range and combining the update with the element there.
// CHECK-LABEL: func @scatter
// CHECK: %[[COPY:.*]] = linalg.copy
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args(%{{.*}} = %[[COPY]])
// CHECK:   scf.for %[[J:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK:     tensor.extract %{{.*}}[%[[I]], %[[J]]] : tensor<2x3xi64>
// CHECK:     %[[OK:.*]] = arith.cmpi ult
// CHECK:     scf.if %[[OK]]
// CHECK:       arith.maximumf
// CHECK:       tensor.insert
func.func @scatter(%d: tensor<3x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %0 = tcc.scatter %d, %i, %u axis = 0 reduction = max : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}
