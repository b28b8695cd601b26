//===- PadDynamicDims.cpp - the tcc-pad-dynamic-dims pass -----------------===//
//
// A dynamic dimension whose elements interact -- a transformer's sequence
// length, which attention contracts and softmax normalizes over -- cannot
// run as slabs (tcc-specialize-batch). It runs padded instead: @main is
// compiled at a few bucket sizes N (@main_pad16, @main_pad32, ...), every
// kernel static, and a run of n <= N elements pads its inputs to N. Each
// bucket takes n as an operand and keeps the padding out of the result:
// wherever an op would read padded elements into valid ones (a reduction,
// a softmax, a contraction over the dimension) its operand is masked with
// the op's neutral value (0 for a sum or a contraction, -inf for a max or a
// softmax, ...); ops that keep elements apart (elementwise ops, contractions
// over other dimensions, layer norm over other axes) leave the padding as
// garbage that no valid element reads. The pass follows where each value
// holds the symbol (a reshape may merge it with static dimensions or split
// it out again, a transpose moves it) and refuses, naming the op, what it
// cannot pad: a concatenation, convolution or slice along the dimension.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"

#include "dialects/Tcc/IR/TccOps.h"
#include "dialects/Tcc/IR/TccTraits.h"

#include <limits>
#include <map>
#include <optional>

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCPADDYNAMICDIMS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

/// How one dimension holds the symbol: its size is outer * N * inner, and
/// the element at index i is padding when (i / inner) % N >= n.
struct Digit {
  int64_t outer = 1, inner = 1;
  bool operator==(const Digit &o) const {
    return outer == o.outer && inner == o.inner;
  }
  bool operator!=(const Digit &o) const { return !(*this == o); }
  int64_t size(int64_t n) const { return outer * n * inner; }
};

/// Per dimension of a value, how it holds the symbol (none: a fixed one).
using Layout = SmallVector<std::optional<Digit>>;

bool anyDigit(const Layout &l) {
  return llvm::any_of(l, [](const std::optional<Digit> &d) { return !!d; });
}

/// What a masked element becomes.
enum class Fill { zero, one, lowest, highest };

/// A failure to pad: the reason, to be reported on the op.
struct Refusal {
  std::string reason;
};

class BucketBuilder {
public:
  BucketBuilder(func::FuncOp f, int64_t bucket, Value n)
      : f(f), bucket(bucket), n(n) {}

  /// Specializes `f` (a copy of @main) to the bucket: fixes every dynamic
  /// dimension, inserts the masks. Fails after reporting on the op.
  LogicalResult run() {
    for (BlockArgument arg : f.getArguments()) {
      if (arg == n)
        continue;
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (!t || t.hasStaticShape())
        continue;
      Layout l(t.getRank());
      for (int64_t d = 0; d < t.getRank(); ++d)
        if (t.isDynamicDim(d))
          l[d] = Digit{};
      // The artifact fills the inputs' padding with zeros.
      for (int64_t d = 0; d < t.getRank(); ++d)
        if (l[d])
          zeroAlong.insert({arg, d});
      layouts[arg] = l;
      arg.setType(concrete(t, l));
    }
    for (Operation &op :
         llvm::make_early_inc_range(f.getBody().front().getOperations())) {
      std::optional<Refusal> refused = visit(&op);
      if (refused) {
        op.emitError() << "'" << op.getName().getStringRef() << "' "
                       << refused->reason
                       << ", so the dimension cannot be padded to a bucket: "
                          "fix it with --input-shape";
        return failure();
      }
    }
    f.setFunctionType(FunctionType::get(
        f.getContext(), f.getBody().front().getArgumentTypes(),
        f.getBody().front().getTerminator()->getOperandTypes()));
    return success();
  }

  /// The layouts of the returned values (one per result), after run().
  SmallVector<Layout> resultLayouts() {
    SmallVector<Layout> out;
    for (Value v : f.getBody().front().getTerminator()->getOperands())
      out.push_back(layoutOf(v));
    return out;
  }

private:
  Layout layoutOf(Value v) {
    auto it = layouts.find(v);
    if (it != layouts.end())
      return it->second;
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return Layout(t ? t.getRank() : 0);
  }

  RankedTensorType concrete(RankedTensorType t, const Layout &l) {
    SmallVector<int64_t> shape(t.getShape());
    for (auto [d, digit] : llvm::enumerate(l))
      if (digit)
        shape[d] = digit->size(bucket);
    return t.clone(shape);
  }

  /// Gives `result` the layout `l` and its type at the bucket size; every
  /// dynamic dimension must hold the symbol.
  std::optional<Refusal> setLayout(Value result, Layout l) {
    auto t = cast<RankedTensorType>(result.getType());
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (t.isDynamicDim(d) && !l[d])
        return Refusal{"gives dimension " + std::to_string(d) +
                       " a size that is not the dynamic dimension's"};
      if (!t.isDynamicDim(d) && l[d])
        return Refusal{"gives the dynamic dimension the fixed size " +
                       std::to_string(t.getDimSize(d))};
    }
    result.setType(concrete(t, l));
    if (anyDigit(l))
      layouts[result] = std::move(l);
    return std::nullopt;
  }

  /// Numpy broadcasting of the operands' layouts (right-aligned); an
  /// operand broadcasts along a padded dimension only from size 1.
  std::optional<Refusal> broadcastLayout(Operation *op, Layout &out) {
    auto rt = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t rank = rt.getRank();
    out.assign(rank, std::nullopt);
    for (Value v : op->getOperands()) {
      Layout l = layoutOf(v);
      int64_t off = rank - int64_t(l.size());
      for (auto [i, digit] : llvm::enumerate(l)) {
        if (!digit)
          continue;
        std::optional<Digit> &slot = out[off + i];
        if (slot && *slot != *digit)
          return Refusal{"combines tensors holding the dynamic dimension "
                         "differently"};
        slot = digit;
      }
    }
    // A `?` the operands do not hold (a broadcast to a size from Shape):
    // the dimension itself.
    if (isa<BroadcastToOp>(op))
      for (int64_t d = 0; d < rank; ++d)
        if (rt.isDynamicDim(d) && !out[d])
          out[d] = Digit{};
    for (Value v : op->getOperands()) {
      auto t = cast<RankedTensorType>(v.getType());
      Layout l = layoutOf(v);
      int64_t off = rank - t.getRank();
      for (int64_t i = 0; i < t.getRank(); ++i)
        if (out[off + i] && !l[i] && t.getDimSize(i) != 1)
          return Refusal{"combines the dynamic dimension with a fixed size " +
                         std::to_string(t.getDimSize(i))};
    }
    return std::nullopt;
  }

  /// A constant of `t`'s element type with the value of `fill`.
  Value fillValue(OpBuilder &b, Location loc, Type elementType, Fill fill) {
    auto scalar = RankedTensorType::get({}, elementType);
    Attribute value;
    if (auto ft = dyn_cast<FloatType>(elementType)) {
      const llvm::fltSemantics &sem = ft.getFloatSemantics();
      llvm::APFloat v = fill == Fill::zero  ? llvm::APFloat::getZero(sem)
                        : fill == Fill::one ? llvm::APFloat::getOne(sem)
                        : fill == Fill::lowest
                            ? llvm::APFloat::getInf(sem, /*Negative=*/true)
                            : llvm::APFloat::getInf(sem);
      value = DenseElementsAttr::get(scalar, v);
    } else {
      auto it = cast<IntegerType>(elementType);
      unsigned w = it.getWidth();
      bool isSigned = !it.isUnsigned() && w > 1;
      llvm::APInt v = fill == Fill::zero  ? llvm::APInt(w, 0)
                      : fill == Fill::one ? llvm::APInt(w, 1)
                      : fill == Fill::lowest
                          ? (isSigned ? llvm::APInt::getSignedMinValue(w)
                                      : llvm::APInt(w, 0))
                          : (isSigned ? llvm::APInt::getSignedMaxValue(w)
                                      : llvm::APInt::getMaxValue(w));
      value = DenseElementsAttr::get(scalar, v);
    }
    return b.create<ConstantOp>(loc, cast<ElementsAttr>(value));
  }

  /// Whether each element along dimension `dim` (of a rank-`rank` value
  /// holding `digit` there) is valid: an i1 tensor, size 1 elsewhere.
  Value validAlong(OpBuilder &b, Location loc, int64_t rank, int64_t dim,
                   Digit digit) {
    auto key = std::make_tuple(rank, dim, digit.outer, digit.inner);
    if (auto it = validCache.find(key); it != validCache.end())
      return it->second;
    int64_t size = digit.size(bucket);
    SmallVector<int64_t> shape(rank, 1);
    shape[dim] = size;
    SmallVector<int64_t> positions;
    for (int64_t i = 0; i < size; ++i)
      positions.push_back((i / digit.inner) % bucket);
    auto type = RankedTensorType::get(shape, b.getI64Type());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(cast<BlockArgument>(n).getOwner());
    Value at =
        b.create<ConstantOp>(loc, cast<ElementsAttr>(DenseElementsAttr::get(
                                      type, ArrayRef<int64_t>(positions))));
    Value valid = b.create<CompareOp>(loc, ComparePredicate::lt, at, n);
    validCache[key] = valid;
    return valid;
  }

  /// `v` with the padding along `dims` replaced by `fill`.
  Value masked(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> dims,
               Fill fill) {
    Layout l = layoutOf(v);
    auto t = cast<RankedTensorType>(v.getType());
    Value cond;
    for (int64_t d : dims) {
      Value valid = validAlong(b, loc, t.getRank(), d, *l[d]);
      cond = cond ? b.create<AndOp>(loc, cond, valid).getResult() : valid;
    }
    Value r = b.create<SelectOp>(loc, cond, v,
                                 fillValue(b, loc, t.getElementType(), fill));
    layouts[r] = l;
    if (fill == Fill::zero)
      for (int64_t d : dims)
        zeroAlong.insert({r, d});
    return r;
  }

  /// Masks operand `i` of `op` along the padded dimensions among `dims`
  /// (those already zero there are left alone for a zero fill).
  void maskOperand(Operation *op, unsigned i, ArrayRef<int64_t> dims,
                   Fill fill) {
    Value v = op->getOperand(i);
    Layout l = layoutOf(v);
    SmallVector<int64_t> padded;
    for (int64_t d : dims)
      if (d >= 0 && d < int64_t(l.size()) && l[d] &&
          !(fill == Fill::zero && zeroAlong.contains({v, d})))
        padded.push_back(d);
    if (padded.empty())
      return;
    OpBuilder b(op);
    op->setOperand(i, masked(b, op->getLoc(), v, padded, fill));
  }

  static int64_t norm(int64_t axis, int64_t rank) {
    return axis < 0 ? axis + rank : axis;
  }

  std::optional<Refusal> visit(Operation *op) {
    bool dynamic = false;
    for (Value v : op->getOperands())
      dynamic |= anyDigit(layoutOf(v));
    for (Type t : op->getResultTypes())
      if (auto rt = dyn_cast<RankedTensorType>(t))
        dynamic |= !rt.hasStaticShape();
    if (!dynamic)
      return std::nullopt;
    if (isa<func::ReturnOp>(op))
      return returned(op);
    if (op->getNumRegions() > 0)
      return Refusal{"has regions reading the dynamic dimension"};

    if (op->hasTrait<mlir::tcc::OpTrait::BroadcastingElementwise>() ||
        isa<BroadcastToOp, CastOp, BitcastOp, GeluOp, ClampOp>(op)) {
      Layout out;
      if (auto r = broadcastLayout(op, out))
        return r;
      return setLayout(op->getResult(0), out);
    }
    if (auto mm = dyn_cast<MatmulOp>(op))
      return matmul(mm);
    if (auto t = dyn_cast<TransposeOp>(op)) {
      Layout in = layoutOf(t.getInput()), out;
      for (int64_t p : t.getPerm())
        out.push_back(in[p]);
      return setLayout(t.getResult(), out);
    }
    if (auto r = dyn_cast<ReshapeOp>(op))
      return reshape(r);
    Layout in = layoutOf(op->getOperand(0));
    int64_t rank = in.size();
    if (auto s = dyn_cast<SoftmaxOp>(op))
      return softmaxLike(op, norm(s.getAxis(), rank), /*zeroOut=*/true);
    if (auto s = dyn_cast<LogSoftmaxOp>(op))
      return softmaxLike(op, norm(s.getAxis(), rank), /*zeroOut=*/false);
    if (auto ln = dyn_cast<LayerNormOp>(op)) {
      for (int64_t d = norm(ln.getAxis(), rank); d < rank; ++d)
        if (in[d])
          return Refusal{"normalizes over the dynamic dimension"};
      for (Value v : op->getOperands().drop_front())
        if (anyDigit(layoutOf(v)))
          return Refusal{"takes its parameters from the dynamic dimension"};
      return setLayout(op->getResult(0), in);
    }
    if (isa<ConvOp, MaxPoolOp, AvgPoolOp, BatchNormOp>(op)) {
      // Images stay apart: only the batch may be padded.
      for (int64_t d = 1; d < rank; ++d)
        if (in[d])
          return Refusal{"works along the dynamic dimension"};
      for (Value v : op->getOperands().drop_front())
        if (anyDigit(layoutOf(v)))
          return Refusal{"takes its parameters from the dynamic dimension"};
      Layout out(cast<RankedTensorType>(op->getResult(0).getType()).getRank());
      out[0] = in[0];
      return setLayout(op->getResult(0), out);
    }
    if (auto c = dyn_cast<CumsumOp>(op))
      return cumulative(op, norm(c.getAxis(), rank), c.getReverse(),
                        Fill::zero);
    if (auto c = dyn_cast<CumprodOp>(op))
      return cumulative(op, norm(c.getAxis(), rank), c.getReverse(), Fill::one);
    if (auto a = dyn_cast<ArgMaxOp>(op))
      return argReduce(op, norm(a.getAxis(), rank), a.getKeepdims(),
                       Fill::lowest);
    if (auto a = dyn_cast<ArgMinOp>(op))
      return argReduce(op, norm(a.getAxis(), rank), a.getKeepdims(),
                       Fill::highest);
    if (auto r = dyn_cast<ReduceSumOp>(op))
      return reduce(op, r.getAxes(), r.getKeepdims(), Fill::zero);
    if (auto r = dyn_cast<ReduceMaxOp>(op))
      return reduce(op, r.getAxes(), r.getKeepdims(), Fill::lowest);
    if (auto r = dyn_cast<ReduceMinOp>(op))
      return reduce(op, r.getAxes(), r.getKeepdims(), Fill::highest);
    if (auto r = dyn_cast<ReduceProdOp>(op))
      return reduce(op, r.getAxes(), r.getKeepdims(), Fill::one);
    if (auto r = dyn_cast<ReduceMeanOp>(op))
      return mean(r);
    if (auto s = dyn_cast<SliceOp>(op))
      return slice(s);
    if (auto c = dyn_cast<ConcatOp>(op)) {
      int64_t axis = norm(c.getAxis(), rank);
      Layout out;
      if (auto r = broadcastLayout(op, out))
        return r;
      if (out[axis])
        return Refusal{"concatenates along the dynamic dimension"};
      return setLayout(c.getResult(), out);
    }
    if (auto s = dyn_cast<SplitOp>(op)) {
      if (in[norm(s.getAxis(), rank)])
        return Refusal{"splits the dynamic dimension"};
      for (Value r : s.getResults())
        if (auto refused = setLayout(r, in))
          return refused;
      return std::nullopt;
    }
    if (auto p = dyn_cast<PadOp>(op)) {
      for (int64_t d = 0; d < rank; ++d)
        if (in[d] && (p.getLow()[d] != 0 || p.getHigh()[d] != 0))
          return Refusal{"pads the dynamic dimension"};
      for (Value v : op->getOperands().drop_front())
        if (anyDigit(layoutOf(v)))
          return Refusal{"takes its padding value from the dynamic dimension"};
      return setLayout(p.getResult(), in);
    }
    if (auto g = dyn_cast<GatherOp>(op))
      return gather(g);
    return Refusal{"has no rule for a padded dynamic dimension"};
  }

  std::optional<Refusal> returned(Operation *op) {
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      for (const std::optional<Digit> &d : layoutOf(v))
        if (d && *d != Digit{})
          return Refusal{"returns output " + std::to_string(i) +
                         " with the dynamic dimension merged into another "
                         "(outputs must hold it as a dimension of its own)"};
    return std::nullopt;
  }

  std::optional<Refusal> matmul(MatmulOp mm) {
    Layout lhs = layoutOf(mm.getLhs()), rhs = layoutOf(mm.getRhs());
    int64_t lr = lhs.size(), rr = rhs.size();
    // Contracted: the lhs's last dimension, the rhs's first (a vector) or
    // next to last.
    int64_t rk = rr == 1 ? 0 : rr - 2;
    if (lhs[lr - 1] || rhs[rk]) {
      if (!lhs[lr - 1] || !rhs[rk] || *lhs[lr - 1] != *rhs[rk])
        return Refusal{"contracts the dynamic dimension with a fixed one"};
      maskOperand(mm, 0, {lr - 1}, Fill::zero);
      maskOperand(mm, 1, {rk}, Fill::zero);
    }
    auto rt = cast<RankedTensorType>(mm.getType());
    int64_t rank = rt.getRank();
    Layout out(rank);
    // Stacks broadcast right-aligned ahead of the matrix dimensions.
    int64_t stack = rank - (lr > 1 ? 1 : 0) - (rr > 1 ? 1 : 0);
    auto stackOf = [&](const Layout &l, int64_t matrixDims) {
      int64_t count = int64_t(l.size()) - matrixDims;
      for (int64_t i = 0; i < count; ++i)
        if (l[i]) {
          std::optional<Digit> &slot = out[stack - count + i];
          if (slot && *slot != *l[i])
            return false;
          slot = l[i];
        }
      return true;
    };
    if (!stackOf(lhs, std::min<int64_t>(lr, 2)) ||
        !stackOf(rhs, std::min<int64_t>(rr, 2)))
      return Refusal{"combines stacks holding the dynamic dimension "
                     "differently"};
    if (lr > 1)
      out[stack] = lhs[lr - 2];
    if (rr > 1)
      out[rank - 1] = rhs[rr - 1];
    return setLayout(mm.getResult(), out);
  }

  std::optional<Refusal> softmaxLike(Operation *op, int64_t axis,
                                     bool zeroOut) {
    Layout in = layoutOf(op->getOperand(0));
    if (in[axis])
      maskOperand(op, 0, {axis}, Fill::lowest);
    if (auto r = setLayout(op->getResult(0), in))
      return r;
    // exp(-inf - max) is exactly 0: the padding holds no probability.
    if (in[axis] && zeroOut)
      zeroAlong.insert({op->getResult(0), axis});
    return std::nullopt;
  }

  std::optional<Refusal> cumulative(Operation *op, int64_t axis, bool reverse,
                                    Fill fill) {
    Layout in = layoutOf(op->getOperand(0));
    // Running forward, valid elements read valid ones only.
    if (in[axis] && reverse)
      maskOperand(op, 0, {axis}, fill);
    return setLayout(op->getResult(0), in);
  }

  /// The layout left when `axes` are reduced (dropped or kept as 1).
  static Layout reduced(const Layout &in, ArrayRef<int64_t> axes,
                        bool keepdims) {
    Layout out;
    for (int64_t d = 0; d < int64_t(in.size()); ++d) {
      if (!llvm::is_contained(axes, d))
        out.push_back(in[d]);
      else if (keepdims)
        out.push_back(std::nullopt);
    }
    return out;
  }

  std::optional<Refusal> argReduce(Operation *op, int64_t axis, bool keepdims,
                                   Fill fill) {
    Layout in = layoutOf(op->getOperand(0));
    maskOperand(op, 0, {axis}, fill);
    return setLayout(op->getResult(0), reduced(in, {axis}, keepdims));
  }

  std::optional<Refusal> reduce(Operation *op, ArrayRef<int64_t> axes,
                                bool keepdims, Fill fill) {
    Layout in = layoutOf(op->getOperand(0));
    maskOperand(op, 0, axes, fill);
    return setLayout(op->getResult(0), reduced(in, axes, keepdims));
  }

  /// A mean over padded dimensions: the masked sum over the count of
  /// valid elements, n times the rest of each padded dimension.
  std::optional<Refusal> mean(ReduceMeanOp op) {
    Layout in = layoutOf(op.getInput());
    auto t = cast<RankedTensorType>(op.getInput().getType());
    int64_t powers = 0;
    double rest = 1;
    for (int64_t d : op.getAxes()) {
      if (in[d]) {
        ++powers;
        rest *= double(in[d]->outer * in[d]->inner);
      } else {
        rest *= double(t.getDimSize(d));
      }
    }
    if (powers == 0)
      return setLayout(op.getResult(),
                       reduced(in, op.getAxes(), op.getKeepdims()));
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value x = masked(b, loc, op.getInput(),
                     llvm::to_vector(llvm::make_filter_range(
                         op.getAxes(), [&](int64_t d) { return !!in[d]; })),
                     Fill::zero);
    Value sum =
        b.create<ReduceSumOp>(loc, x, op.getAxesAttr(), op.getKeepdimsAttr());
    Layout out = reduced(in, op.getAxes(), op.getKeepdims());
    if (auto r = setLayout(sum, out))
      return r;
    Type et = t.getElementType();
    auto scalar = RankedTensorType::get({}, et);
    Value count = b.create<CastOp>(loc, scalar, n);
    for (int64_t i = 1; i < powers; ++i)
      count = b.create<MulOp>(loc, count, count);
    bool lost;
    llvm::APFloat restFloat(rest);
    restFloat.convert(cast<FloatType>(et).getFloatSemantics(),
                      llvm::APFloat::rmNearestTiesToEven, &lost);
    Value restValue = b.create<ConstantOp>(
        loc, cast<ElementsAttr>(DenseElementsAttr::get(scalar, restFloat)));
    count = b.create<MulOp>(loc, count, restValue);
    Value result = b.create<DivOp>(loc, sum, count);
    layouts[result] = out;
    op.getResult().replaceAllUsesWith(result);
    op.erase();
    return std::nullopt;
  }

  std::optional<Refusal> slice(SliceOp s) {
    Layout in = layoutOf(s.getInput()), out = in;
    auto rt = cast<RankedTensorType>(s.getType());
    for (int64_t d = 0; d < int64_t(in.size()); ++d) {
      if (!in[d])
        continue;
      bool whole =
          rt.isDynamicDim(d) && s.getOffsets()[d] == 0 && s.getSteps()[d] == 1;
      if (whole)
        continue;
      // A fixed prefix every run holds (the first token).
      if (!rt.isDynamicDim(d) && *in[d] == Digit{} && s.getSteps()[d] > 0 &&
          s.getOffsets()[d] + (rt.getDimSize(d) - 1) * s.getSteps()[d] <
              minSize) {
        out[d] = std::nullopt;
        continue;
      }
      return Refusal{"slices the dynamic dimension beyond its smallest size "
                     "(" +
                     std::to_string(minSize) + ")"};
    }
    return setLayout(s.getResult(), out);
  }

  std::optional<Refusal> gather(GatherOp g) {
    Layout data = layoutOf(g.getData()), idx = layoutOf(g.getIndices());
    int64_t axis = norm(g.getAxis(), data.size());
    if (data[axis])
      return Refusal{"gathers along the dynamic dimension"};
    Layout out;
    for (int64_t d = 0; d < axis; ++d)
      out.push_back(data[d]);
    out.append(idx.begin(), idx.end());
    for (int64_t d = axis + 1; d < int64_t(data.size()); ++d)
      out.push_back(data[d]);
    return setLayout(g.getResult(), out);
  }

  /// Where each symbol digit of the input lands in the result: wholly
  /// inside one result dimension (merged with static ones around it), or
  /// the reshape mixes padding into valid elements.
  std::optional<Refusal> reshape(ReshapeOp r) {
    auto it = cast<RankedTensorType>(r.getInput().getType());
    auto rt = cast<RankedTensorType>(r.getType());
    Layout in = layoutOf(r.getInput());
    // Linear strides of each dimension.
    auto strides = [](ArrayRef<int64_t> dims) {
      SmallVector<int64_t> s(dims.size(), 1);
      for (int64_t d = int64_t(dims.size()) - 2; d >= 0; --d)
        s[d] = s[d + 1] * dims[d + 1];
      return s;
    };
    SmallVector<int64_t> inStride = strides(it.getShape());
    // The result's shape at this bucket. Its dynamic dimensions hold the
    // input's symbol digits in order (a stack of [S, S] score matrices
    // regrouped, [24, S, S] -> [2, 12, S, S]): each but the outermost is
    // the symbol alone times the static elements its digit has inside it;
    // the outermost takes what the others leave.
    SmallVector<int64_t>
        units; // Linear stride of each input digit, outer first.
    for (int64_t d = 0; d < it.getRank(); ++d)
      if (in[d])
        units.push_back(in[d]->inner * inStride[d]);
    llvm::sort(units, std::greater<int64_t>());
    int64_t total = it.getNumElements();
    SmallVector<int64_t> shape(rt.getShape());
    SmallVector<int64_t> dynamicDims;
    for (int64_t d = 0; d < rt.getRank(); ++d)
      if (rt.isDynamicDim(d))
        dynamicDims.push_back(d);
    if (dynamicDims.size() > 1) {
      if (dynamicDims.size() != units.size())
        return Refusal{"reshapes into more dynamic dimensions than the "
                       "symbol fills"};
      int64_t stride = 1;
      for (int64_t d = rt.getRank() - 1; d > dynamicDims.front(); --d) {
        if (rt.isDynamicDim(d)) {
          int64_t unit =
              units[llvm::find(dynamicDims, d) - dynamicDims.begin()];
          if (unit % stride != 0)
            return Refusal{"reshapes across the dynamic dimension"};
          shape[d] = bucket * (unit / stride);
        }
        stride *= shape[d];
      }
    }
    if (!dynamicDims.empty()) {
      int64_t known = 1;
      for (int64_t d = 0; d < rt.getRank(); ++d)
        if (d != dynamicDims.front())
          known *= shape[d];
      if (known == 0 || total % known != 0)
        return Refusal{"reshapes to a size the bucket does not divide"};
      shape[dynamicDims.front()] = total / known;
    }
    SmallVector<int64_t> outStride = strides(shape);
    Layout out(shape.size());
    for (int64_t d = 0; d < it.getRank(); ++d) {
      if (!in[d])
        continue;
      int64_t unit = in[d]->inner * inStride[d]; // Stride of one step of s.
      int64_t span = unit * bucket;
      bool placed = false;
      for (int64_t j = 0; j < int64_t(shape.size()) && !placed; ++j) {
        int64_t lo = outStride[j], hi = outStride[j] * shape[j];
        if (unit % lo != 0 || span > hi || hi % span != 0)
          continue;
        if (out[j])
          return Refusal{"merges the dynamic dimension with itself"};
        out[j] = Digit{shape[j] / ((unit / lo) * bucket), unit / lo};
        placed = true;
      }
      if (!placed)
        return Refusal{"reshapes across the dynamic dimension"};
    }
    for (int64_t d = 0; d < rt.getRank(); ++d)
      if (out[d] && !rt.isDynamicDim(d))
        return Refusal{"gives the dynamic dimension the fixed size " +
                       std::to_string(rt.getDimSize(d))};
    return setLayout(r.getResult(), out);
  }

public:
  int64_t minSize = 1;

private:
  func::FuncOp f;
  int64_t bucket;
  Value n;
  DenseMap<Value, Layout> layouts;
  DenseSet<std::pair<Value, int64_t>> zeroAlong;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, Value> validCache;
};

struct TccPadDynamicDimsPass
    : mlir::tcc::impl::TccPadDynamicDimsBase<TccPadDynamicDimsPass> {
  using TccPadDynamicDimsBase::TccPadDynamicDimsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    std::string name;
    if (failed(symbolOf(main, name)))
      return signalPassFailure();
    if (name.empty())
      return; // Nothing to pad.
    int64_t lo = 1, hi = 0;
    if (auto bounds = module->getAttrOfType<DictionaryAttr>("tcc.dim_bounds"))
      if (auto range = bounds.getAs<DenseI64ArrayAttr>(name);
          range && range.size() == 2)
        lo = range[0], hi = range[1];
    if (hi <= 0 || hi > maxSize) {
      main.emitError() << "dynamic dimension '" << name
                       << "' is padded to fixed buckets and needs an upper "
                          "bound of at most "
                       << int64_t(maxSize) << ": give --dim " << name << "="
                       << lo << "..MAX";
      return signalPassFailure();
    }
    // Powers of two and the sizes halfway between them in ratio (16, 24,
    // 32, 48, ...): a run pays at most 1.5x the elements of its size.
    SmallVector<int64_t> buckets;
    int64_t first = 1;
    while (first < std::min<int64_t>(std::max<int64_t>(lo, minBucket), hi))
      first *= 2;
    for (int64_t s = first; s < hi; s *= 2) {
      buckets.push_back(s);
      if (s >= 2 && s + s / 2 < hi && s + s / 2 >= lo)
        buckets.push_back(s + s / 2);
    }
    buckets.push_back(hi);
    std::reverse(buckets.begin(), buckets.end()); // Largest first.

    OpBuilder b(main);
    FunctionType type = main.getFunctionType();
    SmallVector<Layout> outputLayouts;
    for (int64_t bucket : buckets) {
      IRMapping map;
      auto copy = cast<func::FuncOp>(main->clone(map));
      copy.setSymName(("main_pad" + Twine(bucket)).str());
      auto nType = RankedTensorType::get({}, b.getI64Type());
      copy.insertArgument(copy.getNumArguments(), nType,
                          b.getDictionaryAttr(b.getNamedAttr(
                              "tcc.name", b.getStringAttr(name))),
                          main.getLoc());
      Value n = copy.getArgument(copy.getNumArguments() - 1);
      b.insert(copy);
      BucketBuilder builder(copy, bucket, n);
      builder.minSize = lo;
      if (failed(builder.run()))
        return signalPassFailure();
      outputLayouts = builder.resultLayouts();
    }
    auto dims = [&](TypeRange types) {
      SmallVector<Attribute> out;
      for (Type t : types) {
        SmallVector<int64_t> d;
        if (auto rt = dyn_cast<RankedTensorType>(t))
          for (int64_t i = 0; i < rt.getRank(); ++i)
            if (rt.isDynamicDim(i))
              d.push_back(i);
        out.push_back(b.getDenseI64ArrayAttr(d));
      }
      return b.getArrayAttr(out);
    };
    module->setAttr(
        "tcc.padded",
        b.getDictionaryAttr(
            {b.getNamedAttr("name", b.getStringAttr(name)),
             b.getNamedAttr("min", b.getI64IntegerAttr(lo)),
             b.getNamedAttr("max", b.getI64IntegerAttr(hi)),
             b.getNamedAttr("buckets", b.getDenseI64ArrayAttr(buckets)),
             b.getNamedAttr("inputs", dims(type.getInputs())),
             b.getNamedAttr("outputs", dims(type.getResults()))}));
    main.erase();
  }

  /// The symbol to pad: the one dynamic dimension name that is not only a
  /// leading (batch) dimension of the inputs, or a batch whose rows interact;
  /// tcc-specialize-batch runs the others as slabs. Empty when there is none.
  LogicalResult symbolOf(func::FuncOp main, std::string &name) {
    llvm::StringMap<bool> leadingOnly;
    SmallVector<std::string> order;
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      auto t = dyn_cast<RankedTensorType>(main.getArgumentTypes()[i]);
      if (!t)
        continue;
      auto names = main.getArgAttrOfType<ArrayAttr>(i, "tcc.dims");
      for (int64_t d = 0; d < t.getRank(); ++d) {
        if (!t.isDynamicDim(d))
          continue;
        auto s = names && d < int64_t(names.size())
                     ? dyn_cast<StringAttr>(names[d])
                     : StringAttr();
        std::string sym = s && !s.getValue().empty()
                              ? s.getValue().str()
                              : (d == 0 ? "batch" : "dim" + std::to_string(d));
        auto [it, inserted] = leadingOnly.try_emplace(sym, true);
        if (inserted)
          order.push_back(sym);
        it->second &= d == 0;
      }
    }
    SmallVector<std::string> padded;
    for (const std::string &s : order)
      if (!leadingOnly[s])
        padded.push_back(s);
    // A batch whose rows some op mixes (a mean over it) is padded too when
    // it has a bound padding takes; else tcc-specialize-batch names the op
    // that mixes them.
    auto bounds =
        main->getParentOfType<ModuleOp>()->getAttrOfType<DictionaryAttr>(
            "tcc.dim_bounds");
    auto range = bounds ? bounds.getAs<DenseI64ArrayAttr>(order.front())
                        : DenseI64ArrayAttr();
    if (padded.empty() && order.size() == 1 && range && range.size() == 2 &&
        range[1] <= maxSize && !batchRunsAsSlabs(main))
      padded.push_back(order.front());
    if (padded.empty())
      return success();
    if (order.size() > 1) {
      main.emitError() << "the inputs have dynamic dimensions '" << order[0]
                       << "' and '" << order[1]
                       << "'; tcc compiles one dynamic dimension per model: "
                          "fix the others with --input-shape";
      return failure();
    }
    name = padded.front();
    return success();
  }
};
} // namespace
