//===- Attention.h - attention's softmax, as fusion leaves it -*- C++ -*-===//
//
// What tcc-fuse-attention (which merges an attention's kernels into one
// group) and the lowering of such a group to the attention micro-kernel
// both recognise: the scaled, masked softmax between the two products.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_TRANSFORMS_ATTENTION_H
#define TCC_COMPILER_TRANSFORMS_ATTENTION_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::tcc {

/// softmax(x) over the last axis of the scores, where x is the scores
///   divided or multiplied by `scale` (a scalar), if it is set, then
///   plus `mask`, or select(`mask`, `fill`, .) with a boolean mask,
/// as tcc-decompose writes softmax: m = reduce_max(x), e = exp(x - m),
/// e / reduce_sum(e), both reductions over the last axis with keepdims.
/// Every intermediate is used only inside the chain.
struct SoftmaxChain {
  Value scale; ///< null: none
  bool divide = false;
  Value mask; ///< null: none
  Value fill; ///< the select's fill (a boolean mask), else null
  Operation *result = nullptr;
  SmallVector<Operation *> ops;
};
std::optional<SoftmaxChain> matchSoftmaxChain(Value scores);

/// `v` without a scale: the left operand of a multiply by a one-element
/// tensor (`scalar`, set) that keeps v's shape, else `v` (scalar null).
/// Exporters that scale Q and K apart (each by the fourth root of d) leave
/// such multiplies before the scores' product.
Value matchScaledOperand(Value v, Value &scalar);

/// The mask's strides over the scores [batch..., sq, sk] when the kernel
/// can read it as it lies (dense, its shape aligned at the trailing
/// dimensions): the key dimension whole; the query dimension whole (ld = sk)
/// or 1 (ld = 0, one row for every query); the batch dimensions all 1
/// (stride 0) or the scores' own (stride = the mask's matrix). False otherwise.
bool attentionMaskStrides(ArrayRef<int64_t> mask, ArrayRef<int64_t> scores,
                          int64_t &ld, int64_t &stride);

} // namespace mlir::tcc

#endif // TCC_COMPILER_TRANSFORMS_ATTENTION_H
