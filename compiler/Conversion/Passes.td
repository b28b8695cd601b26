//===- Passes.td - tcc conversion passes --------------------*- tablegen -*-===//

#ifndef TCC_CONVERSION_PASSES_TD
#define TCC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTccToLinalg : Pass<"convert-tcc-to-linalg", "func::FuncOp"> {
  let summary = "Lower tcc ops to linalg, tensor, arith and math";
  let description = [{
    Rewrites every tcc op into upstream ops on tensors: elementwise ops,
    reductions, contractions and windows become `linalg.generic` (or named
    linalg ops where one fits), shape ops become `tensor` ops, constants
    become `arith.constant`. The result still has value semantics;
    bufferization comes later. Ops that have no lowering (for instance on
    unsigned or dynamically shaped tensors) are reported with their location.

    Before:
    ```mlir
    %r = tcc.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    ```
    After:
    ```mlir
    %e = tensor.empty() : tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d1)>,
                                          affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
           ins(%a, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<4x3xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def ConvertMemRefCopyToLinalg
    : Pass<"convert-memref-copy-to-linalg", "func::FuncOp"> {
  let summary = "Turn strided memref.copy into linalg.copy loops";
  let description = [{
    Bufferization copies into and out of strided views (slices, concat
    pieces). The LLVM lowering would call MLIR's C runner library for a
    copy that is not contiguous, which an artifact must not depend on, so
    such copies become `linalg.copy` and then plain loops. Contiguous copies
    stay (they become `memcpy`).

    Before:
    ```mlir
    memref.copy %a, %b : memref<4xf32, strided<[2]>> to memref<4xf32>
    ```
    After:
    ```mlir
    linalg.copy ins(%a : memref<4xf32, strided<[2]>>) outs(%b : memref<4xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // TCC_CONVERSION_PASSES_TD
