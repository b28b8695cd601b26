//===- Epilogue.h - what a contraction kernel can do after the product ----===//
//
// The micro-kernels finish each output element with
//   clamp(product + bias + residual)
// (runtime/ukernels/ukernels.h). This recognizes the chain of tcc ops after
// a matmul or convolution that such an epilogue computes, so that fusion
// (tcc-fuse) and the lowering agree on what fits.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_TRANSFORMS_EPILOGUE_H
#define TCC_COMPILER_TRANSFORMS_EPILOGUE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <limits>

namespace mlir::tcc {

/// An activation the kernels apply after the bias and residual, before the
/// clamp (the values are runtime/ukernels' TCC_UK_ACT_*).
enum class Activation : int32_t {
  None = 0,
  Gelu = 1,
  GeluTanh = 2,
  Silu = 3,      ///< x * sigmoid(x)
  HardSwish = 4, ///< x * clamp(x * (1/6) + 1/2, 0, 1)
};

struct Epilogue {
  Value bias;     ///< Per output channel (conv) or column (matmul).
  Value residual; ///< Shaped like the result.
  Activation activation = Activation::None;
  bool hasClamp = false;
  float clampMin = -std::numeric_limits<float>::infinity();
  float clampMax = std::numeric_limits<float>::infinity();
};

/// What a convolution's kernel can do to its input as it reads it
/// (runtime/ukernels: tcc_uk_conv2d_params_t's prologue): per input channel
/// x * scale + shift, then relu, each part optional (a BatchNorm and ReLU
/// before a 1x1).
struct Prologue {
  Value input; ///< What the chain starts from.
  Value scale; ///< [C, 1, 1] or [1, C, 1, 1]; null: none.
  Value shift; ///< Likewise.
  bool relu = false;
};

/// The prologue before `conv`, an unpadded stride-1 1x1 f32 convolution
/// with one group: its input made by relu(add(mul(x, scale), shift)), any
/// of the three absent, each op's result used only by the next one (the
/// last by `conv`) and shaped as x. The ops go to `chain` in order; null
/// when there is none.
std::optional<Prologue> matchPrologue(Operation *conv,
                                      SmallVectorImpl<Operation *> &chain);

/// Follows single uses from `contraction` (a tcc.conv or tcc.matmul on f32)
/// through adds of a bias or a residual, then an activation (GELU, or a
/// value times a gate of itself: SiLU's x * sigmoid(x), hard swish's x *
/// clamp(x / 6 + 1/2, 0, 1), whose two uses of x are the only ones), and
/// then at most one relu or clamp, collecting the ops it takes into
/// `chain` (the last one's result is the epilogue's). A convolution that
/// already has a bias takes no other. Inside a tcc.fused body, the gate's
/// constants are seen through the body's arguments.
Epilogue matchEpilogue(Operation *contraction,
                       SmallVectorImpl<Operation *> &chain);

/// The 1x1 convolution that a depthwise convolution's kernel can compute
/// in the same pass (runtime/ukernels: tcc_uk_dwpw_conv2d_nchw): `dw` is an
/// f32 convolution with one filter per input channel, `dwEpilogue` and
/// `dwChain` what matchEpilogue found after it (a bias and a clamp at
/// most: no residual), the last value has a single use, and that use is
/// the input of an unpadded stride-1 1x1 f32 convolution with one group.
/// Null otherwise.
Operation *matchPointwiseAfterDepthwise(Operation *dw,
                                        const Epilogue &dwEpilogue,
                                        ArrayRef<Operation *> dwChain);

/// The 2-D max pooling of dilation 1 that alone reads the result of `conv`,
/// an f32 convolution with one group, after `chain` (what matchEpilogue
/// found: a bias and a clamp at most, which commute with max, so a kernel
/// can pool first); null otherwise. The kernels pool a small CNN's 2x2 in
/// registers and a stem's window by bands of rows; others lower to the
/// convolution's call and the pooling's.
Operation *matchMaxPoolAfter(Operation *conv, const Epilogue &epilogue,
                             ArrayRef<Operation *> chain);

/// The depthwise convolution that a convolution's kernel can compute with
/// it (runtime/ukernels: tcc_uk_block_conv2d_nchw, which also takes the
/// depthwise convolution's matchPointwiseAfterDepthwise; expanding 1x1
/// convolutions and a small-channel stem before a depthwise one): `exp` is an
/// f32 convolution with one group, `expEpilogue` and `expChain` what
/// matchEpilogue found after it (no residual), the last value has a single use,
/// and that use is the input of an f32 convolution with one filter per channel.
/// Null otherwise.
Operation *matchDepthwiseAfterExpansion(Operation *exp,
                                        const Epilogue &expEpilogue,
                                        ArrayRef<Operation *> expChain);

/// A batch of matrices as the matmul kernel addresses them: element
/// (b, i, j) of `value` is element b*batchStride + i*rowStride + j*colStride
/// of the contiguous tensor `base`, where one of the two inner strides is 1.
/// `ops` are the transposes and reshapes between `base` and `value`, which
/// the kernel makes unnecessary (first to last).
struct MatrixView {
  Value base;
  int64_t batch = 1, rows = 0, cols = 0;
  int64_t batchStride = 0, rowStride = 0, colStride = 1;
  SmallVector<Operation *> ops;
};

/// Describes `value` (rank >= 2: batch dimensions, rows, columns) as a view
/// of the tensor that the single-use transposes and reshapes producing it
/// re-arrange; without such ops, or when their composition is not a strided
/// view, `value` itself.
MatrixView matchMatrixView(Value value);

/// `value` itself as a contiguous batch of matrices.
MatrixView plainMatrixView(Value value);

/// The same for a matmul's result: `result` then the single-use transposes
/// and reshapes after it, described as a strided view into the last of
/// them (the kernel then writes straight into its layout). Only views with
/// contiguous columns qualify; otherwise `result` itself.
MatrixView matchResultView(Value result);

} // namespace mlir::tcc

#endif // TCC_COMPILER_TRANSFORMS_EPILOGUE_H
