// RUN: tcc-opt %s --convert-tcc-to-linalg | FileCheck %s

// Tests that scatter copies the data, then loops over the updates,
// combining each update with the element there; an index out of range
// writes its own element back (one insert, no branch: a branch yielding
// either a new buffer or the old one would need ownership tracked at run
// time).
// CHECK-LABEL: func @scatter
// CHECK: %[[COPY:.*]] = linalg.copy
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args(%{{.*}} = %[[COPY]])
// CHECK:   scf.for %[[J:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK:     tensor.extract %{{.*}}[%[[I]], %[[J]]] : tensor<2x3xi64>
// CHECK:     %[[OK:.*]] = arith.cmpi ult
// CHECK:     %[[AT:.*]] = arith.select %[[OK]], %{{.*}}, %{{.*}} : index
// CHECK:     %[[OLD:.*]] = tensor.extract %[[ACC]][%[[AT]], %[[J]]]
// CHECK:     %[[MAX:.*]] = arith.maximumf %[[OLD]], %{{.*}}
// CHECK:     %[[V:.*]] = arith.select %[[OK]], %[[MAX]], %[[OLD]]
// CHECK:     tensor.insert %[[V]] into %[[ACC]][%[[AT]], %[[J]]]
// CHECK-NOT: scf.if
func.func @scatter(%d: tensor<3x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %0 = tcc.scatter %d, %i, %u axis = 0 reduction = max : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}
