//===- Passes.td - tcc graph-level passes -------------------*- tablegen -*-===//

#ifndef TCC_TRANSFORMS_PASSES_TD
#define TCC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TccDecompose : Pass<"tcc-decompose", "func::FuncOp"> {
  let summary = "Expand composite tcc ops into elementwise ops and reductions";
  let description = [{
    Rewrites softmax, log_softmax, layer_norm and batch_norm into the
    reductions and elementwise ops they are made of, so that later passes
    (fusion, constant folding over the weights) see the parts. Softmax
    subtracts the row maximum first; batch norm becomes one multiply-add
    with a per-channel scale and shift.

    Before:
    ```mlir
    %r = tcc.softmax %x axis = 1 : tensor<2x10xf32>
    ```
    After:
    ```mlir
    %m = tcc.reduce_max %x axes = [1] keepdims : tensor<2x10xf32> -> tensor<2x1xf32>
    %d = tcc.sub %x, %m : (tensor<2x10xf32>, tensor<2x1xf32>) -> tensor<2x10xf32>
    %e = tcc.exp %d : tensor<2x10xf32>
    %s = tcc.reduce_sum %e axes = [1] keepdims : tensor<2x10xf32> -> tensor<2x1xf32>
    %r = tcc.div %e, %s : (tensor<2x10xf32>, tensor<2x1xf32>) -> tensor<2x10xf32>
    ```
  }];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

#endif // TCC_TRANSFORMS_PASSES_TD
