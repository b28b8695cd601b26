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

//===----------------------------------------------------------------------===//
// CUDA (tcc-cuda-pipeline)
//===----------------------------------------------------------------------===//

def TccDeviceConstants : Pass<"tcc-device-constants", "ModuleOp"> {
  let summary = "Read constant globals from one device weight buffer";
  let description = [{
    Kernels on a GPU cannot read the host's constant data. Every constant
    `memref.global` that `@main` (or a slab of a dynamic batch) reads gets a
    256-byte aligned place in one device buffer of weights, which becomes
    the function's last argument; each `memref.get_global` becomes a
    `memref.view` of that argument. A new function,
    `@tcc_cuda_upload_weights`, takes the device buffer and copies each
    global into its place (calls of `@tcc_cuda_h2d`); the artifact runs it
    once when it is loaded. The module records the buffer's size as
    `tcc.cuda.weights_bytes`.

    Before:
    ```mlir
    memref.global "private" constant @w : memref<4xf32> = dense<1.0>
    func.func @main(%out: memref<4xf32>) {
      %w = memref.get_global @w : memref<4xf32>
      ...
    ```
    After:
    ```mlir
    func.func @main(%out: memref<4xf32>, %weights: memref<256xi8>) {
      %c0 = arith.constant 0 : index
      %w = memref.view %weights[%c0][] : memref<256xi8> to memref<4xf32>
      ...
    func.func @tcc_cuda_upload_weights(%weights: memref<256xi8>) { ... }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TccContractionsToCublas
    : Pass<"tcc-contractions-to-cublas", "func::FuncOp"> {
  let summary = "Run f32 matmuls and batched matmuls through cuBLAS";
  let description = [{
    A linalg contraction on buffers (one m, one n, one k dimension and at
    most one batch dimension, f32, a multiply-add body) whose operands each
    have a unit stride in one of their matrix dimensions becomes a call of
    `@tcc_cuda_gemm` with cuBLAS's column-major description of it
    (transposes, leading dimensions, batch strides). A `linalg.transpose`
    that only feeds the contraction is folded into it as a strided view,
    and a zero `linalg.fill` of the result just before it becomes beta = 0.
    Anything else is left for generated kernels.

    Before:
    ```mlir
    linalg.fill ins(%zero : f32) outs(%c : memref<64x10xf32>)
    linalg.matmul ins(%a, %b : memref<64x256xf32>, memref<256x10xf32>)
                  outs(%c : memref<64x10xf32>)
    ```
    After (C^T = B^T A^T in column-major terms):
    ```mlir
    call @tcc_cuda_gemm(%no, %no, %c10, %c64, %c256, %pb, %c10, ...,
                        %pa, %c256, ..., %pc, %c10, ..., %c1, %beta0)
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TccMapToGpu : Pass<"tcc-map-to-gpu", "func::FuncOp"> {
  let summary = "Put the graph's loops and buffer accesses into gpu.launch";
  let description = [{
    Runs on a graph function in buffer form (after the memory plan). Its
    linalg ops become parallel loops; each `scf.parallel` becomes a
    `gpu.launch` over the product of its trip counts, 256 threads a block,
    one iteration per thread (the index is split back into the loop's
    induction variables, the last one fastest so neighbouring threads touch
    neighbouring elements). Any other op that reads or writes memory runs in
    a one-thread launch. Host loops that contain parallel loops stay on the
    host, their bodies mapped the same way. Views, constants, index
    arithmetic and calls stay on the host. A buffer the memory plan did not
    place (a `memref.alloc` left in the function) is an error: the device
    has no allocator inside a run.

    Before:
    ```mlir
    linalg.generic ... ins(%a : memref<1000xf32>) outs(%b : memref<1000xf32>)
    ```
    After:
    ```mlir
    gpu.launch blocks(...) in (%gx = %c4, ...) threads(...) in (%tx = %c256, ...) {
      %i = ... block id * 256 + thread id
      scf.if %i < 1000 { ... memref.load %a[%i] ... memref.store ... %b[%i] }
      gpu.terminator
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TccMergeGpuModules : Pass<"tcc-merge-gpu-modules", "ModuleOp"> {
  let summary = "Gather every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` makes a `gpu.module` per kernel. An artifact
    carries one PTX module, so every `gpu.func` moves into the first module,
    renamed `@tcc_kernels`, and the launches name it.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def TccGpuLaunchesToCalls : Pass<"tcc-gpu-launches-to-calls", "ModuleOp"> {
  let summary = "Launch kernels through the artifact's CUDA entry points";
  let description = [{
    After `gpu-module-to-binary`: the PTX of the one `gpu.binary` moves to
    the module attribute `tcc.cuda.ptx` and its kernels' names, in order, to
    `tcc.cuda.kernels`. Each `gpu.launch_func` becomes a call of
    `@tcc_cuda_launch(kernel, grid x/y/z, block x/y/z, slots, count)`,
    where `slots` holds each kernel argument in 8 bytes: a buffer as its
    aligned device address (kernels take bare pointers and add the static
    offset of their type themselves), an integer or float zero- or
    bit-extended. The runtime passes `&slots[i]` as the i-th parameter.

    Before:
    ```mlir
    gpu.launch_func @tcc_kernels::@k blocks in (%c4, %c1, %c1)
        threads in (%c256, %c1, %c1) args(%buf : memref<1000xf32>)
    ```
    After:
    ```mlir
    %slots = memref.alloca() : memref<1xi64>
    %p = memref.extract_aligned_pointer_as_index %buf : memref<1000xf32> -> index
    ...
    call @tcc_cuda_launch(%k0, %c4, %c1, %c1, %c256, %c1, %c1, %slots, %c1_i64)
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TccGpuLaunchesToLoops : Pass<"tcc-gpu-launches-to-loops", "func::FuncOp"> {
  let summary = "Run gpu.launch bodies as host loops (CUDA emulation)";
  let description = [{
    For `tcc --target=cuda --cuda-arch=emulate`, which checks the CUDA
    pipeline's kernels and calls on a machine without a GPU: each
    `gpu.launch` becomes loops over its blocks and threads (x; y and z must
    be 1) that run the body with the block and thread indices of each
    iteration. Kernels that synchronize threads or share memory cannot be
    emulated this way; tcc-map-to-gpu makes none.

    Before:
    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      ... %bx ... %tx ...
      gpu.terminator
    }
    ```
    After:
    ```mlir
    scf.for %bx = %c0 to %c4 step %c1 {
      scf.for %tx = %c0 to %c256 step %c1 {
        ... %bx ... %tx ...
      }
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TccConvolutionsToGemm
    : Pass<"tcc-convolutions-to-gemm", "func::FuncOp"> {
  let summary = "Convolutions as an im2col copy and a batched matmul (CUDA)";
  let description = [{
    On tensors, for the CUDA pipeline, where a GEMM is cuBLAS's and a
    convolution's own loop nest would be one thread per output element: a
    2-D convolution (tcc's form, `out[n, g, f, oh, ow] += in[n, g, c,
    oh * s + kh * d, ow * s + kw * d] * w[g, f, c, kh, kw]`) whose output
    channels and reduction (c * kh * kw) both reach 16 becomes a copy of
    the input's windows into columns (`col[n|g, c * kh * kw, oh * ow]`; a
    1x1 convolution of stride 1 reads the input in place) and a contraction
    of the filter with them, batched over images (one group) or over groups
    (one image). Other convolutions (depthwise ones, many images and
    groups at once) stay as they are.

    Before:
    ```mlir
    %o = linalg.generic {... 8 loops, conv maps ...}
           ins(%in, %w : tensor<1x1x64x58x58xf32>, tensor<1x64x64x3x3xf32>)
           outs(%init : tensor<1x1x64x56x56xf32>)
    ```
    After:
    ```mlir
    %col = linalg.generic {... copy of the windows ...}
           ins(%in : tensor<1x1x64x58x58xf32>) outs(... tensor<1x1x64x3x3x56x56xf32>)
    %o = linalg.generic {... (n, f, p, k) contraction ...}
           ins(%col2, %w2 : tensor<1x576x3136xf32>, tensor<64x576xf32>)
           outs(%init2 : tensor<1x64x3136xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TccExtractsToOperands : Pass<"tcc-extracts-to-operands", "func::FuncOp"> {
  let summary = "Elements a linalg body reads from outside become operands";
  let description = [{
    For the CUDA pipeline, where a kernel cannot use a value the host would
    have to read from device memory: a `tensor.extract` at constant indices
    (a scalar result, such as a 0-d reduction) used inside a
    `linalg.generic`'s body becomes an input of that generic, indexed by
    the constant indices, so the kernel reads the element itself.

    Before:
    ```mlir
    %s = tensor.extract %max[] : tensor<f32>
    linalg.generic ... ins(%x : tensor<8xf32>) ... {
    ^bb0(%a: f32, %o: f32):
      %d = arith.divf %a, %s : f32
    ```
    After:
    ```mlir
    linalg.generic {indexing_maps = [(d0) -> (d0), (d0) -> (), (d0) -> (d0)]}
        ins(%x, %max : tensor<8xf32>, tensor<f32>) ... {
    ^bb0(%a: f32, %s: f32, %o: f32):
      %d = arith.divf %a, %s : f32
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // TCC_CONVERSION_PASSES_TD
