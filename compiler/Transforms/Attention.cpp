//===- Attention.cpp - attention's softmax as the graph passes leave it ---===//

#include "compiler/Transforms/Attention.h"

#include "dialects/Tcc/IR/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

/// The single user of `v`, if it has exactly one.
static Operation *onlyUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

static bool isScalar(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getNumElements() == 1;
}

/// A keepdims reduction over the last axis only.
template <typename ReduceOp> static bool overLastAxis(ReduceOp op) {
  ArrayRef<int64_t> axes = op.getAxes();
  return op.getKeepdims() && axes.size() == 1 &&
         axes[0] == op.getInput().getType().getRank() - 1;
}

std::optional<SoftmaxChain> mlir::tcc::matchSoftmaxChain(Value scores) {
  SoftmaxChain chain;
  auto scoresType = dyn_cast<RankedTensorType>(scores.getType());
  if (!scoresType || scoresType.getRank() < 2)
    return std::nullopt;
  Value x = scores;
  auto sameShape = [&](Operation *op) {
    return op->getNumResults() == 1 && op->getResult(0).getType() == scoresType;
  };
  // The scale: scores / c or scores * c.
  if (Operation *user = onlyUser(x);
      user && isa<DivOp, MulOp>(user) && sameShape(user) &&
      user->getOperand(0) == x && isScalar(user->getOperand(1))) {
    chain.scale = user->getOperand(1);
    chain.divide = isa<DivOp>(user);
    chain.ops.push_back(user);
    x = user->getResult(0);
  }
  // The mask: x + mask (either side), or select(mask, fill, x).
  if (Operation *user = onlyUser(x); user && sameShape(user)) {
    if (auto add = dyn_cast<AddOp>(user)) {
      chain.mask = add.getLhs() == x ? add.getRhs() : add.getLhs();
      chain.ops.push_back(add);
      x = add.getResult();
    } else if (auto select = dyn_cast<SelectOp>(user);
               select && select.getOnFalse() == x &&
               isScalar(select.getOnTrue())) {
      chain.mask = select.getCondition();
      chain.fill = select.getOnTrue();
      chain.ops.push_back(select);
      x = select.getResult();
    }
  }
  // max, x - max, exp, sum, exp / sum: x feeds the max and the subtraction.
  ReduceMaxOp max;
  SubOp sub;
  for (Operation *user : x.getUsers()) {
    if (auto m = dyn_cast<ReduceMaxOp>(user); m && !max)
      max = m;
    else if (auto s = dyn_cast<SubOp>(user); s && !sub)
      sub = s;
    else
      return std::nullopt;
  }
  if (!max || !sub || !overLastAxis(max) || sub.getLhs() != x ||
      sub.getRhs() != max.getResult() || !max->hasOneUse() || !sameShape(sub))
    return std::nullopt;
  auto exp = dyn_cast_or_null<ExpOp>(onlyUser(sub.getResult()));
  if (!exp)
    return std::nullopt;
  ReduceSumOp sum;
  DivOp div;
  for (Operation *user : exp.getResult().getUsers()) {
    if (auto s = dyn_cast<ReduceSumOp>(user); s && !sum)
      sum = s;
    else if (auto d = dyn_cast<DivOp>(user); d && !div)
      div = d;
    else
      return std::nullopt;
  }
  if (!sum || !div || !overLastAxis(sum) || div.getLhs() != exp.getResult() ||
      div.getRhs() != sum.getResult() || !sum->hasOneUse() || !sameShape(div))
    return std::nullopt;
  chain.ops.append({max, sub, exp, sum, div});
  chain.result = div;
  return chain;
}

bool mlir::tcc::attentionMaskStrides(ArrayRef<int64_t> mask,
                                     ArrayRef<int64_t> scores, int64_t &ld,
                                     int64_t &stride) {
  const size_t rank = scores.size();
  if (mask.size() > rank || mask.empty() || mask.back() != scores.back())
    return false;
  const int64_t sq = scores[rank - 2], sk = scores[rank - 1];
  const int64_t maskRows = mask.size() >= 2 ? mask[mask.size() - 2] : 1;
  if (maskRows != sq && maskRows != 1)
    return false;
  ld = maskRows == 1 ? 0 : sk;
  // The batch dimensions: every one 1, or every one the scores'.
  bool ones = true, same = true;
  for (size_t i = 0; i + 2 < rank; ++i) {
    const size_t m = i + mask.size(); // mask dim i - (rank - mask.size())
    const int64_t dim = m >= rank ? mask[m - rank] : 1;
    ones &= dim == 1;
    same &= dim == scores[i];
  }
  if (!ones && !same)
    return false;
  stride = ones ? 0 : maskRows * sk;
  return true;
}

Value mlir::tcc::matchScaledOperand(Value v, Value &scalar) {
  scalar = Value();
  auto mul = v.getDefiningOp<MulOp>();
  if (!mul || !mul->hasOneUse() || mul.getLhs().getType() != v.getType() ||
      !isScalar(mul.getRhs()))
    return v;
  scalar = mul.getRhs();
  return mul.getLhs();
}
