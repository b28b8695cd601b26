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
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

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
  /// A batch's (beside the padded symbol): followed, never padded, its
  /// dimension left dynamic for tcc-specialize-batch.
  bool batch = false;
  /// Which padded symbol (sizes the graph computes may be several, each
  /// with its own bound and count).
  unsigned sym = 0;
  bool operator==(const Digit &o) const {
    return outer == o.outer && inner == o.inner && batch == o.batch &&
           sym == o.sym;
  }
  bool operator!=(const Digit &o) const { return !(*this == o); }
  int64_t size(int64_t n) const { return outer * n * inner; }
};

/// A prime no static size is a multiple of, standing for the batch where
/// a reshape needs sizes.
constexpr int64_t kBatchProbe = 65521;

/// Per dimension of a value, how it holds the symbol (none: a fixed one).
using Layout = SmallVector<std::optional<Digit>>;

/// Whether `d` is the padded symbol's.
bool pad(const std::optional<Digit> &d) { return d && !d->batch; }

/// Whether the padded digit `d` shares its dimension with the batch (its
/// outer or inner factor holds the probe: [S*B] after attention's [S, B, D]
/// layout): the dimension stays dynamic, masked by splitting it.
bool merged(const Digit &d) {
  return !d.batch && (d.outer % kBatchProbe == 0 || d.inner % kBatchProbe == 0);
}

bool anyPad(const Layout &l) { return llvm::any_of(l, pad); }

/// What a masked element becomes.
enum class Fill { zero, one, lowest, highest };

/// A failure to pad: the reason, to be reported on the op.
struct Refusal {
  std::string reason;
};

class BucketBuilder {
public:
  /// `padded(i, d)`: whether dimension d of argument i is the padded
  /// symbol's; with `batch`, the other dynamic dimensions are a batch's,
  /// which stay dynamic (tcc-specialize-batch makes slabs of them next).
  BucketBuilder(func::FuncOp f, int64_t bucket, Value n,
                llvm::function_ref<bool(unsigned, int64_t)> padded, bool batch)
      : f(f), buckets{bucket}, ns{n}, padded(padded), batch(batch) {}

  /// One more padded symbol (a size the graph computes, `n`, at its bound
  /// `bucket`); returns its index.
  unsigned addSymbol(int64_t bucket, Value n) {
    buckets.push_back(bucket);
    ns.push_back(n);
    return buckets.size() - 1;
  }

  /// Specializes `f` (a copy of @main) to the bucket: fixes every padded
  /// dimension, inserts the masks. Fails after reporting on the op.
  LogicalResult run() {
    for (BlockArgument arg : f.getArguments()) {
      if (llvm::is_contained(ns, arg))
        continue;
      auto t = dyn_cast<RankedTensorType>(arg.getType());
      if (!t || t.hasStaticShape())
        continue;
      Layout l(t.getRank());
      for (int64_t d = 0; d < t.getRank(); ++d) {
        if (!t.isDynamicDim(d))
          continue;
        l[d] = Digit{1, 1, !padded(arg.getArgNumber(), d)};
        // The artifact fills the inputs' padding with zeros.
        if (pad(l[d]))
          zeroAlong.insert({arg, d});
      }
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

  /// The layouts of the arguments and of the returned values, after run().
  SmallVector<Layout> argumentLayouts() {
    SmallVector<Layout> out;
    for (Value v : f.getArguments())
      if (!llvm::is_contained(ns, v))
        out.push_back(layoutOf(v));
    return out;
  }
  SmallVector<Layout> resultLayouts() {
    SmallVector<Layout> out;
    for (Value v : f.getBody().front().getTerminator()->getOperands())
      out.push_back(layoutOf(v));
    return out;
  }

private:
  /// The bucket and the run's count of the padded symbol `d` holds.
  int64_t bucketOf(const Digit &d) const { return buckets[d.sym]; }
  Value nOf(const Digit &d) const { return ns[d.sym]; }

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
      if (pad(digit) && !merged(*digit))
        shape[d] = digit->size(bucketOf(*digit));
    return t.clone(shape);
  }

  /// Gives `result` the layout `l` and its type at the bucket size; every
  /// dynamic dimension must hold the symbol.
  std::optional<Refusal> setLayout(Value result, Layout l) {
    auto t = cast<RankedTensorType>(result.getType());
    for (int64_t d = 0; d < t.getRank(); ++d) {
      // (Beside a batch, a dynamic size no rule derives is the batch's.)
      if (t.isDynamicDim(d) && !l[d] && batch)
        l[d] = Digit{1, 1, true};
      if (t.isDynamicDim(d) && !l[d])
        return Refusal{"gives dimension " + std::to_string(d) +
                       " a size that is not the dynamic dimension's"};
      if (!t.isDynamicDim(d) && l[d] && (l[d]->batch || merged(*l[d])))
        return Refusal{"gives the batch the fixed size " +
                       std::to_string(t.getDimSize(d))};
      if (!t.isDynamicDim(d) && l[d])
        return Refusal{"gives the dynamic dimension the fixed size " +
                       std::to_string(t.getDimSize(d))};
    }
    result.setType(concrete(t, l));
    if (llvm::any_of(l, [](const auto &d) { return !!d; }))
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
    // what the operands it is combined with hold there (a mask of the
    // scores' shape), else the dimension itself when there is no batch it
    // could be.
    if (isa<BroadcastToOp, IotaOp>(op)) {
      for (int64_t d = 0; d < rank; ++d)
        if (rt.isDynamicDim(d) && !out[d])
          out[d] = siblingDigit(op->getResult(0), d);
      // (Positions along a batch are refused: they are the padded
      // symbol's unless their users say otherwise.)
      if (!batch || isa<IotaOp>(op))
        for (int64_t d = 0; d < rank; ++d)
          if (rt.isDynamicDim(d) && !out[d])
            out[d] = Digit{};
    }
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

  /// The digit that operands combined elementwise with `v` (already
  /// visited) hold where `v` has dimension `d`, if any: looked for through
  /// a few elementwise ops (a causal mask made of positions meets the
  /// scores it masks some ops later).
  std::optional<Digit> siblingDigit(Value v, int64_t d) {
    SmallVector<std::pair<Value, int64_t>> frontier{{v, d}};
    DenseSet<Value> seen{v};
    for (int hop = 0; hop < 8 && !frontier.empty(); ++hop) {
      SmallVector<std::pair<Value, int64_t>> next;
      for (auto [w, dw] : frontier) {
        int64_t rank = cast<RankedTensorType>(w.getType()).getRank();
        for (Operation *user : w.getUsers()) {
          if (!user->hasTrait<mlir::tcc::OpTrait::BroadcastingElementwise>())
            continue;
          for (Value other : user->getOperands()) {
            auto it = layouts.find(other);
            if (other == w || it == layouts.end())
              continue;
            int64_t at = dw + int64_t(it->second.size()) - rank;
            if (at >= 0 && at < int64_t(it->second.size()) && it->second[at])
              return it->second[at];
          }
          Value r = user->getResult(0);
          int64_t rrank = cast<RankedTensorType>(r.getType()).getRank();
          if (seen.insert(r).second)
            next.push_back({r, dw + rrank - rank});
        }
      }
      frontier = std::move(next);
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
    auto key = std::make_tuple(rank, dim, digit.outer, digit.inner, digit.sym);
    if (auto it = validCache.find(key); it != validCache.end())
      return it->second;
    int64_t bucket = bucketOf(digit), size = digit.size(bucket);
    Value n = nOf(digit);
    SmallVector<int64_t> shape(rank, 1);
    shape[dim] = size;
    SmallVector<int64_t> positions;
    for (int64_t i = 0; i < size; ++i)
      positions.push_back((i / digit.inner) % bucket);
    auto type = RankedTensorType::get(shape, b.getI64Type());
    OpBuilder::InsertionGuard guard(b);
    // (A size the graph computes: just after it, before what it trims.)
    if (auto arg = dyn_cast<BlockArgument>(n))
      b.setInsertionPointToStart(arg.getOwner());
    else
      b.setInsertionPointAfter(n.getDefiningOp());
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
    Value cond, r = v;
    for (int64_t d : dims) {
      if (merged(*l[d])) {
        r = maskedMerged(b, loc, r, d, *l[d], fill);
        continue;
      }
      Value valid = validAlong(b, loc, t.getRank(), d, *l[d]);
      cond = cond ? b.create<AndOp>(loc, cond, valid).getResult() : valid;
    }
    if (cond)
      r = b.create<SelectOp>(loc, cond, r,
                             fillValue(b, loc, t.getElementType(), fill));
    layouts[r] = l;
    if (fill == Fill::zero)
      for (int64_t d : dims)
        zeroAlong.insert({r, d});
    return r;
  }

  /// `v` masked along dimension `d`, which holds the batch beside the
  /// padded symbol: split into [outer, N, inner] (the batch's factor a
  /// dynamic size), masked along N, joined back (reshapes are views).
  Value maskedMerged(OpBuilder &b, Location loc, Value v, int64_t d,
                     Digit digit, Fill fill) {
    auto t = cast<RankedTensorType>(v.getType());
    auto factor = [](int64_t f) {
      return f % kBatchProbe == 0 ? ShapedType::kDynamic : f;
    };
    SmallVector<int64_t> split(t.getShape().take_front(d));
    if (digit.outer != 1)
      split.push_back(factor(digit.outer));
    int64_t at = split.size();
    split.push_back(bucketOf(digit));
    if (digit.inner != 1)
      split.push_back(factor(digit.inner));
    llvm::append_range(split, t.getShape().drop_front(d + 1));
    Value parts = b.create<ReshapeOp>(loc, t.clone(split), v);
    Value valid =
        validAlong(b, loc, split.size(), at, Digit{1, 1, false, digit.sym});
    Value sel = b.create<SelectOp>(loc, valid, parts,
                                   fillValue(b, loc, t.getElementType(), fill));
    return b.create<ReshapeOp>(loc, t, sel);
  }

  /// Masks operand `i` of `op` along the padded dimensions among `dims`
  /// (those already zero there are left alone for a zero fill).
  void maskOperand(Operation *op, unsigned i, ArrayRef<int64_t> dims,
                   Fill fill) {
    Value v = op->getOperand(i);
    Layout l = layoutOf(v);
    SmallVector<int64_t> padded;
    for (int64_t d : dims)
      if (d >= 0 && d < int64_t(l.size()) && pad(l[d]) &&
          !(fill == Fill::zero && zeroAlong.contains({v, d})))
        padded.push_back(d);
    if (padded.empty())
      return;
    // (Zeros before a contraction go to the source of views; a -inf before
    // a softmax stays where it fuses with the softmax.)
    OpBuilder b(op);
    op->setOperand(i, fill == Fill::zero
                          ? zeroedAtSource(b, op->getLoc(), v, padded)
                          : masked(b, op->getLoc(), v, padded, fill));
  }

  /// `v` with zeros in its padding along `dims`, put where that is
  /// cheapest: a value made by views (reshapes, transposes: attention's
  /// heads split from the features) is masked at their source, along every
  /// padded dimension there, and the views made again on the result, so
  /// the mask reads contiguous rows instead of being a strided copy of its
  /// own. (Zeroing padding along other digits too is harmless: it is
  /// padding.)
  Value zeroedAtSource(OpBuilder &b, Location loc, Value v,
                       ArrayRef<int64_t> dims) {
    SmallVector<Operation *> views;
    Value source = v;
    while (Operation *def = source.getDefiningOp()) {
      if (!isa<ReshapeOp, TransposeOp>(def) ||
          !anyPad(layoutOf(def->getOperand(0))))
        break;
      views.push_back(def);
      source = def->getOperand(0);
    }
    if (views.empty())
      return masked(b, loc, v, dims, Fill::zero);
    Layout l = layoutOf(source);
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < int64_t(l.size()); ++d)
      if (pad(l[d]))
        all.push_back(d);
    Value r = masked(b, loc, source, all, Fill::zero);
    for (Operation *view : llvm::reverse(views)) {
      Operation *copy = b.clone(*view);
      copy->setOperand(0, r);
      r = copy->getResult(0);
      layouts[r] = layoutOf(view->getResult(0));
    }
    for (auto [d, digit] : llvm::enumerate(layoutOf(v)))
      if (pad(digit))
        zeroAlong.insert({r, int64_t(d)});
    return r;
  }

  static int64_t norm(int64_t axis, int64_t rank) {
    return axis < 0 ? axis + rank : axis;
  }

  std::optional<Refusal> visit(Operation *op) {
    bool dynamic = false;
    for (Value v : op->getOperands())
      dynamic |= llvm::any_of(layoutOf(v), [](const auto &d) { return !!d; });
    for (Type t : op->getResultTypes())
      if (auto rt = dyn_cast<RankedTensorType>(t))
        dynamic |= !rt.hasStaticShape();
    if (!dynamic)
      return std::nullopt;
    if (isa<func::ReturnOp>(op))
      return returned(op);
    // Beside a batch, an op that reads no padded value is the batch's
    // alone: the rules below follow it where they can, else its dynamic
    // sizes are taken as the batch itself.
    bool readsPadding = llvm::any_of(
        op->getOperands(), [&](Value v) { return anyPad(layoutOf(v)); });
    if (op->getNumRegions() > 0)
      return Refusal{"has regions reading the dynamic dimension"};

    if (auto trim = dyn_cast<TrimOp>(op)) {
      // The size's source: its input, at the upper bound (the bucket), is
      // the value from here on.
      Value in = trim.getInput();
      int64_t d = trim.getDimension();
      auto sym = llvm::find(ns, trim.getSize());
      if (sym == ns.end())
        return Refusal{"trims to a size the pass was not given"};
      unsigned k = sym - ns.begin();
      if (!in.hasOneUse() || layoutOf(in)[d])
        return Refusal{"trims a value used otherwise"};
      if (cast<RankedTensorType>(in.getType()).getDimSize(d) != buckets[k])
        return Refusal{
            "trims dimension " + std::to_string(d) + " of size " +
            std::to_string(cast<RankedTensorType>(in.getType()).getDimSize(d)) +
            ", not the upper bound " + std::to_string(buckets[k])};
      Layout l = layoutOf(in);
      l[d] = Digit{1, 1, false, k};
      layouts[in] = std::move(l);
      trim.getResult().replaceAllUsesWith(in);
      op->erase();
      return std::nullopt;
    }
    if (auto iota = dyn_cast<IotaOp>(op)) {
      Layout out;
      if (auto r = broadcastLayout(op, out))
        return r;
      if (llvm::any_of(out, [](const auto &d) { return d && d->batch; }))
        return Refusal{"ranges over the batch"};
      if (auto r = setLayout(iota.getResult(), out))
        return r;
      // The bucket's positions: a constant (past n, padding like any).
      OpBuilder b(op);
      auto positions = cast<DenseElementsAttr>(cast<Attribute>(
          iota.fold(IotaOp::FoldAdaptor(ArrayRef<Attribute>{}, iota))));
      Value c = b.create<ConstantOp>(op->getLoc(), positions);
      iota.getResult().replaceAllUsesWith(c);
      Layout l = layoutOf(iota.getResult());
      layouts.erase(iota.getResult());
      layouts[c] = std::move(l);
      op->erase();
      return std::nullopt;
    }
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
      for (auto [j, p] : llvm::enumerate(t.getPerm())) {
        out.push_back(in[p]);
        if (zeroAlong.contains({t.getInput(), p}))
          zeroAlong.insert({t.getResult(), int64_t(j)});
      }
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
        if (pad(in[d]))
          return Refusal{"normalizes over the dynamic dimension"};
      for (Value v : op->getOperands().drop_front())
        if (anyPad(layoutOf(v)))
          return Refusal{"takes its parameters from the dynamic dimension"};
      return setLayout(op->getResult(0), in);
    }
    if (isa<ConvOp, MaxPoolOp, AvgPoolOp, BatchNormOp>(op)) {
      // Images stay apart: only the batch may be padded.
      for (int64_t d = 1; d < rank; ++d)
        if (pad(in[d]))
          return Refusal{"works along the dynamic dimension"};
      for (Value v : op->getOperands().drop_front())
        if (anyPad(layoutOf(v)))
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
      if (pad(out[axis]))
        return Refusal{"concatenates along the dynamic dimension"};
      return setLayout(c.getResult(), out);
    }
    if (auto s = dyn_cast<SplitOp>(op)) {
      if (pad(in[norm(s.getAxis(), rank)]))
        return Refusal{"splits the dynamic dimension"};
      for (Value r : s.getResults())
        if (auto refused = setLayout(r, in))
          return refused;
      return std::nullopt;
    }
    if (auto p = dyn_cast<PadOp>(op)) {
      for (int64_t d = 0; d < rank; ++d)
        if (pad(in[d]) && (p.getLow()[d] != 0 || p.getHigh()[d] != 0))
          return Refusal{"pads the dynamic dimension"};
      for (Value v : op->getOperands().drop_front())
        if (anyPad(layoutOf(v)))
          return Refusal{"takes its padding value from the dynamic dimension"};
      return setLayout(p.getResult(), in);
    }
    if (auto g = dyn_cast<GatherOp>(op))
      return gather(g);
    if (batch && !readsPadding) {
      for (Value r : op->getResults())
        if (auto t = dyn_cast<RankedTensorType>(r.getType()))
          if (auto refused = setLayout(r, Layout(t.getRank())))
            return refused;
      return std::nullopt;
    }
    return Refusal{"has no rule for a padded dynamic dimension"};
  }

  std::optional<Refusal> returned(Operation *op) {
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      for (const std::optional<Digit> &d : layoutOf(v))
        if (pad(d) && (d->outer != 1 || d->inner != 1))
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
    if (pad(lhs[lr - 1]) || pad(rhs[rk])) {
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
    if (pad(in[axis]))
      maskOperand(op, 0, {axis}, Fill::lowest);
    if (auto r = setLayout(op->getResult(0), in))
      return r;
    // exp(-inf - max) is exactly 0: the padding holds no probability.
    if (pad(in[axis]) && zeroOut)
      zeroAlong.insert({op->getResult(0), axis});
    return std::nullopt;
  }

  std::optional<Refusal> cumulative(Operation *op, int64_t axis, bool reverse,
                                    Fill fill) {
    Layout in = layoutOf(op->getOperand(0));
    // Running forward, valid elements read valid ones only.
    if (pad(in[axis]) && reverse)
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
    bool overBatch = false;
    for (int64_t d : op.getAxes()) {
      if (pad(in[d])) {
        ++powers;
        overBatch |= merged(*in[d]);
        rest *= double(in[d]->outer * in[d]->inner);
      } else {
        overBatch |= t.isDynamicDim(d);
        rest *= double(t.getDimSize(d));
      }
    }
    if (powers == 0)
      return setLayout(op.getResult(),
                       reduced(in, op.getAxes(), op.getKeepdims()));
    if (overBatch)
      return Refusal{"averages over the batch and the padded dimension at "
                     "once"};
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value x = masked(b, loc, op.getInput(),
                     llvm::to_vector(llvm::make_filter_range(
                         op.getAxes(), [&](int64_t d) { return pad(in[d]); })),
                     Fill::zero);
    Value sum =
        b.create<ReduceSumOp>(loc, x, op.getAxesAttr(), op.getKeepdimsAttr());
    Layout out = reduced(in, op.getAxes(), op.getKeepdims());
    if (auto r = setLayout(sum, out))
      return r;
    Type et = t.getElementType();
    auto scalar = RankedTensorType::get({}, et);
    // (Each padded dimension's own count: n^2 over [S, S].)
    Value count;
    for (int64_t d : op.getAxes()) {
      if (!pad(in[d]))
        continue;
      Value c = b.create<CastOp>(loc, scalar, nOf(*in[d]));
      count = count ? b.create<MulOp>(loc, count, c).getResult() : c;
    }
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
      if (!pad(in[d]))
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
    // The first n of a fixed dimension (a causal mask buffer cut to the
    // run's sequence, bias[:, :, :T, :T]): its first N in the bucket.
    auto inType = cast<RankedTensorType>(s.getInput().getType());
    for (int64_t d = 0; d < int64_t(in.size()); ++d) {
      if (in[d] || !rt.isDynamicDim(d) || inType.isDynamicDim(d))
        continue;
      if (s.getOffsets()[d] != 0 || s.getSteps()[d] != 1)
        return Refusal{"slices dimension " + std::to_string(d) +
                       " to the dynamic size from an offset or in steps"};
      out[d] = siblingDigit(s.getResult(), d);
      if (!out[d])
        out[d] = Digit{};
      if (!pad(out[d]) || merged(*out[d]))
        return Refusal{"slices the batch from a fixed dimension"};
      if (out[d]->size(bucketOf(*out[d])) > inType.getDimSize(d))
        return Refusal{"slices the dynamic dimension's " +
                       std::to_string(out[d]->size(bucketOf(*out[d]))) +
                       " elements from a dimension of " +
                       std::to_string(inType.getDimSize(d)) +
                       " (bound the dimension by " +
                       std::to_string(inType.getDimSize(d)) + ")"};
    }
    return setLayout(s.getResult(), out);
  }

  std::optional<Refusal> gather(GatherOp g) {
    Layout data = layoutOf(g.getData()), idx = layoutOf(g.getIndices());
    int64_t axis = norm(g.getAxis(), data.size());
    if (pad(data[axis]))
      return Refusal{"gathers along the dynamic dimension"};
    Layout out;
    for (int64_t d = 0; d < axis; ++d)
      out.push_back(data[d]);
    out.append(idx.begin(), idx.end());
    for (int64_t d = axis + 1; d < int64_t(data.size()); ++d)
      out.push_back(data[d]);
    return setLayout(g.getResult(), out);
  }

  /// Where each digit of the input (the padded symbol's, a batch's) lands
  /// in the result: wholly inside one result dimension (merged with static
  /// ones around it), or the reshape mixes padding into valid elements.
  /// Sizes are computed with the batch at a probe size.
  std::optional<Refusal> reshape(ReshapeOp r) {
    auto it = cast<RankedTensorType>(r.getInput().getType());
    auto rt = cast<RankedTensorType>(r.getType());
    Layout in = layoutOf(r.getInput());
    auto extentOf = [&](const Digit &g) {
      return g.batch ? kBatchProbe : bucketOf(g);
    };
    SmallVector<int64_t> inShape(it.getShape());
    for (int64_t d = 0; d < it.getRank(); ++d)
      if (in[d])
        inShape[d] = in[d]->size(extentOf(*in[d]));
    // Linear strides of each dimension.
    auto strides = [](ArrayRef<int64_t> dims) {
      SmallVector<int64_t> s(dims.size(), 1);
      for (int64_t d = int64_t(dims.size()) - 2; d >= 0; --d)
        s[d] = s[d + 1] * dims[d + 1];
      return s;
    };
    SmallVector<int64_t> inStride = strides(inShape);
    // The digits' (stride, extent): the padded symbol's, the batch's, and
    // the batch's inside a padded dimension it shares (outermost within
    // the factor that holds it).
    SmallVector<std::pair<int64_t, int64_t>> units, batchUnits;
    for (int64_t d = 0; d < it.getRank(); ++d) {
      if (!in[d])
        continue;
      const Digit &g = *in[d];
      if (g.batch) {
        batchUnits.push_back({g.inner * inStride[d], kBatchProbe});
        continue;
      }
      units.push_back({g.inner * inStride[d], bucketOf(g)});
      if (g.inner % kBatchProbe == 0)
        batchUnits.push_back(
            {g.inner / kBatchProbe * inStride[d], kBatchProbe});
      else if (g.outer % kBatchProbe == 0)
        batchUnits.push_back(
            {g.outer / kBatchProbe * bucketOf(g) * g.inner * inStride[d],
             kBatchProbe});
    }
    SmallVector<std::pair<int64_t, int64_t>> all(units);
    llvm::append_range(all, batchUnits);
    llvm::sort(all, [](auto a, auto b) { return a.first > b.first; });
    // (Sizes here hold the bucket and the probe: refuse what would
    // overflow, and empty tensors, which have no strides.)
    int64_t total = 1;
    for (int64_t d : inShape)
      if (d <= 0 || llvm::MulOverflow(total, d, total))
        return Refusal{"reshapes a tensor too large or empty to follow the "
                       "dynamic dimension through"};
    for (int64_t d : rt.getShape())
      if (d == 0)
        return Refusal{"reshapes a tensor too large or empty to follow the "
                       "dynamic dimension through"};
    // The result's shape at this bucket (the batch at the probe). Its
    // dynamic dimensions hold the digits in order (a stack of [S, S] score
    // matrices regrouped, [24, S, S] -> [2, 12, S, S]): from the innermost,
    // each but the outermost holds one digit times the static elements
    // inside it; the outermost takes what the others leave (several
    // digits: [S, B, D] -> [S*B, D]).
    SmallVector<int64_t> shape(rt.getShape());
    SmallVector<int64_t> dynamicDims;
    for (int64_t d = 0; d < rt.getRank(); ++d)
      if (rt.isDynamicDim(d))
        dynamicDims.push_back(d);
    if (dynamicDims.size() > all.size())
      return Refusal{"reshapes into more dynamic dimensions than the "
                     "symbol fills"};
    if (dynamicDims.size() > 1) {
      int64_t stride = 1;
      for (int64_t d = rt.getRank() - 1; d > dynamicDims.front(); --d) {
        if (rt.isDynamicDim(d)) {
          int64_t k = llvm::find(dynamicDims, d) - dynamicDims.begin();
          auto [unit, extent] = all[all.size() - (dynamicDims.size() - k)];
          if (unit % stride != 0)
            return Refusal{"reshapes across the dynamic dimension"};
          shape[d] = extent * (unit / stride);
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
    // The result dimension holding a digit of (stride, extent), or -1.
    auto place = [&](int64_t unit, int64_t extent) -> int64_t {
      int64_t span = unit * extent;
      for (int64_t j = 0; j < int64_t(shape.size()); ++j) {
        int64_t lo = outStride[j], hi = outStride[j] * shape[j];
        if (unit % lo == 0 && span <= hi && hi % span == 0)
          return j;
      }
      return -1;
    };
    Layout out(shape.size());
    SmallVector<int64_t> zeros; // Padding that stays zeros.
    for (int64_t d = 0; d < it.getRank(); ++d) {
      if (!pad(in[d]))
        continue;
      int64_t unit = in[d]->inner * inStride[d]; // Stride of one step.
      int64_t bucket = bucketOf(*in[d]);
      int64_t j = place(unit, bucket);
      if (j < 0)
        return Refusal{"reshapes across the dynamic dimension"};
      if (out[j])
        return Refusal{"merges the dynamic dimension with itself"};
      int64_t inner = unit / outStride[j];
      out[j] = Digit{shape[j] / (inner * bucket), inner, false, in[d]->sym};
      if (zeroAlong.contains({r.getInput(), d}))
        zeros.push_back(j);
    }
    // The batch where it has a dimension of its own (inside a padded one,
    // the padded digit's factors hold it).
    for (auto [unit, extent] : batchUnits) {
      int64_t j = place(unit, extent);
      if (j < 0)
        return Refusal{"reshapes across the batch"};
      if (out[j])
        continue;
      int64_t inner = unit / outStride[j];
      out[j] = Digit{shape[j] / (inner * kBatchProbe), inner, true};
    }
    for (int64_t d = 0; d < rt.getRank(); ++d)
      if (out[d] && !rt.isDynamicDim(d))
        return Refusal{"gives the dynamic dimension the fixed size " +
                       std::to_string(rt.getDimSize(d))};
    for (int64_t j : zeros)
      zeroAlong.insert({r.getResult(), j});
    return setLayout(r.getResult(), out);
  }

public:
  int64_t minSize = 1;

private:
  func::FuncOp f;
  /// Per padded symbol: its bucket and the run's count (one, but for sizes
  /// the graph computes).
  SmallVector<int64_t> buckets;
  SmallVector<Value> ns;
  llvm::function_ref<bool(unsigned, int64_t)> padded;
  bool batch;
  DenseMap<Value, Layout> layouts;
  DenseSet<std::pair<Value, int64_t>> zeroAlong;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, unsigned>, Value>
      validCache;
};

/// The dimensions of each value that the padded symbol sizes (for
/// tcc.padded's inputs and outputs).
ArrayAttr paddedDims(Builder &b, ArrayRef<Layout> layouts) {
  SmallVector<Attribute> out;
  for (const Layout &l : layouts) {
    SmallVector<int64_t> d;
    for (auto [i, digit] : llvm::enumerate(l))
      if (pad(digit))
        d.push_back(i);
    out.push_back(b.getDenseI64ArrayAttr(d));
  }
  return b.getArrayAttr(out);
}

struct TccPadDynamicDimsPass
    : mlir::tcc::impl::TccPadDynamicDimsBase<TccPadDynamicDimsPass> {
  using TccPadDynamicDimsBase::TccPadDynamicDimsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    SmallVector<TrimOp> trims;
    main.walk([&](TrimOp t) { trims.push_back(t); });
    if (!trims.empty())
      return padToComputedSize(module, main, trims);
    std::string name, batchName;
    if (failed(symbolOf(main, name, batchName)))
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
    // Powers of two and `steps` - 1 sizes evenly between each two (four
    // steps: 16, 20, 24, 28, 32, 40, ...; a run pays at most 1.25x the
    // elements of its size). Beside a batch, whose slabs multiply the
    // copies, two steps (16, 24, 32, 48, ...: at most 1.5x).
    int64_t stepCount = bucketSteps > 0     ? bucketSteps
                        : batchName.empty() ? 4
                                            : 2;
    SmallVector<int64_t> buckets;
    int64_t first = 1;
    while (first < std::min<int64_t>(std::max<int64_t>(lo, minBucket), hi))
      first *= 2;
    for (int64_t s = first; s < hi; s *= 2)
      for (int64_t k = 0; k < stepCount; ++k) {
        int64_t size = s + s * k / stepCount;
        if (size < hi && (k == 0 || (size >= lo && size > buckets.back())))
          buckets.push_back(size);
      }
    buckets.push_back(hi);
    std::reverse(buckets.begin(), buckets.end()); // Largest first.

    // A weight broadcast to a stack of dynamic size says nothing of which
    // symbol sizes it: drop such broadcasts first (matmul stacks them).
    IRRewriter rewriter(main.getContext());
    main.walk([&](MatmulOp mm) {
      rewriter.setInsertionPoint(mm);
      SmallVector<Operation *> inputs = {mm.getLhs().getDefiningOp(),
                                         mm.getRhs().getDefiningOp()};
      if (failed(unstackMatmulOperands(mm, rewriter)))
        return;
      for (Operation *input : inputs)
        if (input && input->use_empty())
          rewriter.eraseOp(input);
    });
    OpBuilder b(main);
    SmallVector<Layout> inputLayouts, outputLayouts;
    auto padded = [&](unsigned arg, int64_t d) {
      return dimName(main, arg, d) == name;
    };
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
      BucketBuilder builder(copy, bucket, n, padded, !batchName.empty());
      builder.minSize = lo;
      if (failed(builder.run()))
        return signalPassFailure();
      inputLayouts = builder.argumentLayouts();
      outputLayouts = builder.resultLayouts();
    }
    auto dims = [&](ArrayRef<Layout> layouts) {
      return paddedDims(b, layouts);
    };
    module->setAttr("tcc.padded",
                    dynamicDimAttr(b, name, lo, hi, "buckets", buckets,
                                   dims(inputLayouts), dims(outputLayouts)));
    main.erase();
  }

  /// Sizes the graph computes (tcc.trim: NonZero's count, a Pad's sizes):
  /// one bucket, each size at its upper bound, taking the sizes from the
  /// graph rather than from arguments, and returning them last, in order,
  /// for the artifact to report.
  void padToComputedSize(ModuleOp module, func::FuncOp main,
                         ArrayRef<TrimOp> trims) {
    auto bound = [](TrimOp t) {
      return cast<RankedTensorType>(t.getInput().getType())
          .getDimSize(t.getDimension());
    };
    // The symbols: one per count, named by its first trim.
    SmallVector<Value> counts;
    SmallVector<TrimOp> firsts;
    for (TrimOp t : trims) {
      auto it = llvm::find(counts, t.getSize());
      if (it == counts.end()) {
        for (TrimOp f : firsts)
          if (f.getName() == t.getName()) {
            t.emitError() << "'tcc.trim' names another size known only at "
                             "run time '"
                          << t.getName() << "' too";
            return signalPassFailure();
          }
        counts.push_back(t.getSize());
        firsts.push_back(t);
        continue;
      }
      TrimOp first = firsts[it - counts.begin()];
      if (bound(t) != bound(first) || t.getName() != first.getName()) {
        t.emitError() << "'tcc.trim' trims to the size of '" << first.getName()
                      << "' at another bound or name";
        return signalPassFailure();
      }
    }
    for (Type t : main.getArgumentTypes())
      if (auto rt = dyn_cast<RankedTensorType>(t); rt && !rt.hasStaticShape()) {
        firsts.front().emitError()
            << "'tcc.trim' makes a size known only at run time in a graph "
               "with dynamic dimensions; tcc compiles one or the other";
        return signalPassFailure();
      }
    int64_t hi = bound(firsts.front());
    OpBuilder b(main);
    IRMapping map;
    auto copy = cast<func::FuncOp>(main->clone(map));
    copy.setSymName(("main_pad" + Twine(hi)).str());
    b.insert(copy);
    SmallVector<Value> ns;
    for (Value c : counts)
      ns.push_back(map.lookup(c));
    BucketBuilder builder(
        copy, hi, ns.front(), [](unsigned, int64_t) { return false; },
        /*batch=*/false);
    for (auto [k, t] : llvm::enumerate(firsts))
      if (k > 0)
        builder.addSymbol(bound(t), ns[k]);
    builder.minSize = 0;
    if (failed(builder.run()))
      return signalPassFailure();
    SmallVector<Layout> outputLayouts = builder.resultLayouts();
    // The sizes, returned after the outputs.
    Operation *ret = copy.getBody().front().getTerminator();
    SmallVector<Attribute> names;
    SmallVector<int64_t> maxima;
    for (auto [n, t] : llvm::zip_equal(ns, firsts)) {
      ret->insertOperands(ret->getNumOperands(), n);
      copy.insertResult(copy.getNumResults(), n.getType(),
                        b.getDictionaryAttr(b.getNamedAttr(
                            "tcc.name", b.getStringAttr(t.getName()))));
      names.push_back(b.getStringAttr(t.getName()));
      maxima.push_back(bound(t));
    }
    // Which symbol sizes each listed dimension of each output.
    SmallVector<Attribute> outputSymbols;
    for (const Layout &l : outputLayouts) {
      SmallVector<int64_t> syms;
      for (const std::optional<Digit> &digit : l)
        if (pad(digit))
          syms.push_back(digit->sym);
      outputSymbols.push_back(b.getDenseI64ArrayAttr(syms));
    }
    SmallVector<Attribute> inputs(main.getNumArguments(),
                                  b.getDenseI64ArrayAttr({}));
    DictionaryAttr attr = dynamicDimAttr(
        b, firsts.front().getName().str(), 0, hi, "buckets", {hi},
        b.getArrayAttr(inputs), paddedDims(b, outputLayouts));
    NamedAttrList entries(attr);
    entries.set("computed", b.getUnitAttr());
    entries.set("computed_names", b.getArrayAttr(names));
    entries.set("computed_max", b.getDenseI64ArrayAttr(maxima));
    entries.set("output_symbols", b.getArrayAttr(outputSymbols));
    module->setAttr("tcc.padded", entries.getDictionary(b.getContext()));
    main.erase();
  }

  /// The name of dimension `d` of argument `i`: the importer's `tcc.dims`
  /// entry, else "batch" for a leading one and "dim<d>" for another.
  static std::string dimName(func::FuncOp main, unsigned i, int64_t d) {
    auto names = main.getArgAttrOfType<ArrayAttr>(i, "tcc.dims");
    auto s = names && d < int64_t(names.size()) ? dyn_cast<StringAttr>(names[d])
                                                : StringAttr();
    return s && !s.getValue().empty()
               ? s.getValue().str()
               : (d == 0 ? "batch" : "dim" + std::to_string(d));
  }

  /// The symbol to pad: the dynamic dimension name that is not only a
  /// leading (batch) dimension of the inputs, or a batch whose rows
  /// interact; tcc-specialize-batch runs a batch as slabs (beside a padded
  /// symbol, `batchName`). Empty when there is none.
  LogicalResult symbolOf(func::FuncOp main, std::string &name,
                         std::string &batchName) {
    llvm::StringMap<bool> leadingOnly;
    SmallVector<std::string> order;
    for (unsigned i = 0; i < main.getNumArguments(); ++i) {
      auto t = dyn_cast<RankedTensorType>(main.getArgumentTypes()[i]);
      if (!t)
        continue;
      for (int64_t d = 0; d < t.getRank(); ++d) {
        if (!t.isDynamicDim(d))
          continue;
        std::string sym = dimName(main, i, d);
        auto [it, inserted] = leadingOnly.try_emplace(sym, true);
        if (inserted)
          order.push_back(sym);
        it->second &= d == 0;
      }
    }
    if (order.empty())
      return success();
    SmallVector<std::string> padded, batches;
    for (const std::string &s : order)
      (leadingOnly[s] ? batches : padded).push_back(s);
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
    // One padded symbol, and at most one batch beside it.
    if (padded.size() > 1 || batches.size() > 1) {
      const auto &two = padded.size() > 1 ? padded : batches;
      main.emitError() << "the inputs have dynamic dimensions '" << two[0]
                       << "' and '" << two[1]
                       << "'; tcc compiles a batch and one other dynamic "
                          "dimension: fix the others with --input-shape";
      return failure();
    }
    name = padded.front();
    if (!batches.empty() && batches.front() != name)
      batchName = batches.front();
    return success();
  }
};
} // namespace
