//===- MergeSiblingConvs.cpp - the tcc-merge-sibling-convs pass ----------===//
//
// 1x1 convolutions that read the same input, merged into one with their
// filters stacked: see the pass's description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Tcc/IR/TccConstants.h"
#include "dialects/Tcc/IR/TccOps.h"
#include "dialects/Tcc/IR/TccTraits.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCMERGESIBLINGCONVS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {
/// A convolution that can join a merge, and its activation.
struct Member {
  ConvOp conv;
  std::vector<float> weight, bias; // [F, C] and [F]
  /// The one op reading the convolution, when it is an activation of it
  /// alone (one operand, elementwise); the merged convolution gets one
  /// activation like it, before the split.
  Operation *act = nullptr;
};

/// Whether `op` is a pointwise convolution over a batch of one with
/// constant f32 weights (and bias): a GEMM of the filters by the input
/// plane, which stacking filters only makes taller. A batch of more would
/// leave each piece strided between images.
std::optional<Member> memberOf(ConvOp op) {
  auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
  auto w = dyn_cast<RankedTensorType>(op.getWeight().getType());
  if (!in || !w || !in.hasStaticShape() || !w.hasStaticShape() ||
      !in.getElementType().isF32() || in.getRank() < 3 ||
      in.getDimSize(0) != 1 || op.getGroups() != 1)
    return std::nullopt;
  for (int64_t d = 2; d < w.getRank(); ++d)
    if (w.getDimSize(d) != 1)
      return std::nullopt;
  if (llvm::any_of(op.getStrides(), [](int64_t s) { return s != 1; }) ||
      llvm::any_of(op.getPadding(), [](int64_t p) { return p != 0; }))
    return std::nullopt;
  Member m;
  m.conv = op;
  std::optional<std::vector<float>> weight = constantFloats(op.getWeight());
  if (!weight)
    return std::nullopt;
  m.weight = std::move(*weight);
  const int64_t filters = w.getDimSize(0);
  if (Value b = op.getBias()) {
    std::optional<std::vector<float>> bias = constantFloats(b);
    if (!bias || int64_t(bias->size()) != filters)
      return std::nullopt;
    m.bias = std::move(*bias);
  } else {
    m.bias.assign(filters, 0.0f);
  }
  if (op->hasOneUse()) {
    Operation *user = *op->getUsers().begin();
    if (user->hasTrait<tcc::OpTrait::BroadcastingElementwise>() &&
        user->getNumOperands() == 1 && user->getNumResults() == 1 &&
        user->getResult(0).getType() == op.getType())
      m.act = user;
  }
  return m;
}

/// What members must share to merge: the activation after them (its name
/// and attributes; none when a convolution is read otherwise).
bool sameTail(const Member &a, const Member &b) {
  if (!a.act || !b.act)
    return !a.act && !b.act;
  return a.act->getName() == b.act->getName() &&
         a.act->getAttrDictionary() == b.act->getAttrDictionary();
}

/// Replaces `group` (at least two members, in block order) by one
/// convolution of their stacked filters, its activation, and a split of its
/// result along the filters, one piece a member, right before the first
/// member.
void merge(ArrayRef<const Member *> group) {
  ConvOp first = group.front()->conv;
  OpBuilder b(first);
  Location loc = first.getLoc();
  auto inType = cast<RankedTensorType>(first.getInput().getType());
  auto wType = cast<RankedTensorType>(first.getWeight().getType());
  auto outType = cast<RankedTensorType>(first.getType());
  int64_t filters = 0;
  std::vector<float> weight, bias;
  SmallVector<Type> pieces;
  for (const Member *m : group) {
    ConvOp conv = m->conv;
    auto type = cast<RankedTensorType>(conv.getType());
    filters += type.getDimSize(1);
    weight.insert(weight.end(), m->weight.begin(), m->weight.end());
    bias.insert(bias.end(), m->bias.begin(), m->bias.end());
    pieces.push_back(type);
  }
  SmallVector<int64_t> wShape(wType.getShape()), outShape(outType.getShape());
  wShape[0] = filters;
  outShape[1] = filters;
  Type f32 = inType.getElementType();
  auto mergedWType = RankedTensorType::get(wShape, f32);
  auto mergedOutType = RankedTensorType::get(outShape, f32);
  Value w = b.create<ConstantOp>(
      loc, floatBlob(mergedWType, weight, "merged_weight"));
  Value bs = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get({filters}, f32),
                                  ArrayRef<float>(bias)));
  Value out = b.create<ConvOp>(loc, mergedOutType, first.getInput(), w, bs,
                               first.getStridesAttr(), first.getPaddingAttr(),
                               first.getDilationsAttr(), first.getGroupsAttr());
  if (Operation *act = group.front()->act) {
    OperationState state(act->getLoc(), act->getName());
    state.addOperands(out);
    state.addTypes(mergedOutType);
    state.addAttributes(act->getAttrs());
    out = b.create(state)->getResult(0);
  }
  auto split = b.create<SplitOp>(loc, pieces, out, b.getI64IntegerAttr(1));
  for (auto [m, piece] : llvm::zip(group, split.getResults())) {
    ConvOp conv = m->conv;
    if (m->act) {
      m->act->getResult(0).replaceAllUsesWith(piece);
      m->act->erase();
    } else {
      conv.getResult().replaceAllUsesWith(piece);
    }
    conv->erase();
  }
}

struct TccMergeSiblingConvsPass
    : mlir::tcc::impl::TccMergeSiblingConvsBase<TccMergeSiblingConvsPass> {
  void runOnOperation() override {
    // Candidates by input; the walk visits a block's ops in order, so each
    // input's members of one block are in block order.
    llvm::MapVector<Value, SmallVector<Member>> byInput;
    getOperation().walk([&](ConvOp op) {
      if (std::optional<Member> m = memberOf(op))
        byInput[op.getInput()].push_back(std::move(*m));
    });
    for (auto &[input, members] : byInput) {
      // Members of one block, with the same tail and the same dilations
      // (of a 1x1, only an attribute), merge; the first of each kind
      // gathers the rest.
      SmallVector<bool> taken(members.size(), false);
      for (size_t i = 0; i < members.size(); ++i) {
        if (taken[i])
          continue;
        SmallVector<const Member *> group = {&members[i]};
        for (size_t j = i + 1; j < members.size(); ++j)
          if (!taken[j] &&
              members[j].conv->getBlock() == members[i].conv->getBlock() &&
              members[j].conv.getDilations() ==
                  members[i].conv.getDilations() &&
              sameTail(members[i], members[j])) {
            group.push_back(&members[j]);
            taken[j] = true;
          }
        if (group.size() >= 2)
          merge(group);
      }
    }
  }
};
} // namespace
