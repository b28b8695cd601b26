//===- Passes.td - tcc graph-level passes -------------------*- tablegen -*-===//

#ifndef TCC_TRANSFORMS_PASSES_TD
#define TCC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TccDecompose : Pass<"tcc-decompose", "func::FuncOp"> {
  let summary = "Expand composite tcc ops into elementwise ops and reductions";
  let description = [{
    Rewrites softmax, log_softmax, layer_norm, batch_norm and nll_loss into
    the reductions and elementwise ops they are made of, so that later passes
    (fusion, constant folding over the weights) see the parts. Softmax
    subtracts the row maximum first; batch norm becomes one multiply-add
    with a per-channel scale and shift; nll_loss picks each position's
    target through a one-hot mask of the class ramp.

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

def TccAutodiff : Pass<"tcc-autodiff", "ModuleOp"> {
  let summary = "Build the gradient function of a tcc function";
  let description = [{
    Reverse-mode differentiation at the tcc level. From `@f(args...) ->
    (loss, aux...)`, whose first result is the loss (a floating-point tensor
    with one element), it adds `@f_grad(args...) -> (loss, aux...,
    d loss / d arg...)`: the forward ops, then their vector-Jacobian
    products in reverse order, each built by the op's
    `DifferentiableOpInterface` (the same rules the tracer's `backward()`
    uses). One gradient is returned per differentiated argument (`wrt`,
    default: every floating-point argument), with the argument's type; it is
    zero where the loss does not depend on the argument. An op on the path
    from an argument to the loss that has no VJP rule is an error naming the
    op. `@f` itself is kept.

    Before:
    ```mlir
    func.func @f(%w: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<f32> {
      %p = tcc.mul %w, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      %l = tcc.reduce_sum %p axes = [0] : tensor<3xf32> -> tensor<f32>
      return %l : tensor<f32>
    }
    ```
    After `--tcc-autodiff="function=f wrt=0"` (and canonicalize):
    ```mlir
    func.func @f_grad(%w: tensor<3xf32>, %x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
      %p = tcc.mul %w, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      %l = tcc.reduce_sum %p axes = [0] : tensor<3xf32> -> tensor<f32>
      %one = tcc.constant dense<1.0> : tensor<f32>
      %g = tcc.broadcast_to %one : tensor<f32> -> tensor<3xf32>
      %dw = tcc.mul %g, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      return %l, %dw : tensor<f32>, tensor<3xf32>
    }
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"main\"",
           "The function to differentiate">,
    ListOption<"wrt", "wrt", "int64_t",
               "Indices of the arguments to differentiate (default: every "
               "floating-point argument)">,
    Option<"gradFunction", "grad-function", "std::string",
           /*default=*/"\"\"",
           "Name of the gradient function (default: <function>_grad)">,
  ];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def TccMergeSiblingConvs : Pass<"tcc-merge-sibling-convs", "func::FuncOp"> {
  let summary = "Merge 1x1 convolutions of one input into one with stacked filters";
  let description = [{
    Pointwise convolutions (1x1 windows, stride 1, no padding, one group) of
    a batch of one that read the same input, with constant f32 weights and
    the same activation after each (or none), become one convolution of
    their filters stacked in block order (biases likewise), the activation
    once, and a `tcc.split` along the filters whose pieces replace the old
    results (GoogLeNet's inception modules: the 1x1 branch and the two
    reductions in front of the 3x3 and 5x5 ones). The product is then one
    GEMM whose input is packed once and whose filters fill the tile
    kernels' rows, where a branch of 16-48 filters had left them mostly
    idle; the pieces are contiguous views of the merged output (a batch of
    one), so the split copies nothing. Convolutions followed by different
    activations stay apart, as does a batch of more than one, whose pieces
    would be strided.

    Before:
    ```mlir
    %a = tcc.conv %x, %w1, %b1 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1
           : (tensor<1x64x28x28xf32>, tensor<32x64x1x1xf32>, tensor<32xf32>) -> tensor<1x32x28x28xf32>
    %ra = tcc.relu %a : tensor<1x32x28x28xf32>
    %c = tcc.conv %x, %w2, %b2 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1
           : (tensor<1x64x28x28xf32>, tensor<16x64x1x1xf32>, tensor<16xf32>) -> tensor<1x16x28x28xf32>
    %rc = tcc.relu %c : tensor<1x16x28x28xf32>
    ```
    After:
    ```mlir
    %m = tcc.conv %x, %w, %b strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1
           : (tensor<1x64x28x28xf32>, tensor<48x64x1x1xf32>, tensor<48xf32>) -> tensor<1x48x28x28xf32>
    %r = tcc.relu %m : tensor<1x48x28x28xf32>
    %ra, %rc = tcc.split %r axis = 1 : tensor<1x48x28x28xf32> -> tensor<1x32x28x28xf32>, tensor<1x16x28x28xf32>
    ```
  }];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def TccFuse : Pass<"tcc-fuse", "func::FuncOp"> {
  let summary = "Group producer-consumer chains into tcc.fused kernels";
  let description = [{
    Forms fusion groups, each lowered later as one kernel:

    * `contraction`: an f32 matmul or 2-D convolution with the ops after it
      that the micro-kernels' epilogue computes: a bias add, a residual add,
      an activation (GELU, or SiLU or hard swish: x times a gate of itself),
      then a relu or clamp; for a matmul also the
      transposes and reshapes
      that only re-view its operands or its result, which the kernel
      addresses through strides (see compiler/Transforms/Epilogue.h); a
      depthwise convolution also takes the unpadded stride-1 1x1
      convolution that alone reads its output, with that one's epilogue
      (mobilenet's block tail: one kernel that never stores the depthwise
      output), and a convolution with one group whose output (after its
      bias and clamp) alone feeds such a depthwise/1x1 pair takes the pair
      (mobilenet's inverted-residual blocks and its stem: one kernel, a band
      of rows at a time, where the tensor between them is large); a
      convolution with one group whose output (after its bias and clamp)
      alone feeds a 2x2, stride-2, unpadded max pooling takes the pooling
      (a small CNN's first layer: pooled in the kernel's registers where the
      target's kernels can, else lowered as two calls); and an unpadded
      stride-1 1x1 convolution with one group and none of these after it
      takes the per-channel multiply, add and relu that make its input, each
      result read only by the next (a BatchNorm and ReLU before it: the
      kernel applies them as it packs its input, which is then never written
      as a tensor); a depthwise convolution with none of these after it
      whose output a keepdims mean over the plane axes reads (a
      squeeze-and-excitation block's global pooling) takes the mean as the
      group's second result (its kernel sums each plane as it finishes it,
      where a kernel of its own read the whole output again);
    * `elementwise`: connected elementwise ops over the same shape (operands
      may broadcast), e.g. a bias add followed by GELU, become one loop nest
      that keeps intermediates in registers;
    * `rows`: reductions over the trailing axes together with the
      elementwise ops around them, over either the full shape or the reduced
      one (softmax, log-softmax, layer normalization), become one loop over
      the leading dimensions that computes a whole row at a time.

    A producer joins a group only when every use of its result is inside the
    group, so no value is computed twice and the grouped graph stays acyclic.
    Groups are formed from the last op backwards, greedily.

    Before:
    ```mlir
    %0 = tcc.add %x, %b : (tensor<128x3072xf32>, tensor<3072xf32>) -> tensor<128x3072xf32>
    %1 = tcc.gelu %0 : tensor<128x3072xf32>
    ```
    After:
    ```mlir
    %1 = tcc.fused "elementwise"(%x, %b : tensor<128x3072xf32>, tensor<3072xf32>) -> tensor<128x3072xf32> {
    ^bb0(%a0: tensor<128x3072xf32>, %a1: tensor<3072xf32>):
      %0 = tcc.add %a0, %a1 : (tensor<128x3072xf32>, tensor<3072xf32>) -> tensor<128x3072xf32>
      %g = tcc.gelu %0 : tensor<128x3072xf32>
      tcc.yield %g : tensor<128x3072xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::tcc::TccDialect"];
}

def TccFuseAttention : Pass<"tcc-fuse-attention", "func::FuncOp"> {
  let summary = "Merge attention's products and softmax into one group";
  let description = [{
    Runs after `tcc-fuse`, where the CPU micro-kernels are used. A `rows`
    group that is a softmax over the last axis -- of the scores, optionally
    divided or multiplied by a scalar constant, then plus a mask or with a
    boolean mask selecting a scalar constant fill -- whose scores come from
    a `contraction` group holding only a matmul (and the views around its
    operands), or from a matmul in no group whose operands are such views
    multiplied by scalar constants (torch's MultiheadAttention exports Q and
    K each scaled apart; the kernel's scale takes both), used by nothing
    else, and whose result is used only by
    another such group as its matmul's left operand, as it is: the three
    become one `attention` group, the bodies in order. The lowering turns
    it into one call of the attention micro-kernel, which keeps a block of
    scores in cache instead of writing the whole [heads, sq, sk] tensor and
    reading it back three times. Only static f32 products qualify, and a
    mask whose layout the kernel reads as it lies (see
    compiler/Transforms/Attention.h).

    Before (the groups' bodies elided):
    ```mlir
    %s = tcc.fused "contraction"(%q, %k : ...) -> tensor<1x12x512x512xf32> {...}
    %p = tcc.fused "rows"(%s, %c8 : ...) -> tensor<1x12x512x512xf32> {...}
    %o = tcc.fused "contraction"(%v, %p : ...) -> tensor<1x512x768xf32> {...}
    ```
    After:
    ```mlir
    %o = tcc.fused "attention"(%q, %k, %c8, %v : ...) -> tensor<1x512x768xf32> {...}
    ```
  }];
}

def TccSchedule : Pass<"tcc-schedule", "func::FuncOp"> {
  let summary = "Order a graph's ops so that less is live at once";
  let description = [{
    Importers keep the order of the model's nodes, which often computes a
    value long before it is needed (attention's V projection, say, before
    the scores that wait for it), holding its buffer across every op in
    between. Each side-effect-free op whose operands all stay live until
    its first user anyway (function arguments, constants, or values used
    there or later) moves down to just before that user: its results live
    for less time and no other value lives longer. Runs after fusion, on
    the kernels; ops are visited from the last up, so a chain sinks
    together.

    Before:
    ```mlir
    %v = tcc.matmul %x, %wv : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %s = tcc.exp %x : tensor<8x8xf32>
    %o = tcc.matmul %s, %v : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    ```
    After:
    ```mlir
    %s = tcc.exp %x : tensor<8x8xf32>
    %v = tcc.matmul %x, %wv : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %o = tcc.matmul %s, %v : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    ```
  }];
}

def TccCopyResults : Pass<"tcc-copy-results", "func::FuncOp"> {
  let summary = "Give every function result its own computed tensor";
  let description = [{
    Each result of the graph becomes a caller-provided output buffer at
    bufferization. A result the function does not compute itself (an
    argument, a constant, a value returned more than once) gets an explicit
    `linalg.copy` into a new tensor, so each output buffer is written exactly
    once. Its tensor arguments are marked `bufferization.writable = false`:
    the caller's inputs are never written (an update in place of one, such
    as a loop carrying it, is made on a copy). Runs on linalg/tensor IR,
    right before bufferization.

    Before:
    ```mlir
    return %arg0, %arg0 : tensor<4xf32>, tensor<4xf32>
    ```
    After (with `{bufferization.writable = false}` on `%arg0`):
    ```mlir
    %e0 = tensor.empty() : tensor<4xf32>
    %0 = linalg.copy ins(%arg0 : tensor<4xf32>) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
    %e1 = tensor.empty() : tensor<4xf32>
    %1 = linalg.copy ins(%arg0 : tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
    return %0, %1 : tensor<4xf32>, tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TccConcatInPlace : Pass<"tcc-concat-in-place", "func::FuncOp"> {
  let summary = "Let the producers of a concatenation write into its slices";
  let description = [{
    A concatenation lowers to a chain of `tensor.insert_slice` ops into a
    `tensor.empty`, which bufferizes to one copy per input. Runs after
    `tcc-split-empty-tensors`, right before bufferization: each input made
    by a destination-style op (a `linalg` op or a `tcc.ukernel`) into a
    `tensor.empty` of its own, used nowhere else, is computed into an
    `extract_slice` of the concatenation instead, and its insert then
    bufferizes to a copy of a buffer onto itself, which folds away. The
    inserts are put in the order of their inputs' producers, each right
    after its producer, so that the concatenation so far dominates the next
    producer. A `tcc.ukernel` writes dense buffers, so it only takes a slice
    that is contiguous: every dimension before the axis of size 1 (a batch
    of one, concatenated along channels). A concatenation that is a leading slice of a larger one
    along one axis, with the same pieces at the same places (a dense
    block's layers), becomes an `extract_slice` of the larger one's chain
    right after its last piece is in; its pieces, then read by one insert
    each, are computed in place too.

    Before:
    ```mlir
    %e0 = tensor.empty() : tensor<1x2x4xf32>
    %a = linalg.exp ins(%x : tensor<1x2x4xf32>) outs(%e0 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
    %e1 = tensor.empty() : tensor<1x2x4xf32>
    %b = linalg.negf ins(%y : tensor<1x2x4xf32>) outs(%e1 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
    %d = tensor.empty() : tensor<1x4x4xf32>
    %i0 = tensor.insert_slice %a into %d[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x4x4xf32>
    %i1 = tensor.insert_slice %b into %i0[0, 2, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x4x4xf32>
    ```
    After:
    ```mlir
    %d = tensor.empty() : tensor<1x4x4xf32>
    %s0 = tensor.extract_slice %d[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<1x4x4xf32> to tensor<1x2x4xf32>
    %a = linalg.exp ins(%x : tensor<1x2x4xf32>) outs(%s0 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
    %i0 = tensor.insert_slice %a into %d[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x4x4xf32>
    %s1 = tensor.extract_slice %i0[0, 2, 0] [1, 2, 4] [1, 1, 1] : tensor<1x4x4xf32> to tensor<1x2x4xf32>
    %b = linalg.negf ins(%y : tensor<1x2x4xf32>) outs(%s1 : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
    %i1 = tensor.insert_slice %b into %i0[0, 2, 0] [1, 2, 4] [1, 1, 1] : tensor<1x2x4xf32> into tensor<1x4x4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def TccSplitEmptyTensors : Pass<"tcc-split-empty-tensors", "func::FuncOp"> {
  let summary = "Give every destination its own tensor.empty";
  let description = [{
    CSE merges identical `tensor.empty` ops, and bufferization then lets the
    ops writing into one such tensor share its buffer whenever the earlier
    result is dead, a reuse decided by use order alone. Runs right before
    bufferization and gives each use of a `tensor.empty` a copy of its own,
    so that every intermediate tensor gets a buffer of its own and
    `tcc-plan-memory` alone decides, by liveness, which share memory (and
    `tcc --memory-report` lists every tensor).

    Before:
    ```mlir
    %e = tensor.empty() : tensor<4xf32>
    %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %b = linalg.negf ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    ```
    After:
    ```mlir
    %e = tensor.empty() : tensor<4xf32>
    %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %e1 = tensor.empty() : tensor<4xf32>
    %b = linalg.negf ins(%a : tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def TccPlanMemory : Pass<"tcc-plan-memory", "ModuleOp"> {
  let summary = "Place every intermediate buffer at a fixed offset in one arena";
  let description = [{
    Runs after bufferization, while `@main` (the graph an artifact exports)
    is still a straight sequence of ops on memrefs. Every statically shaped
    `memref.alloc` in its body becomes a `memref.view` into one workspace argument
    (appended to the function's arguments), at an offset chosen at compile
    time: a buffer lives from the first op that reads or writes it to the
    last (through views; neither the alloc nor a view touches memory, and
    bufferization places allocs well before their writers), and the
    buffers are packed greedily so that buffers alive at the same time never
    overlap (largest first and three other orders; the smallest arena wins).
    Graph inputs, outputs and constants are never placed in the arena.

    Before placing, buffers are reused in place:
    * a result computed into a buffer and then copied into the caller's
      out-parameter (bufferization leaves such copies after loops) is
      computed straight into the out-parameter;
    * an elementwise op whose input buffer dies at that op (same type,
      identity maps) writes its output into that buffer;
    * a rows loop (`tcc.rows_loop`: softmax, layer norm) stores its result
      rows over an input that dies there when it reads that input only
      through the window it stores and only before the store;
    * a `sgemm` or `conv2d` micro-kernel call whose residual buffer dies
      there writes into it, with `TCC_UK_ACCUMULATE` instead of the
      residual (`C = A*B + C + bias`).

    The plan is recorded on the module: `tcc.workspace_bytes` (the arena
    size) and `tcc.memory_plan` (one entry per buffer, plus the totals,
    `naive_bytes` counting the buffers merged in place too) for
    `tcc --memory-report`.

    Before:
    ```mlir
    func.func @main(%x: memref<64xf32>, %y: memref<64xf32>) {
      %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
      linalg.exp ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
      linalg.negf ins(%a : memref<64xf32>) outs(%y : memref<64xf32>)
      memref.dealloc %a : memref<64xf32>
      return
    }
    ```
    After:
    ```mlir
    func.func @main(%x: memref<64xf32>, %y: memref<64xf32>, %ws: memref<256xi8>) {
      %c0 = arith.constant 0 : index
      %a = memref.view %ws[%c0][] : memref<256xi8> to memref<64xf32>
      ...
    }
    ```
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Byte alignment of every buffer in the arena">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TccInstrumentKernels : Pass<"tcc-instrument-kernels", "ModuleOp"> {
  let summary = "Time every kernel of @main (or of each slab of a dynamic batch) through the host's profiler";
  let description = [{
    For `tcc --profile`. Runs on memrefs, after the micro-kernel calls are
    made: every top-level op of `@main` that touches memory (a kernel call,
    a loop nest, a rows loop, a copy) is bracketed by calls of
    `tcc_ukabi_profile(kernel, name, end)` (runtime/ukernels/compiler_abi.cc),
    `kernel` its index, `name` the address of a NUL-terminated constant
    naming the model nodes its location names (or its op), `end` 0 before it
    and 1 after. The kernels' object passes them to the host's `profile`
    callback, if the caller gave one ([abi.md](../abi.md)); views, constants
    and allocations are not kernels.

    Before:
    ```mlir
    linalg.exp ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) loc("e (Exp)")
    ```
    After:
    ```mlir
    memref.global "private" constant @__tcc_kernel_name_0 : memref<8xi8> = dense<[101, 32, 40, 69, 120, 112, 41, 0]>
    ...
    %n = memref.get_global @__tcc_kernel_name_0 : memref<8xi8>
    %p = memref.extract_aligned_pointer_as_index %n : memref<8xi8> -> index
    %a = arith.index_cast %p : index to i64
    call @tcc_ukabi_profile(%c0_i64, %a, %c0_i64) : (i64, i64, i64) -> ()
    linalg.exp ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
    call @tcc_ukabi_profile(%c0_i64, %a, %c1_i64) : (i64, i64, i64) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TccParallelizeLoops : Pass<"tcc-parallelize-loops", "func::FuncOp"> {
  let summary = "Lower big linalg ops on buffers to loops with a parallel outer loop";
  let description = [{
    Runs after memory planning, in place of `convert-linalg-to-loops` for
    the linalg ops worth splitting across threads: those on buffers with
    static loop ranges and at least `min-iterations` iterations in all. Such
    an op becomes its loop nest with one loop turned into an `scf.parallel`:
    the first of its leading parallel loops that runs at least
    `min-trip-count` times (so the batch dimension of 1 of an NCHW tensor is
    skipped for the channels). The inner loops stay sequential, so LLVM
    still vectorizes the innermost one. Smaller ops, reductions over their
    outermost dimension and dynamic shapes are left to
    `convert-linalg-to-loops`. First, every linalg.generic's trailing
    reduction loops that are contiguous in all its operands become one (the
    operands collapsed with `memref.collapse_shape`), so that the innermost
    loop of a pooling-like sum is long enough to vectorize; and an
    elementwise linalg.generic inside a "rows" loop whose operands each
    cover its loops of more than one trip in order (a row slice) or none of
    them (a broadcast scalar) becomes one loop over the row's contiguous
    elements (rank-reducing subviews, then one collapse), so that a row of
    [1, 1, 56, 56] is not an unrolled loop of 56 inside one that LLVM
    vectorizes with gathers.
    `convert-scf-to-openmp` then makes each
    `scf.parallel` a worksharing loop, which the artifact runs on the
    caller's thread pool (runtime/ukernels/compiler_abi.cc).

    The loop over the rows of a "rows" fusion group (an `scf.for` marked
    `tcc.rows_loop`: softmax, layer norm) becomes an `scf.parallel` too when
    it runs at least `min-trip-count` times over at least `min-iterations`
    elements. Its temporaries, which buffer hoisting moved out of the loop
    and the memory plan placed once, become `memref.alloca`s in the body
    (at most `max-private-bytes` in all; a view that CSE made one with
    another rows loop's temporary stays for that loop), so that each thread has
    its own; `tcc-inline-alloca-scopes` then allocates them once per thread.

    Before:
    ```mlir
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<256x512xf32>) outs(%y : memref<256x512xf32>) { ... }
    ```
    After:
    ```mlir
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      scf.for %j = %c0 to %c512 step %c1 {
        %v = memref.load %x[%i, %j] : memref<256x512xf32>
        ...
      }
    }
    ```
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"32768",
           "Iterations an op needs in all to be split across threads">,
    Option<"minTripCount", "min-trip-count", "int64_t", /*default=*/"4",
           "Iterations the parallel loop itself needs">,
    Option<"maxPrivateBytes", "max-private-bytes", "int64_t",
           /*default=*/"65536",
           "Bytes of temporaries a rows loop may give each thread">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def TccPromoteAccumulators : Pass<"tcc-promote-accumulators", "func::FuncOp"> {
  let summary = "Keep a loop's accumulator in a register instead of memory";
  let description = [{
    Runs on the loops that `convert-linalg-to-loops` and
    `tcc-parallelize-loops` made of linalg ops on buffers. A reduction's
    loop nest loads the output element, combines it with an input element
    and stores it back at every iteration; LLVM would keep it in a register
    if it knew the output shares no memory with the inputs, but both are
    views of the arena (or arguments) to it. This pass knows: arena views at
    constant offsets whose byte ranges do not meet, distinct function
    arguments (the ABI's inputs, outputs and arena never overlap an output
    or the arena) and allocations are distinct memory.

    An `scf.for` of at least one iteration whose body loads an element at
    indices fixed in the loop and stores to the same element, with no other
    access in the loop to memory that may overlap it and nothing else with
    memory effects, carries the element as an iteration argument instead:
    loaded once before the loop, stored once after. Innermost loops first,
    so the element leaves every loop of the reduction; the innermost loop is
    then a chain LLVM vectorizes (float sums carry `reassoc`).

    Before:
    ```mlir
    scf.for %j = %c0 to %c196 step %c1 {
      %x = memref.load %in[%i, %j] : memref<64x196xf32>
      %a = memref.load %acc[%i] : memref<64xf32>
      %s = arith.addf %a, %x fastmath<reassoc> : f32
      memref.store %s, %acc[%i] : memref<64xf32>
    }
    ```
    After:
    ```mlir
    %a0 = memref.load %acc[%i] : memref<64xf32>
    %r = scf.for %j = %c0 to %c196 step %c1 iter_args(%a = %a0) -> (f32) {
      %x = memref.load %in[%i, %j] : memref<64x196xf32>
      %s = arith.addf %a, %x fastmath<reassoc> : f32
      scf.yield %s : f32
    }
    memref.store %r, %acc[%i] : memref<64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TccMarkRowTemporaries : Pass<"tcc-mark-row-temporaries", "func::FuncOp"> {
  let summary = "Mark the buffers allocated inside rows loops";
  let description = [{
    Runs right after bufferization, before buffer hoisting moves
    allocations out of loops. Every `memref.alloc` inside an `scf.for`
    marked `tcc.rows_loop` (the loop over the rows of a "rows" fusion
    group) is a temporary of one row: it gets the unit attribute
    `tcc.row_temporary`, which `tcc-plan-memory` keeps on the arena view it
    becomes, so that `tcc-parallelize-loops` can give each thread its own
    copy when it runs the rows in parallel.

    Before:
    ```mlir
    scf.for %i = %c0 to %c128 step %c1 {
      %t = memref.alloc() : memref<1x768xf32>
      ...
    } {tcc.rows_loop}
    ```
    After:
    ```mlir
    scf.for %i = %c0 to %c128 step %c1 {
      %t = memref.alloc() {tcc.row_temporary} : memref<1x768xf32>
      ...
    } {tcc.rows_loop}
    ```
  }];
}

def TccInlineAllocaScopes : Pass<"tcc-inline-alloca-scopes", "func::FuncOp"> {
  let summary = "Inline memref.alloca_scope regions of parallel loop bodies";
  let description = [{
    `convert-scf-to-openmp` wraps each parallel loop body in a
    `memref.alloca_scope`; once the loops inside are lowered to branches,
    such a scope holds several blocks, which it must not. A scope without a
    `memref.alloca` directly inside scopes nothing: its body is inlined into
    the parent block (a single-block body only, so this runs before
    `convert-scf-to-cf`). A scope inside an `omp.parallel` whose allocas all
    have static shapes (the private buffers of a rows loop) is inlined as
    well, its allocas moved to the top of the `omp.parallel` region, which
    each thread runs once: one buffer per thread instead of one per
    iteration. Any other scope with an alloca stays.

    Before:
    ```mlir
    memref.alloca_scope {
      scf.for %j = %c0 to %c8 step %c1 { ... }
    }
    ```
    After:
    ```mlir
    scf.for %j = %c0 to %c8 step %c1 { ... }
    ```
  }];
}

def TccPadDynamicDims : Pass<"tcc-pad-dynamic-dims", "ModuleOp"> {
  let summary = "Compile a dynamic dimension whose elements interact as "
                "padded buckets";
  let description = [{
    A dynamic dimension that is not only the leading (batch) dimension of
    the inputs -- a transformer's sequence length, which attention
    contracts and softmax normalizes over -- runs padded: `@main` is
    replaced by copies at bucket sizes N (`@main_pad128`, `@main_pad112`,
    ..., largest first: powers of two from `min-bucket` (or the
    dimension's lower bound) up to its upper bound with `bucket-steps` - 1
    sizes evenly between each two, and the bound itself),
    each static, each taking the run's size n as one more input (a
    `tensor<i64>` named after the dimension). A run of n elements calls the
    smallest bucket N >= n with its inputs padded to N and keeps the first
    n of each output.

    The pass follows where each value holds the dimension: a dimension of
    its own, or merged by a reshape with static ones around it (an index i
    is padding when (i / inner) % N >= n). Where an op would read padding
    into valid elements, its operand is masked with the op's neutral
    value: 0 before a sum, a cumulative sum run backwards or either side of
    a contraction over the dimension; -inf before a max, an argmax or a
    softmax along it; 1 before a product. A mean over the dimension becomes
    the masked sum divided by n times the rest of its elements. The
    inputs' padding holds zeros (the artifact fills it), and a softmax over
    the dimension leaves zeros in it, so a contraction of either
    (attention's probabilities times values) is not masked again. Elementwise ops, contractions over other dimensions, layer norm
    over other axes, transposes, gathers indexed along it and slices of
    all of it or of a prefix every run holds leave the padding as garbage
    that no valid element reads.

    A batch beside it (a dynamic dimension that only leads the inputs)
    stays dynamic in the buckets, for tcc-specialize-batch to make slabs of
    each; the pass follows it too (at a probe size through reshapes), and
    where a dimension holds both (`[S*B, D]`) masks it by splitting it into
    `[S, B]`. A matmul by a broadcast that only stacks a matrix multiplies
    by the matrix first. Positions of dynamic size (`tcc.iota`) and
    broadcasts to one take the digit of what they meet, and become each
    bucket's constants.

    Sizes the graph computes (`tcc.trim` of a value at its bound, e.g.
    NonZero's count, or one per dimension of a Pad by run-time pads) are
    compiled as one bucket, each size at its bound, with n the count: the
    trimmed value is the untrimmed one, masked against each dimension's
    own count where it is read, and the bucket returns the counts last, in
    order (`tcc.padded` then says `computed`, and lists their names,
    bounds and which of them sizes each output dimension).

    It records `tcc.padded` on the module: the dimension's name, its
    bounds (`tcc.dim_bounds`; an upper bound of at most `max-size` is
    required), the buckets, and for each input and output the dimensions
    the symbol sizes. An op that mixes padding into valid elements in a
    way the pass cannot mask (a concatenation, slice, convolution or layer
    norm along the dimension; a reshape across it) is an error naming the
    op. A graph without such a dimension is left as it is.

    Before:
    ```mlir
    func.func @main(%x: tensor<?x4xf32> {tcc.dims = ["seq", ""]})
        -> tensor<4xf32> {
      %r = tcc.reduce_sum %x axes = [0] : tensor<?x4xf32> -> tensor<4xf32>
      return %r : tensor<4xf32>
    }
    ```
    After (bounds 1..16, `min-bucket=16`):
    ```mlir
    func.func @main_pad16(%x: tensor<16x4xf32>, %n: tensor<i64>)
        -> tensor<4xf32> {
      %pos = tcc.constant dense<[[0], [1], ..., [15]]> : tensor<16x1xi64>
      %valid = tcc.cmp lt, %pos, %n : ... -> tensor<16x1xi1>
      %zero = tcc.constant dense<0.0> : tensor<f32>
      %m = tcc.select %valid, %x, %zero : ... -> tensor<16x4xf32>
      %r = tcc.reduce_sum %m axes = [0] : tensor<16x4xf32> -> tensor<4xf32>
      return %r : tensor<4xf32>
    }
    ```
  }];
  let options = [
    Option<"minBucket", "min-bucket", "int64_t", /*default=*/"16",
           "The smallest bucket (a run below it pads up to it)">,
    Option<"maxSize", "max-size", "int64_t", /*default=*/"65536",
           "The largest upper bound a padded dimension may have">,
    Option<"bucketSteps", "bucket-steps", "int64_t", /*default=*/"0",
           "Buckets per doubling of the size (0: 4, or 2 beside a batch)">,
  ];
}

def TccSpecializeBatch : Pass<"tcc-specialize-batch", "ModuleOp"> {
  let summary = "Compile a dynamic batch dimension as slabs of fixed size";
  let description = [{
    Where `@main`'s inputs have one dynamic dimension, a leading one (the
    batch), and no op mixes the rows of the batch (no reduction, softmax,
    concatenation or gather along it; contractions only with unbatched
    weights or batch against batch), each row of every result depends on
    the same row of the inputs alone, so any batch is the concatenation of
    smaller ones. Inside the graph the batch may move to any dimension (a
    transpose; attention's [S, B, D] layout), each value's one dynamic
    dimension; a reshape may merge whole rows into it or split them back
    ([B, S, D] -> [B*S, D] -> [B, S, D]; [S, B, D] -> [S*B, D]): the pass
    tracks how the dimension holds the batch (blocks of it, rows per batch
    row), which the operands of one op must agree on and the inputs and
    outputs must have leading, one row a batch row. The pass checks that op by op and
    replaces `@main` by copies at fixed batch sizes: `@main_chunk8`,
    `@main_chunk4`, `@main_chunk2`, `@main_chunk1` (powers of two from
    `max-chunk` down, none above the dimension's upper bound); the buckets
    of a padded dimension (`@main_pad128`, tcc-pad-dynamic-dims) with a
    batch beside it become `@main_pad128_chunk8`, ... . The artifact
    runs n rows as the fewest such slabs (n = 13: 8 + 4 + 1). It records
    `tcc.batch` on the module: the dimension's name (the importer's
    `tcc.dims` argument attribute, else `batch`), its bounds (from the
    module's `tcc.dim_bounds` = {NAME = array<i64: MIN, MAX>}, default 1 to
    2^31-1), the slab sizes, and which inputs and outputs are batched.

    An op that mixes rows, a value with several dynamic dimensions, or an
    input or output whose dynamic dimension is not leading, is an error
    naming the op. A static `@main` is left as it is.

    Before:
    ```mlir
    func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %r = tcc.relu %x : tensor<?x4xf32>
      return %r : tensor<?x4xf32>
    }
    ```
    After (`max-chunk=2`):
    ```mlir
    module attributes {tcc.batch = {chunks = array<i64: 2, 1>, inputs = [true],
                                    max = 2147483647, min = 1, name = "batch",
                                    outputs = [true]}} {
      func.func @main_chunk2(%x: tensor<2x4xf32>) -> tensor<2x4xf32> { ... }
      func.func @main_chunk1(%x: tensor<1x4xf32>) -> tensor<1x4xf32> { ... }
    }
    ```
  }];
  let options = [
    Option<"maxChunk", "max-chunk", "int64_t", /*default=*/"8",
           "The largest slab, in rows (a power of two)">,
  ];
}

#endif // TCC_TRANSFORMS_PASSES_TD
