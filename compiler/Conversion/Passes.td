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
  let options = [
    Option<"ukernels", "ukernels", "::mlir::tcc::UkernelIsa",
           /*default=*/"::mlir::tcc::UkernelIsa::none",
           "Lower f32 matmuls and 2-D convolutions to calls of the "
           "micro-kernels built for this ISA; constant weights are packed "
           "at compile time",
           [{::llvm::cl::values(
             clEnumValN(::mlir::tcc::UkernelIsa::none, "none",
                        "no micro-kernels: generated loops"),
             clEnumValN(::mlir::tcc::UkernelIsa::generic, "generic",
                        "baseline x86-64"),
             clEnumValN(::mlir::tcc::UkernelIsa::avx2, "avx2", "AVX2 and FMA"),
             clEnumValN(::mlir::tcc::UkernelIsa::avx512, "avx512",
                        "AVX-512 (F, BW, DQ, VL)"))}]>,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::bufferization::BufferizationDialect"
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

def ApproximateMath : Pass<"tcc-approximate-math", "func::FuncOp"> {
  let summary = "Compute f32 erf, tanh and exp with vectorizable polynomials";
  let description = [{
    `math.erf`, `math.tanh` and `math.exp` would become calls of libm's
    scalar `erff`, `tanhf` and `expf`, which keep the loops around them
    (GELU, softmax, sigmoid) from being vectorized. Upstream's polynomial
    approximations (accurate to a few ULP in f32) are plain arithmetic that
    LLVM vectorizes.

    Before:
    ```mlir
    %y = math.erf %x : f32
    ```
    After: a rational polynomial in `%x` made of `arith` ops (and `math.fma`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def ConvertUkernelsToCalls
    : Pass<"convert-ukernels-to-calls", "ModuleOp"> {
  let summary = "Turn bufferized tcc.ukernel ops into calls of the kernels";
  let description = [{
    After bufferization, each `tcc.ukernel` on memrefs becomes a `func.call`
    of the kernel's entry point for compiled code (`tcc_ukabi_<name>`,
    runtime/ukernels/compiler_abi.cc), passing buffer addresses as `i64` and
    every parameter as a scalar. The entry points are declared in the
    module; the kernels' bitcode is linked in later, when the module is LLVM
    IR. Buffers must be contiguous (they always are for the tensors the
    lowering passes).

    Before:
    ```mlir
    tcc.ukernel "sgemm" ins(%a, %b : memref<4x8xf32>, memref<8x2xf32>) outs(%c : memref<4x2xf32>) params {m = 4 : i64, ...}
    ```
    After:
    ```mlir
    %pa = memref.extract_aligned_pointer_as_index %a : memref<4x8xf32> -> index
    ...
    %rc = call @tcc_ukabi_sgemm(%batch, %m, %n, %k, %a_addr, ...) : (i64, ...) -> i32
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // TCC_CONVERSION_PASSES_TD
