//===- Epilogue.cpp - what a contraction kernel can do after the product --===//

#include "compiler/Transforms/Epilogue.h"

#include "dialects/Tcc/IR/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

/// `shape` as a bias of `result`: one value per channel (dimension 1) of a
/// convolution, or per column (last dimension) of a product.
static bool isBiasShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> result,
                        bool perChannel) {
  int64_t lead = result.size() - shape.size();
  if (lead < 0)
    return false;
  int64_t dim = perChannel ? 1 : result.size() - 1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    int64_t r = lead + i;
    if (d != (r == dim ? result[dim] : 1))
      return false;
  }
  return dim >= lead && result[dim] > 0;
}

/// The single value of a splat f32 constant, seen through the arguments of
/// a tcc.fused body (the group's inputs).
static std::optional<double> splatConstant(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto fused = dyn_cast<FusedOp>(arg.getOwner()->getParentOp()))
      v = fused.getInputs()[arg.getArgNumber()];
  auto constant = v.getDefiningOp<ConstantOp>();
  auto value = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                        : DenseElementsAttr();
  if (!value || !value.isSplat() || !value.getElementType().isF32())
    return std::nullopt;
  return value.getSplatValue<APFloat>().convertToDouble();
}

/// The other operand of a binary op that reads `v` once.
static Value otherOperand(Operation *op, Value v) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (lhs == rhs)
    return Value();
  return lhs == v ? rhs : lhs;
}

/// x * gate(x) where the gate is sigmoid(x) (SiLU) or clamp(x * (1/6) +
/// 1/2, 0, 1) (hard swish: ONNX's HardSwish, or HardSigmoid with those
/// constants, times x), x's only two uses being the gate's first op and
/// the product, each gate op used once: the activation, with the gate's
/// ops and then the product appended to `ops`; None otherwise.
static Activation matchGatedActivation(Value x,
                                       SmallVectorImpl<Operation *> &ops) {
  if (std::distance(x.use_begin(), x.use_end()) != 2)
    return Activation::None;
  Type type = x.getType();
  Block *block = x.getParentBlock();
  auto single = [&](Operation *op) {
    return op && op->getBlock() == block && op->getNumResults() == 1 &&
           op->getResult(0).getType() == type && op->getResult(0).hasOneUse();
  };
  for (Operation *user : x.getUsers()) {
    auto product = dyn_cast<MulOp>(user);
    if (!product || product.getType() != type || product->getBlock() != block)
      continue;
    Value gate = otherOperand(product, x);
    Operation *g = gate ? gate.getDefiningOp() : nullptr;
    if (!single(g))
      continue;
    if (auto sigmoid = dyn_cast<SigmoidOp>(g)) {
      if (sigmoid.getInput() != x)
        continue;
      ops.append({sigmoid, product});
      return Activation::Silu;
    }
    auto clamp = dyn_cast<ClampOp>(g);
    if (!clamp || !clamp.getMin() || !clamp.getMax() ||
        clamp.getMin()->convertToDouble() != 0.0 ||
        clamp.getMax()->convertToDouble() != 1.0)
      continue;
    auto add = clamp.getInput().getDefiningOp<AddOp>();
    if (!single(add))
      continue;
    Operation *scale = nullptr;
    std::optional<double> offset;
    for (Value v : {add.getLhs(), add.getRhs()}) {
      if (auto mul = v.getDefiningOp<MulOp>(); single(mul) && !scale)
        scale = mul;
      else
        offset = splatConstant(v);
    }
    if (!scale || !offset || *offset != 0.5)
      continue;
    Value factor = otherOperand(scale, x);
    std::optional<double> sixth = factor ? splatConstant(factor) : std::nullopt;
    if (!sixth || static_cast<float>(*sixth) != 1.0f / 6.0f)
      continue;
    ops.append({scale, add, clamp, product});
    return Activation::HardSwish;
  }
  return Activation::None;
}

Epilogue mlir::tcc::matchEpilogue(Operation *contraction,
                                  SmallVectorImpl<Operation *> &chain) {
  Epilogue e;
  auto conv = dyn_cast<ConvOp>(contraction);
  bool biasTaken = conv && conv.getBias();
  Value cur = contraction->getResult(0);
  auto type = cast<RankedTensorType>(cur.getType());
  while (true) {
    if (e.activation == Activation::None && !e.hasClamp) {
      SmallVector<Operation *> gated;
      if (Activation act = matchGatedActivation(cur, gated);
          act != Activation::None) {
        e.activation = act;
        chain.append(gated);
        cur = gated.back()->getResult(0);
        continue;
      }
    }
    if (!cur.hasOneUse())
      break;
    Operation *user = *cur.getUsers().begin();
    if (user->getBlock() != contraction->getBlock() || e.hasClamp)
      break;
    if (auto add = dyn_cast<AddOp>(user)) {
      if (e.activation != Activation::None)
        break; // The kernels add before the activation.
      Value other = add.getLhs() == cur ? add.getRhs() : add.getLhs();
      auto otherType = cast<RankedTensorType>(other.getType());
      if (other == cur || add.getType() != type)
        break;
      if (otherType == type && !e.residual) {
        e.residual = other;
      } else if (!biasTaken &&
                 isBiasShape(otherType.getShape(), type.getShape(),
                             /*perChannel=*/conv != nullptr)) {
        e.bias = other;
        biasTaken = true;
      } else {
        break;
      }
    } else if (auto gelu = dyn_cast<GeluOp>(user)) {
      if (e.activation != Activation::None)
        break;
      e.activation = gelu.getApproximate() == GeluApproximation::tanh
                         ? Activation::GeluTanh
                         : Activation::Gelu;
    } else if (isa<ReluOp>(user)) {
      e.hasClamp = true;
      e.clampMin = 0;
    } else if (auto clamp = dyn_cast<ClampOp>(user)) {
      e.hasClamp = true;
      if (clamp.getMin())
        e.clampMin = static_cast<float>(clamp.getMin()->convertToDouble());
      if (clamp.getMax())
        e.clampMax = static_cast<float>(clamp.getMax()->convertToDouble());
    } else {
      break;
    }
    chain.push_back(user);
    cur = user->getResult(0);
  }
  return e;
}

static bool isStaticF32Rank4(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getRank() == 4 &&
         t.getElementType().isF32();
}

/// Whether `conv` is an f32 convolution of static rank-4 shapes with one
/// filter per input channel.
static bool isDepthwise(ConvOp conv) {
  if (!isStaticF32Rank4(conv.getInput()) || !isStaticF32Rank4(conv.getResult()))
    return false;
  int64_t channels = conv.getInput().getType().getDimSize(1);
  return channels >= 2 && conv.getGroups() == uint64_t(channels) &&
         conv.getType().getDimSize(1) == channels;
}

/// Whether `conv` is an f32 convolution with one group, a static weight
/// and a ranked bias, if any.
static bool isDense(ConvOp conv) {
  auto weight = dyn_cast<RankedTensorType>(conv.getWeight().getType());
  return isStaticF32Rank4(conv.getResult()) && conv.getGroups() == 1 &&
         weight && weight.hasStaticShape() &&
         (!conv.getBias() || isa<RankedTensorType>(conv.getBias().getType()));
}

/// Whether `conv` is an unpadded stride-1 1x1 dense convolution.
static bool isPointwise(ConvOp conv) {
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  return isDense(conv) && weight.getDimSize(2) == 1 &&
         weight.getDimSize(3) == 1 &&
         llvm::all_of(conv.getStrides(), [](int64_t s) { return s == 1; }) &&
         llvm::all_of(conv.getPadding(), [](int64_t p) { return p == 0; });
}

/// The convolution that alone reads the last value of `op`'s epilogue chain
/// as its input, in the same block.
static ConvOp soleConvUser(Operation *op, ArrayRef<Operation *> chain) {
  Value v = chain.empty() ? op->getResult(0) : chain.back()->getResult(0);
  if (!v.hasOneUse())
    return nullptr;
  auto user = dyn_cast<ConvOp>(*v.getUsers().begin());
  if (!user || user.getInput() != v || user->getBlock() != op->getBlock())
    return nullptr;
  return user;
}

Operation *mlir::tcc::matchPointwiseAfterDepthwise(
    Operation *op, const Epilogue &dwEpilogue, ArrayRef<Operation *> dwChain) {
  auto dw = dyn_cast<ConvOp>(op);
  // The pair's kernels apply no activation to the depthwise part.
  if (!dw || !isDepthwise(dw) || dwEpilogue.residual ||
      dwEpilogue.activation != Activation::None)
    return nullptr;
  ConvOp pw = soleConvUser(dw, dwChain);
  return pw && isPointwise(pw) ? pw : nullptr;
}

Operation *mlir::tcc::matchMaxPoolAfter(Operation *op, const Epilogue &epilogue,
                                        ArrayRef<Operation *> chain) {
  auto conv = dyn_cast<ConvOp>(op);
  if (!conv || conv.getGroups() != 1 || epilogue.residual ||
      epilogue.activation != Activation::None ||
      !isStaticF32Rank4(conv.getResult()))
    return nullptr;
  Value last =
      chain.empty() ? Value(conv.getResult()) : chain.back()->getResult(0);
  if (!last.hasOneUse())
    return nullptr;
  auto pool = dyn_cast<MaxPoolOp>(*last.getUsers().begin());
  auto all = [](ArrayRef<int64_t> values, int64_t v) {
    return llvm::all_of(values, [&](int64_t x) { return x == v; });
  };
  if (!pool || pool.getKernel().size() != 2 || !all(pool.getDilations(), 1) ||
      !isStaticF32Rank4(pool.getResult()))
    return nullptr;
  return pool;
}

Operation *
mlir::tcc::matchDepthwiseAfterExpansion(Operation *op,
                                        const Epilogue &expEpilogue,
                                        ArrayRef<Operation *> expChain) {
  auto exp = dyn_cast<ConvOp>(op);
  if (!exp || !isStaticF32Rank4(exp.getInput()) || !isDense(exp) ||
      expEpilogue.residual || expEpilogue.activation != Activation::None)
    return nullptr;
  ConvOp dw = soleConvUser(exp, expChain);
  return dw && isDepthwise(dw) ? dw : nullptr;
}

/// Row-major strides of a contiguous tensor.
static SmallVector<int64_t> contiguousStrides(ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> strides(sizes.size(), 1);
  for (int64_t i = (int64_t)sizes.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * sizes[i + 1];
  return strides;
}

/// The strides of `newSizes` viewing the same elements as (sizes, strides),
/// when a reshape of that view is itself a view (PyTorch's rule: merged
/// dimensions must be contiguous with each other).
static std::optional<SmallVector<int64_t>>
reshapeStrides(ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
               ArrayRef<int64_t> newSizes) {
  if (llvm::is_contained(sizes, 0) || sizes.empty() || newSizes.empty())
    return std::nullopt;
  SmallVector<int64_t> out(newSizes.size(), 0);
  int64_t viewD = newSizes.size() - 1;
  int64_t chunkStride = strides.back(), tensorN = 1, viewN = 1;
  for (int64_t d = sizes.size() - 1; d >= 0; --d) {
    tensorN *= sizes[d];
    if (d == 0 ||
        (sizes[d - 1] != 1 && strides[d - 1] != tensorN * chunkStride)) {
      while (viewD >= 0 && (viewN < tensorN || newSizes[viewD] == 1)) {
        out[viewD] = viewN * chunkStride;
        viewN *= newSizes[viewD];
        --viewD;
      }
      if (viewN != tensorN)
        return std::nullopt;
      if (d > 0) {
        chunkStride = strides[d - 1];
        tensorN = viewN = 1;
      }
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return out;
}

namespace {
/// A strided view being followed through transposes and reshapes.
struct Strided {
  SmallVector<int64_t> sizes, strides;

  bool apply(Operation *op, ArrayRef<int64_t> resultShape) {
    if (auto t = dyn_cast<TransposeOp>(op)) {
      SmallVector<int64_t> s, st;
      for (int64_t p : t.getPerm()) {
        s.push_back(sizes[p]);
        st.push_back(strides[p]);
      }
      sizes = s, strides = st;
      return true;
    }
    std::optional<SmallVector<int64_t>> st =
        reshapeStrides(sizes, strides, resultShape);
    if (!st)
      return false;
    sizes.assign(resultShape.begin(), resultShape.end());
    strides = *st;
    return true;
  }

  /// Fills the matrix fields of `view`; fails when neither inner stride is
  /// 1 or the batch dimensions do not merge into one stride.
  bool toMatrix(MatrixView &view) const {
    int64_t rank = sizes.size();
    if (rank < 2)
      return false;
    view.rows = sizes[rank - 2], view.cols = sizes[rank - 1];
    view.rowStride =
        view.rows == 1 ? view.cols * strides[rank - 1] : strides[rank - 2];
    view.colStride = view.cols == 1 ? 1 : strides[rank - 1];
    if (view.colStride != 1 && view.rowStride != 1)
      return false;
    view.batch = 1, view.batchStride = 0;
    int64_t last = -1;
    for (int64_t i = rank - 3; i >= 0; --i) {
      if (sizes[i] == 1)
        continue;
      if (last >= 0 && strides[i] != strides[last] * sizes[last])
        return false;
      if (last < 0)
        view.batchStride = strides[i];
      view.batch *= sizes[i];
      last = i;
    }
    return true;
  }
};

bool isLayoutOp(Operation *op) {
  return isa_and_nonnull<TransposeOp, ReshapeOp>(op);
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
} // namespace

MatrixView mlir::tcc::plainMatrixView(Value value) {
  MatrixView view;
  view.base = value;
  Strided s{SmallVector<int64_t>(shapeOf(value)),
            contiguousStrides(shapeOf(value))};
  s.toMatrix(view);
  return view;
}

MatrixView mlir::tcc::matchMatrixView(Value value) {
  SmallVector<Operation *> chain;
  Value base = value;
  while (isLayoutOp(base.getDefiningOp()) && base.hasOneUse()) {
    chain.push_back(base.getDefiningOp());
    base = chain.back()->getOperand(0);
  }
  // Use the longest suffix of the chain that is still a strided view.
  while (!chain.empty()) {
    Strided s{SmallVector<int64_t>(shapeOf(base)),
              contiguousStrides(shapeOf(base))};
    bool ok = true;
    for (Operation *op : llvm::reverse(chain))
      ok = ok && s.apply(op, shapeOf(op->getResult(0)));
    MatrixView view;
    if (ok && s.toMatrix(view)) {
      view.base = base;
      view.ops.assign(chain.rbegin(), chain.rend());
      return view;
    }
    base = chain.back()->getResult(0);
    chain.pop_back();
  }
  return plainMatrixView(value);
}

MatrixView mlir::tcc::matchResultView(Value result) {
  SmallVector<Operation *> chain;
  Value last = result;
  while (last.hasOneUse() && isLayoutOp(*last.getUsers().begin())) {
    chain.push_back(*last.getUsers().begin());
    last = chain.back()->getResult(0);
  }
  // Undo the chain from the final layout back to the result's shape.
  while (!chain.empty()) {
    Value end = chain.back()->getResult(0);
    Strided s{SmallVector<int64_t>(shapeOf(end)),
              contiguousStrides(shapeOf(end))};
    bool ok = true;
    for (Operation *op : llvm::reverse(chain)) {
      if (auto t = dyn_cast<TransposeOp>(op)) {
        SmallVector<int64_t> inverse(t.getPerm().size());
        for (auto [i, p] : llvm::enumerate(t.getPerm()))
          inverse[p] = i;
        SmallVector<int64_t> sz, st;
        for (int64_t p : inverse) {
          sz.push_back(s.sizes[p]);
          st.push_back(s.strides[p]);
        }
        s.sizes = sz, s.strides = st;
      } else {
        ok = ok && s.apply(op, shapeOf(op->getOperand(0)));
      }
    }
    MatrixView view;
    if (ok && s.toMatrix(view) && view.colStride == 1) {
      view.base = end;
      view.ops = chain;
      return view;
    }
    chain.pop_back();
  }
  return plainMatrixView(result);
}

std::optional<Prologue>
mlir::tcc::matchPrologue(Operation *op, SmallVectorImpl<Operation *> &chain) {
  auto conv = dyn_cast<ConvOp>(op);
  if (!conv || conv.getGroups() != 1)
    return std::nullopt;
  auto wType = cast<RankedTensorType>(conv.getWeight().getType());
  auto xType = cast<RankedTensorType>(conv.getInput().getType());
  if (xType.getRank() != 4 || !xType.hasStaticShape() ||
      !xType.getElementType().isF32() || wType.getDimSize(2) != 1 ||
      wType.getDimSize(3) != 1 ||
      llvm::any_of(conv.getStrides(), [](int64_t s) { return s != 1; }) ||
      llvm::any_of(conv.getPadding(), [](int64_t p) { return p != 0; }))
    return std::nullopt;
  Block *block = conv->getBlock();
  // The op making `v`, when v is only the next step's and shaped as x.
  auto single = [&](Value v) -> Operation * {
    Operation *def = v.getDefiningOp();
    return def && def->getBlock() == block && v.hasOneUse() &&
                   v.getType() == xType
               ? def
               : nullptr;
  };
  // The operand of a binary op that is one value per channel, and the
  // other one (shaped as x), or nulls.
  auto perChannel = [&](Operation *bin) -> std::pair<Value, Value> {
    for (int i = 0; i < 2; ++i) {
      Value c = bin->getOperand(i), x = bin->getOperand(1 - i);
      auto t = dyn_cast<RankedTensorType>(c.getType());
      if (t && t.hasStaticShape() && t.getElementType().isF32() &&
          x.getType() == xType && c != x &&
          isBiasShape(t.getShape(), xType.getShape(), /*perChannel=*/true))
        return {c, x};
    }
    return {Value(), Value()};
  };
  Prologue p;
  Value cur = conv.getInput();
  SmallVector<Operation *> ops;
  if (auto relu = dyn_cast_or_null<ReluOp>(single(cur))) {
    p.relu = true;
    ops.push_back(relu);
    cur = relu.getInput();
  }
  // The shift, then the scale: each taken where one operand is per channel.
  auto take = [&](Operation *bin, Value &field) {
    auto [c, x] = perChannel(bin);
    if (!c)
      return;
    field = c;
    ops.push_back(bin);
    cur = x;
  };
  if (auto add = dyn_cast_or_null<AddOp>(single(cur)))
    take(add, p.shift);
  if (auto mul = dyn_cast_or_null<MulOp>(single(cur)))
    take(mul, p.scale);
  if (ops.empty())
    return std::nullopt;
  p.input = cur;
  chain.append(ops.rbegin(), ops.rend());
  return p;
}
