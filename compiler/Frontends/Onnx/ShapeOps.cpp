//===- ShapeOps.cpp - ONNX shape, data movement and constant ops ----------===//
//
// Everything that computes a shape is resolved at import time: Shape gives
// a constant, and the ops that consume shapes (Reshape, Expand, Slice, Tile,
// ConstantOfShape, Range, ...) read their constant inputs. The tcc ops are
// made with createOrFold, so a chain such as Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape folds to constants as it is imported.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"
#include "compiler/Frontends/Onnx/RunTimeSize.h"
#include "llvm/Support/FormatVariadic.h"

#include "mlir/IR/Matchers.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

static constexpr int64_t kDyn = ShapedType::kDynamic;

/// Reshape to a shape of several dimensions known only at run time: each
/// a size the run computes (0 copies the input's, -1 takes the rest), the
/// result at their --dim bounds, position (i0, i1, ...) taking the input's
/// element at the row-major index the run's sizes give, trimmed to them. A
/// shape that does not hold the input's elements makes every size -1,
/// which the run reports as an error.
static LogicalResult reshapeAtRunTime(NodeContext &ctx, Value x, Value shape,
                                      bool allowZero) {
  if (failed(ctx.requireStatic(x)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t numel = shapes::numElements(in);
  if (!elementTypeOf(shape).isInteger(64) || shapeOf(shape).size() != 1 ||
      ShapedType::isDynamic(shapeOf(shape)[0]))
    return ctx.emitError() << "the shape must be a static vector of int64; got "
                           << shape.getType();
  if (numel == 0) { // (Its sizes could be anything: they must be given.)
    (void)ctx.constInput(1, "an empty input needs it");
    return failure();
  }
  int64_t rank = shapeOf(shape)[0];
  FailureOr<SmallVector<int64_t>> box = ctx.computedBox(
      "the reshaped size", SmallVector<int64_t>(rank, ShapedType::kDynamic));
  if (failed(box))
    return failure();
  Type i64 = ctx.b.getI64Type();
  auto c = [&](int64_t v) { return ctx.scalar(i64, double(v)); };
  auto eq = [&](Value a, Value b) {
    return ctx.compare(ComparePredicate::eq, a, b);
  };
  // The sizes asked for, 0 copying the input's dimension.
  SmallVector<Value> asked;
  for (int64_t j = 0; j < rank; ++j) {
    Value t = ctx.elementAt(shape, j);
    if (!allowZero && j < int64_t(in.size()))
      t = ctx.select(eq(t, c(0)), c(in[j]), t);
    asked.push_back(t);
  }
  // -1 takes what the others leave.
  Value known = c(1), unknowns = c(0),
        negative = ctx.constant({}, ctx.b.getI1Type(), {0.0});
  for (Value t : asked) {
    Value isRest = eq(t, c(-1));
    known = ctx.binary<MulOp>(known, ctx.select(isRest, c(1), t));
    unknowns = ctx.binary<AddOp>(unknowns, ctx.castTo(isRest, i64));
    negative = ctx.binary<OrOp>(
        negative, ctx.binary<AndOp>(ctx.compare(ComparePredicate::lt, t, c(0)),
                                    ctx.unary<NotOp>(isRest)));
  }
  Value rest = ctx.binary<DivOp>(c(numel), ctx.binary<MaxOp>(known, c(1)));
  SmallVector<Value> sizes;
  Value total = c(1);
  for (Value t : asked) {
    sizes.push_back(ctx.select(eq(t, c(-1)), rest, t));
    total = ctx.binary<MulOp>(total, sizes.back());
  }
  Value ok = ctx.binary<AndOp>(
      ctx.binary<AndOp>(eq(total, c(numel)),
                        ctx.compare(ComparePredicate::le, unknowns, c(1))),
      ctx.unary<NotOp>(negative));
  // The input's row-major index of each result position.
  Value index, stride = c(1);
  for (int64_t j = rank - 1; j >= 0; --j) {
    Value at = ctx.binary<MulOp>(ctx.iota((*box)[j], i64, j, rank), stride);
    index = index ? ctx.binary<AddOp>(index, at) : at;
    stride = ctx.binary<MulOp>(stride, sizes[j]);
  }
  if (!index) // (rank 0: the one element)
    index = c(0);
  index = ctx.binary<MinOp>(ctx.binary<MaxOp>(index, c(0)), c(numel - 1));
  Value y = ctx.gather(ctx.reshape(x, {numel}), index, 0);
  for (int64_t j = 0; j < rank; ++j)
    y = ctx.trimDim(y, ctx.select(ok, sizes[j], c(-1)), j);
  return ctx.result(y);
}

static LogicalResult importReshape(NodeContext &ctx) {
  Value x = ctx.input(0);
  SmallVector<int64_t> target;
  if (ctx.opset < 5) {
    ctx.ignoreAttrs({"consumed_inputs"});
    target = ctx.getInts("shape");
  } else if (!matchPattern(ctx.input(1), m_Constant()) &&
             !holdsRunTimeSize(ctx.input(1)) &&
             shapes::numElements(shapeOf(ctx.input(1))) == 1 &&
             cast<RankedTensorType>(x.getType()).hasStaticShape()) {
    // One dimension, its size known only at run time: every element in a
    // row (the value can only be their count or -1), whatever it is.
    ctx.ignoreAttrs({"allowzero"});
    return ctx.result(ctx.reshape(x, {shapes::numElements(shapeOf(x))}));
  } else if (!matchPattern(ctx.input(1), m_Constant()) &&
             !holdsRunTimeSize(ctx.input(1))) {
    return reshapeAtRunTime(ctx, x, ctx.input(1),
                            ctx.opset >= 14 && ctx.getInt("allowzero", 0));
  } else {
    FailureOr<SmallVector<int64_t>> shape = ctx.constInts(1);
    if (failed(shape))
      return failure();
    target = *shape;
  }
  bool allowZero = ctx.opset >= 14 && ctx.getInt("allowzero", 0);
  if (ctx.hasError())
    return failure();
  // 0 copies the input's dimension (unless allowzero), -1 is inferred.
  ArrayRef<int64_t> in = shapeOf(x);
  SmallVector<int64_t> out;
  int inferAt = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == kRunTimeSize) { // a dynamic dimension's size (Shape)
      out.push_back(kDyn);
      known = kDyn;
      continue;
    }
    if (d == -1) {
      if (inferAt >= 0)
        return ctx.emitError()
               << "shape " << shapes::str(target) << " has more than one -1";
      inferAt = i;
      out.push_back(kDyn);
      continue;
    }
    if (d < 0)
      return ctx.emitError() << "shape has an invalid dimension " << d;
    if (d == 0 && !allowZero) {
      if (i >= in.size())
        return ctx.emitError()
               << "shape " << shapes::str(target) << " copies dimension " << i
               << " of a rank-" << in.size() << " input";
      d = in[i];
    }
    out.push_back(d);
    if (ShapedType::isDynamic(d) || ShapedType::isDynamic(known))
      known = kDyn;
    else if (d && known > kMaxElements / d)
      return ctx.emitError() << "shape " << shapes::str(target)
                             << " holds more than 2^31 elements";
    else
      known *= d;
  }
  if (inferAt >= 0) {
    int64_t total = shapes::numElements(in);
    if (!ShapedType::isDynamic(total) && !ShapedType::isDynamic(known)) {
      if (known == 0 || total % known != 0)
        return ctx.emitError() << "cannot reshape " << shapes::str(in)
                               << " into " << shapes::str(target);
      out[inferAt] = total / known;
    }
  }
  Value y = ctx.reshape(x, out);
  return ctx.result(y);
}

static LogicalResult importTranspose(NodeContext &ctx) {
  Value x = ctx.input(0);
  SmallVector<int64_t> perm = ctx.getInts("perm");
  if (!ctx.hasAttr("perm"))
    perm = llvm::to_vector(
        llvm::reverse(llvm::seq<int64_t>(0, shapeOf(x).size())));
  Value y = ctx.transpose(x, perm);
  return ctx.result(y);
}

static LogicalResult importFlatten(NodeContext &ctx) {
  Value x = ctx.input(0);
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size(), axis = ctx.getInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return ctx.emitError() << "axis " << ctx.getInt("axis", 1)
                           << " is out of range for rank " << rank;
  Value y = ctx.reshape(x, {shapes::numElements(shape.take_front(axis)),
                            shapes::numElements(shape.drop_front(axis))});
  return ctx.result(y);
}

static LogicalResult importConcat(NodeContext &ctx) {
  SmallVector<Value> inputs;
  SmallVector<ArrayRef<int64_t>> shapes;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    inputs.push_back(ctx.input(i));
    shapes.push_back(shapeOf(inputs.back()));
    if (elementTypeOf(inputs.back()) != elementTypeOf(inputs[0]))
      return ctx.emitError()
             << "input element types differ: " << inputs[0].getType() << " and "
             << inputs.back().getType();
  }
  if (ctx.opset >= 4 && !ctx.hasAttr("axis"))
    return ctx.emitError() << "attribute 'axis' is required";
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 1), shapes[0].size());
  if (failed(axis))
    return failure();
  ctx.setResult(0, ctx.concat(inputs, *axis));
  return success();
}

static LogicalResult importSplit(NodeContext &ctx) {
  Value x = ctx.input(0);
  ArrayRef<int64_t> shape = shapeOf(x);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), shape.size());
  if (failed(axis))
    return failure();
  int64_t pieces = ctx.node.output_size();
  SmallVector<int64_t> sizes;
  if (ctx.input(1)) { // opset 1 and 13+
    FailureOr<SmallVector<int64_t>> given = ctx.constInts(1);
    if (failed(given))
      return failure();
    sizes = *given;
  } else if (ctx.opset < 13) {
    sizes = ctx.getInts("split");
  }
  int64_t d = shape[*axis];
  bool hasNumOutputs = ctx.opset >= 18 && ctx.hasAttr("num_outputs");
  if (hasNumOutputs && !sizes.empty())
    return ctx.emitError() << "split and num_outputs are both given";
  if (sizes.empty()) {
    if (ShapedType::isDynamic(d))
      return ctx.emitError() << "splitting a dynamic dimension needs sizes";
    if (pieces < 1)
      return ctx.emitError() << "a split into no outputs";
    if (hasNumOutputs) {
      // Opset 18: pieces of ceil(d / n), the last one smaller.
      int64_t n = ctx.getInt("num_outputs", 0);
      if (n != pieces)
        return ctx.emitError() << "num_outputs = " << n << " but the node has "
                               << pieces << " outputs";
      int64_t chunk = (d + n - 1) / n;
      if (chunk * (n - 1) > d)
        return ctx.emitError() << "cannot split " << d << " into " << n
                               << " pieces of " << chunk;
      sizes.assign(n - 1, chunk);
      sizes.push_back(d - chunk * (n - 1));
    } else {
      if (d % pieces != 0)
        return ctx.emitError() << "cannot split dimension " << *axis << " ("
                               << d << ") into " << pieces << " equal pieces";
      sizes.assign(pieces, d / pieces);
    }
  }
  if ((int64_t)sizes.size() != pieces)
    return ctx.emitError() << "split gives " << sizes.size() << " sizes for "
                           << pieces << " outputs";
  int64_t total = 0;
  SmallVector<Type> types;
  for (int64_t s : sizes) {
    if (s < 0 || s > kMaxElements)
      return ctx.emitError() << "invalid split size " << s;
    total += s;
    SmallVector<int64_t> piece(shape);
    piece[*axis] = s;
    types.push_back(RankedTensorType::get(piece, elementTypeOf(x)));
  }
  if (!ShapedType::isDynamic(d) && total != d)
    return ctx.emitError() << "split sizes " << shapes::str(sizes)
                           << " do not add up to dimension " << *axis << " ("
                           << d << ")";
  FailureOr<SmallVector<Value>> split = ctx.builder().create(
      SplitOp::getOperationName(), {x},
      {ctx.attr("axis", ctx.b.getI64IntegerAttr(*axis))}, types);
  if (failed(split))
    return failure();
  for (auto [i, r] : llvm::enumerate(*split))
    ctx.setResult(i, r);
  return success();
}

/// Whether `v` is one size of a dynamic dimension (kRunTimeSize).
static bool isRunTimeSize(Value v) {
  return v && shapes::numElements(shapeOf(v)) == 1 && holdsRunTimeSize(v);
}

/// `end - start` when the graph makes it a constant: `end` is `start`
/// plus a constant, seen through the reshapes Unsqueeze makes (a loop
/// body's Slice(x, i, i + 1)).
static std::optional<SmallVector<int64_t>> constantDifference(Value end,
                                                              Value start) {
  auto shapeTo = [](Value v) {
    while (auto r = v.getDefiningOp<ReshapeOp>())
      v = r.getInput();
    return v;
  };
  auto add = shapeTo(end).getDefiningOp<AddOp>();
  if (!add)
    return std::nullopt;
  for (auto [from, by] : {std::pair(add.getLhs(), add.getRhs()),
                          std::pair(add.getRhs(), add.getLhs())}) {
    DenseIntElementsAttr c;
    if (shapeTo(from) != shapeTo(start) || !matchPattern(by, m_Constant(&c)))
      continue;
    SmallVector<int64_t> diff;
    for (const APInt &v : c.getValues<APInt>())
      diff.push_back(v.getSExtValue());
    int64_t n = shapes::numElements(shapeOf(start));
    if (diff.size() == 1 && n > 1)
      diff.assign(n, diff.front());
    if ((int64_t)diff.size() == n)
      return diff;
  }
  return std::nullopt;
}

/// Slice whose starts are known only at run time but whose ends are the
/// starts plus constants: the sizes are those constants (steps of 1), the
/// elements gathered from the run's starts, each clamped so that the
/// window lies inside its dimension.
static LogicalResult importRunTimeSlice(NodeContext &ctx) {
  Value x = ctx.input(0), starts = ctx.input(1);
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  std::optional<SmallVector<int64_t>> sizes =
      constantDifference(ctx.input(2), starts);
  SmallVector<int64_t> axes;
  if (ctx.input(3)) {
    FailureOr<SmallVector<int64_t>> a = ctx.constInts(3);
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, sizes->size()));
  }
  if (ctx.input(4)) {
    FailureOr<SmallVector<int64_t>> st = ctx.constInts(4);
    if (failed(st))
      return failure();
    if (llvm::any_of(*st, [](int64_t v) { return v != 1; }))
      return ctx.emitError() << "a slice from starts known only at run time "
                                "takes steps of 1 only";
  }
  if (axes.size() != sizes->size())
    return ctx.emitError() << "starts, ends and axes differ in length";
  Type i64 = ctx.b.getI64Type();
  Value flat = ctx.reshape(ctx.castTo(starts, i64), {(int64_t)axes.size()});
  Value y = x;
  SmallVector<int64_t> seen;
  for (auto [k, a] : llvm::enumerate(axes)) {
    FailureOr<int64_t> axis = ctx.normalizeAxis(a, rank);
    if (failed(axis))
      return failure();
    if (llvm::is_contained(seen, *axis))
      return ctx.emitError() << "axis " << a << " is sliced twice";
    seen.push_back(*axis);
    int64_t d = shape[*axis];
    if (ShapedType::isDynamic(d))
      return ctx.emitError()
             << "slicing dynamic dimension " << *axis << " is not supported";
    int64_t n = std::clamp<int64_t>((*sizes)[k], 0, d);
    if (n == d)
      continue; // the whole dimension, wherever it starts
    // start (negative: from the end), clamped to [0, d - n].
    Value s = ctx.elementAt(flat, k);
    s = ctx.wrapNegative(s, ctx.scalar(i64, d));
    s = ctx.binary<MinOp>(ctx.binary<MaxOp>(s, ctx.scalar(i64, 0)),
                          ctx.scalar(i64, d - n));
    Value index = ctx.binary<AddOp>(ctx.iota(n, i64), s);
    y = ctx.gather(y, index, *axis);
  }
  return ctx.result(y);
}

/// Slice whose starts or ends are known only at run time (axes and steps
/// constant): along each sliced axis a size that depends on the data, at
/// most the axis. Every position from the start in the step's direction
/// is gathered (the axis's size of them) and the result trimmed to the
/// count ONNX's clamping gives (one axis: the output's size; several: one
/// per dimension, NAME_<d>).
static LogicalResult importRunTimeBoundsSlice(NodeContext &ctx) {
  Value x = ctx.input(0);
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  int64_t k = shapes::numElements(shapeOf(ctx.input(1)));
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, k));
  SmallVector<int64_t> steps(k, 1);
  if (ctx.input(3)) {
    FailureOr<SmallVector<int64_t>> a = ctx.constInts(3);
    if (failed(a))
      return failure();
    axes = *a;
  }
  if (ctx.input(4)) {
    FailureOr<SmallVector<int64_t>> st = ctx.constInts(4);
    if (failed(st))
      return failure();
    steps = *st;
  }
  if (int64_t(axes.size()) != k || int64_t(steps.size()) != k)
    return ctx.emitError() << "starts, ends, axes and steps differ in length";
  Type i64 = ctx.b.getI64Type();
  auto c = [&](int64_t v) { return ctx.scalar(i64, (double)v); };
  auto clamp = [&](Value v, int64_t lo, int64_t hi) {
    return ctx.binary<MinOp>(ctx.binary<MaxOp>(v, c(lo)), c(hi));
  };
  Value starts = ctx.reshape(ctx.castTo(ctx.input(1), i64), {k});
  Value ends = ctx.reshape(ctx.castTo(ctx.input(2), i64), {k});
  Value y = x;
  SmallVector<int64_t> seen;
  SmallVector<std::pair<int64_t, Value>> counts;
  for (int64_t j = 0; j < k; ++j) {
    FailureOr<int64_t> axis = ctx.normalizeAxis(axes[j], rank);
    if (failed(axis))
      return failure();
    if (llvm::is_contained(seen, *axis))
      return ctx.emitError() << "axis " << axes[j] << " is sliced twice";
    seen.push_back(*axis);
    int64_t d = shape[*axis], step = steps[j];
    if (step == 0)
      return ctx.emitError() << "step of axis " << *axis << " is zero";
    if (ShapedType::isDynamic(d))
      return ctx.emitError()
             << "slicing dynamic dimension " << *axis << " is not supported";
    if (d == 0)
      continue; // (empty whatever the bounds)
    // Negative bounds count from the end, then clamp (ONNX).
    Value start = ctx.wrapNegative(ctx.elementAt(starts, j), c(d)),
          end = ctx.wrapNegative(ctx.elementAt(ends, j), c(d)), span;
    if (step > 0) {
      start = clamp(start, 0, d);
      end = clamp(end, 0, d);
      span = ctx.binary<SubOp>(end, start);
    } else {
      start = clamp(start, 0, d - 1);
      end = clamp(end, -1, d - 1);
      span = ctx.binary<SubOp>(start, end);
    }
    int64_t magnitude = step > 0 ? step : -step;
    Value count = ctx.binary<MaxOp>(
        ctx.binary<DivOp>(ctx.binary<AddOp>(span, c(magnitude - 1)),
                          c(magnitude)),
        c(0));
    // (Positions past the count are clamped into the axis: trimmed away.)
    Value index = clamp(
        ctx.binary<AddOp>(ctx.binary<MulOp>(ctx.iota(d, i64), c(step)), start),
        0, d - 1);
    y = ctx.gather(y, index, *axis);
    counts.push_back({*axis, count});
  }
  for (auto [axis, count] : counts)
    y = counts.size() == 1 ? ctx.trim(y, count, axis)
                           : ctx.trimDim(y, count, axis);
  return ctx.result(y);
}

/// Whether a Slice (opset 10+) has bounds known only at run time, its axes
/// and steps constant: sizes the run computes.
static bool boundsAtRunTime(NodeContext &ctx) {
  auto constant = [&](unsigned i) {
    return !ctx.input(i) || matchPattern(ctx.input(i), m_Constant());
  };
  auto vector = [&](unsigned i) {
    return ctx.input(i) && shapeOf(ctx.input(i)).size() <= 1 &&
           cast<RankedTensorType>(ctx.input(i).getType()).hasStaticShape() &&
           shapes::numElements(shapeOf(ctx.input(i))) >= 1 &&
           !isRunTimeSize(ctx.input(i));
  };
  return vector(1) && vector(2) &&
         shapes::numElements(shapeOf(ctx.input(1))) ==
             shapes::numElements(shapeOf(ctx.input(2))) &&
         (!constant(1) || !constant(2)) && constant(3) && constant(4);
}

static LogicalResult importSlice(NodeContext &ctx) {
  Value x = ctx.input(0);
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  SmallVector<int64_t> starts, ends, axes, steps;
  bool hasAxes;
  // (Other bounds known only at run time are refused below: "must be a
  // constant".)
  if (ctx.opset >= 10 && ctx.input(1) && ctx.input(2) &&
      !matchPattern(ctx.input(1), m_Constant()) &&
      constantDifference(ctx.input(2), ctx.input(1)))
    return importRunTimeSlice(ctx);
  if (ctx.opset < 10) {
    starts = ctx.getInts("starts");
    ends = ctx.getInts("ends");
    hasAxes = ctx.hasAttr("axes");
    axes = ctx.getInts("axes");
  } else {
    // (Axes and steps first: with them constant, bounds known only at run
    // time compile.)
    hasAxes = (bool)ctx.input(3);
    if (hasAxes) {
      auto a = ctx.constInts(3);
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (ctx.input(4)) {
      auto st = ctx.constInts(4);
      if (failed(st))
        return failure();
      steps = *st;
    }
    if (boundsAtRunTime(ctx))
      return importRunTimeBoundsSlice(ctx);
    auto s = ctx.constInts(1), e = ctx.constInts(2);
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
  }
  if (ctx.hasError())
    return failure();
  size_t n = starts.size();
  if (!hasAxes)
    axes = llvm::to_vector(llvm::seq<int64_t>(0, n));
  if (steps.empty())
    steps.assign(n, 1);
  if (ends.size() != n || axes.size() != n || steps.size() != n)
    return ctx.emitError() << "starts, ends, axes and steps differ in length";
  SmallVector<int64_t> normalized;
  for (int64_t a : axes) {
    FailureOr<int64_t> axis = ctx.normalizeAxis(a, rank);
    if (failed(axis))
      return failure();
    if (llvm::is_contained(normalized, *axis))
      return ctx.emitError() << "axis " << a << " is sliced twice";
    normalized.push_back(*axis);
  }
  SmallVector<int64_t> offsets(rank, 0), strides(rank, 1), out(shape);
  for (size_t k = 0; k < n; ++k) {
    int64_t a = normalized[k], d = shape[a], step = steps[k];
    if (step == 0)
      return ctx.emitError() << "step of axis " << a << " is zero";
    // To the size of a dynamic dimension (from Shape): the first n of a
    // fixed dimension, n known at run time (a buffer cut to the sequence).
    if (starts[k] == kRunTimeSize || ends[k] == kRunTimeSize) {
      if (starts[k] != 0 || step != 1 || ShapedType::isDynamic(d))
        return ctx.emitError()
               << "axis " << a
               << " is sliced at a size known only at run time; tcc takes "
                  "such a slice only from 0 in steps of 1 of a fixed "
                  "dimension";
      out[a] = kDyn;
      continue;
    }
    if (ShapedType::isDynamic(d))
      return ctx.emitError()
             << "slicing dynamic dimension " << a << " is not supported";
    // ONNX semantics: negative bounds count from the end, then clamp.
    int64_t start = starts[k], end = ends[k], count;
    if (start < 0)
      start += d;
    if (end < 0)
      end += d;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, d);
      end = std::clamp<int64_t>(end, 0, d);
      step = std::min(step, std::max<int64_t>(d, 1));
      count = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, d - 1);
      end = std::clamp<int64_t>(end, -1, d - 1);
      step = std::max(step, -std::max<int64_t>(d, 1));
      count = start > end ? (start - end - step - 1) / -step : 0;
    }
    offsets[a] = count ? start : 0;
    strides[a] = step;
    out[a] = count;
  }
  ctx.setResult(0, ctx.check(ctx.builder().slice(x, offsets, strides, out)));
  return success();
}

static LogicalResult importGather(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1);
  Type it = elementTypeOf(indices);
  if (!it.isSignlessInteger(32) && !it.isSignlessInteger(64))
    return ctx.emitError() << "indices must be int32 or int64; got "
                           << indices.getType();
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), shapeOf(data).size());
  if (failed(axis))
    return failure();
  int64_t d = shapeOf(data)[*axis];
  DenseElementsAttr constIndices;
  if (!ShapedType::isDynamic(d) &&
      matchPattern(indices, m_Constant(&constIndices)))
    for (const APInt &i : constIndices.getValues<APInt>())
      if (i.getSExtValue() < -d || i.getSExtValue() >= d)
        return ctx.emitError() << "index " << i.getSExtValue()
                               << " is out of range for dimension " << d;
  ctx.setResult(0, ctx.gather(data, indices, *axis));
  return success();
}

/// The axes of Squeeze/Unsqueeze: an attribute before opset 13, then an
/// input.
static FailureOr<SmallVector<int64_t>> squeezeAxes(NodeContext &ctx) {
  if (ctx.opset < 13)
    return ctx.getInts("axes");
  if (!ctx.input(1))
    return SmallVector<int64_t>();
  return ctx.constInts(1);
}

static LogicalResult importUnsqueeze(NodeContext &ctx) {
  Value x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> axes = squeezeAxes(ctx);
  if (failed(axes) || ctx.hasError())
    return failure();
  if (axes->empty())
    return ctx.emitError() << "axes are required";
  int64_t rank = shapeOf(x).size() + axes->size();
  FailureOr<SmallVector<int64_t>> sorted = ctx.normalizeAxes(*axes, rank);
  if (failed(sorted))
    return failure();
  SmallVector<int64_t> out;
  auto next = shapeOf(x).begin();
  for (int64_t i = 0; i < rank; ++i)
    out.push_back(llvm::is_contained(*sorted, i) ? 1 : *next++);
  Value y = ctx.reshape(x, out);
  return ctx.result(y);
}

static LogicalResult importSqueeze(NodeContext &ctx) {
  Value x = ctx.input(0);
  ArrayRef<int64_t> shape = shapeOf(x);
  FailureOr<SmallVector<int64_t>> axes = squeezeAxes(ctx);
  if (failed(axes) || ctx.hasError())
    return failure();
  SmallVector<int64_t> out;
  if (axes->empty()) {
    if (llvm::any_of(shape, ShapedType::isDynamic))
      return ctx.emitError() << "squeezing " << shapes::str(shape)
                             << " needs axes (its size-1 dimensions are "
                                "not all known)";
    llvm::copy_if(shape, std::back_inserter(out),
                  [](int64_t d) { return d != 1; });
  } else {
    FailureOr<SmallVector<int64_t>> sorted =
        ctx.normalizeAxes(*axes, shape.size());
    if (failed(sorted))
      return failure();
    for (auto [i, d] : llvm::enumerate(shape)) {
      if (!llvm::is_contained(*sorted, (int64_t)i)) {
        out.push_back(d);
        continue;
      }
      if (d != 1 && !ShapedType::isDynamic(d))
        return ctx.emitError()
               << "cannot squeeze dimension " << i << " of size " << d;
    }
  }
  Value y = ctx.reshape(x, out);
  return ctx.result(y);
}

static LogicalResult importShape(NodeContext &ctx) {
  ArrayRef<int64_t> shape = shapeOf(ctx.input(0));
  int64_t rank = shape.size(), start = 0, end = rank;
  if (ctx.opset >= 15) {
    start = ctx.getInt("start", 0);
    end = ctx.getInt("end", rank);
  }
  auto clampIndex = [&](int64_t i) {
    return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
  };
  start = clampIndex(start);
  end = std::max(start, clampIndex(end));
  // A dynamic dimension's size is kRunTimeSize, which only shape code and
  // the targets of Reshape and Expand may read.
  SmallVector<int64_t> dims(shape.slice(start, end - start));
  for (int64_t &d : dims)
    if (ShapedType::isDynamic(d))
      d = kRunTimeSize;
  auto type = RankedTensorType::get({(int64_t)dims.size()}, ctx.b.getI64Type());
  ctx.setResult(0, ctx.constant(DenseElementsAttr::get(type, ArrayRef(dims))));
  return success();
}

static LogicalResult importConstant(NodeContext &ctx) {
  static const char *const kinds[] = {
      "value",      "value_float",  "value_floats", "value_int",
      "value_ints", "sparse_value", "value_string", "value_strings"};
  int given =
      llvm::count_if(kinds, [&](const char *k) { return ctx.hasAttr(k); });
  if (given != 1)
    return ctx.emitError() << "needs exactly one value attribute; got "
                           << given;
  Builder &b = ctx.b;
  ElementsAttr value;
  if (ctx.hasAttr("value")) {
    FailureOr<ElementsAttr> converted = ctx.convertTensorAttr("value");
    if (failed(converted))
      return failure();
    value = *converted;
  } else if (ctx.hasAttr("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                   (float)ctx.getFloat("value_float", 0));
  } else if (ctx.hasAttr("value_floats")) {
    SmallVector<float> v = ctx.getFloats("value_floats");
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)v.size()}, b.getF32Type()),
        ArrayRef<float>(v));
  } else if (ctx.hasAttr("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   ctx.getInt("value_int", 0));
  } else if (ctx.hasAttr("value_ints")) {
    SmallVector<int64_t> v = ctx.getInts("value_ints");
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)v.size()}, b.getI64Type()),
        ArrayRef<int64_t>(v));
  } else {
    for (const char *k : {"sparse_value", "value_string", "value_strings"})
      if (ctx.hasAttr(k))
        return ctx.emitError() << "attribute '" << k << "' is not supported";
  }
  if (ctx.hasError())
    return failure();
  ctx.setResult(0, ctx.constant(value));
  return success();
}

/// ConstantOfShape's fill: its `value` (one element), else 0.0f.
static FailureOr<Attribute> fillOf(NodeContext &ctx) {
  if (!ctx.hasAttr("value"))
    return Attribute(ctx.b.getF32FloatAttr(0));
  FailureOr<ElementsAttr> value = ctx.convertTensorAttr("value");
  if (failed(value))
    return failure();
  auto dense = dyn_cast<DenseElementsAttr>(*value);
  if (!dense || dense.getNumElements() != 1) {
    ctx.emitError() << "attribute 'value' must hold one element";
    return failure();
  }
  return dense.getSplatValue<Attribute>();
}

static LogicalResult importConstantOfShape(NodeContext &ctx) {
  // A rank-1 shape known only at run time: a length the run computes, up
  // to the bound --dim gives it.
  Value given = ctx.input(0);
  if (!matchPattern(given, m_Constant()) && shapeOf(given).size() == 1 &&
      shapeOf(given)[0] == 1) {
    FailureOr<int64_t> bound = ctx.computedSizeBound("the size of the result");
    if (failed(bound))
      return failure();
    FailureOr<Attribute> fill = fillOf(ctx);
    if (failed(fill))
      return failure();
    RankedTensorType type =
        ctx.tensorType({*bound}, cast<TypedAttr>(*fill).getType());
    if (!type)
      return failure();
    Value count = ctx.reshape(ctx.castTo(given, ctx.b.getI64Type()), {});
    return ctx.result(
        ctx.trim(ctx.constant(DenseElementsAttr::get(type, *fill)), count, 0));
  }
  FailureOr<SmallVector<int64_t>> shape = ctx.constInts(0);
  if (failed(shape))
    return failure();
  bool dynamic = false;
  SmallVector<int64_t> target = *shape;
  for (int64_t &d : *shape) {
    if (d == kRunTimeSize) { // a dynamic dimension's size (Shape)
      d = 1;
      dynamic = true;
    } else if (d < 0) {
      return ctx.emitError() << "shape has a negative dimension " << d;
    }
  }
  FailureOr<Attribute> fillValue = fillOf(ctx);
  if (failed(fillValue))
    return failure();
  Attribute fill = *fillValue;
  Type et = cast<TypedAttr>(fill).getType();
  RankedTensorType type = ctx.tensorType(*shape, et);
  if (!type)
    return failure();
  Value y = ctx.constant(DenseElementsAttr::get(type, fill));
  // The fill broadcast to the dynamic dimensions (kept 1 above).
  if (dynamic) {
    for (int64_t &d : target)
      if (d == kRunTimeSize)
        d = kDyn;
    y = ctx.broadcastTo(y, target);
  }
  ctx.setResult(0, y);
  return success();
}

/// Expand to a shape known only at run time: where the input's size is 1
/// (or it has no dimension) the result takes its size from the shape, a
/// size the run computes up to the bound --dim gives it; where it is not,
/// the result keeps the input's.
static FailureOr<Value> expandAtRunTime(NodeContext &ctx) {
  Value x = ctx.input(0), given = ctx.input(1);
  ArrayRef<int64_t> in = shapeOf(x);
  int64_t length = shapeOf(given)[0];
  int64_t rank = std::max<int64_t>(in.size(), length);
  SmallVector<int64_t> out(rank, 1);
  SmallVector<int64_t> computed;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t at = i - (rank - (int64_t)in.size());
    int64_t d = at >= 0 ? in[at] : 1;
    out[i] = d;
    if (d != 1 || i < rank - length)
      continue;
    computed.push_back(i);
    out[i] = kDyn;
  }
  if (computed.empty())
    return ctx.broadcastTo(x, out); // every size is the input's
  FailureOr<SmallVector<int64_t>> box =
      ctx.computedBox("the expanded size", out);
  if (failed(box))
    return failure();
  Type i64 = ctx.b.getI64Type();
  Value y = ctx.broadcastTo(x, *box);
  for (int64_t i : computed) {
    y = ctx.trimDim(
        y, ctx.elementAt(ctx.castTo(given, i64), i - (rank - length)), i);
  }
  return y;
}

static LogicalResult importExpand(NodeContext &ctx) {
  Value x = ctx.input(0);
  Value given = ctx.input(1);
  if (given && !matchPattern(given, m_Constant()) &&
      shapeOf(given).size() == 1 && !ShapedType::isDynamic(shapeOf(given)[0]) &&
      cast<RankedTensorType>(x.getType()).hasStaticShape()) {
    FailureOr<Value> y = expandAtRunTime(ctx);
    if (failed(y))
      return failure();
    return ctx.result(*y);
  }
  FailureOr<SmallVector<int64_t>> target = ctx.constInts(1);
  if (failed(target))
    return failure();
  for (int64_t &d : *target) {
    if (d == kRunTimeSize) // a dynamic dimension's size (Shape)
      d = kDyn;
    else if (d < 0)
      return ctx.emitError() << "shape has a negative dimension " << d;
  }
  // Expand broadcasts both ways: a 1 in the shape keeps the input's size.
  FailureOr<shapes::Shape> shape =
      shapes::broadcast({shapeOf(x), *target}, ctx.errorFn());
  if (failed(shape))
    return failure();
  Value y = ctx.broadcastTo(x, *shape);
  return ctx.result(y);
}

/// Pad (opset 11+) by pads known only at run time: along each padded axis
/// the result holds its --dim bound of positions, each taking the input
/// element its mode maps it to (a gather of clamped indices; outside the
/// input, the constant), trimmed to in + before + after.
static LogicalResult padAtRunTime(NodeContext &ctx, PadMode mode) {
  Value x = ctx.input(0);
  if (failed(ctx.requireStatic(x)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  Type i64 = ctx.b.getI64Type();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (ctx.input(3)) {
    FailureOr<SmallVector<int64_t>> a = ctx.constInts(3);
    if (failed(a))
      return failure();
    axes = *a;
    if (failed(ctx.normalizeAxes(axes, rank)))
      return failure();
    for (int64_t &a : axes)
      a = a < 0 ? a + rank : a;
  }
  size_t n = axes.size();
  Value pads = ctx.input(1);
  if (!elementTypeOf(pads).isInteger(64) || shapeOf(pads).size() != 1 ||
      shapeOf(pads)[0] != int64_t(2 * n))
    return ctx.emitError() << "pads must be " << 2 * n << " int64 values; got "
                           << pads.getType();
  // (The constant may be known only at run time too: it decides no shape.)
  Value fill =
      ctx.input(2) ? ctx.reshape(ctx.input(2), {}) : ctx.scalarLike(x, 0);
  if (elementTypeOf(fill) != elementTypeOf(x))
    return ctx.emitError() << "the constant value's type " << fill.getType()
                           << " differs from the data's";
  SmallVector<int64_t> computed(shape);
  for (int64_t a : axes)
    computed[a] = ShapedType::kDynamic;
  FailureOr<SmallVector<int64_t>> box =
      ctx.computedBox("the padded size", computed);
  if (failed(box))
    return failure();
  SmallVector<int64_t> bounds;
  for (int64_t a : axes)
    bounds.push_back((*box)[a]);
  Value y = x, valid;
  SmallVector<Value> counts;
  for (auto [k, a] : llvm::enumerate(axes)) {
    int64_t size = shape[a];
    if (size == 0 && mode != PadMode::constant)
      return ctx.emitError() << stringifyPadMode(mode)
                             << " padding of dimension " << a << " of size 0";
    Value before = ctx.elementAt(pads, k), after = ctx.elementAt(pads, k + n);
    Value in = ctx.scalar(i64, double(size));
    counts.push_back(ctx.binary<AddOp>(ctx.binary<AddOp>(in, before), after));
    // The source position of each result position, in [0, size).
    Value j = ctx.binary<SubOp>(ctx.iota(bounds[k], i64), before);
    Value last = ctx.scalar(i64, double(std::max<int64_t>(size - 1, 0)));
    Value zero = ctx.scalar(i64, 0);
    auto clamped = [&](Value v) {
      return ctx.binary<MinOp>(ctx.binary<MaxOp>(v, zero), last);
    };
    Value src;
    if (mode == PadMode::constant || mode == PadMode::edge) {
      src = clamped(j);
    } else if (mode == PadMode::wrap) {
      src = ctx.binary<RemOp>(j, in); // (Python's %: in [0, size))
    } else { // reflect: |j| folded back at both ends, period 2 (size - 1)
      Value period =
          ctx.scalar(i64, double(std::max<int64_t>(2 * (size - 1), 1)));
      Value m = ctx.binary<RemOp>(ctx.unary<AbsOp>(j), period);
      src = ctx.select(ctx.compare(ComparePredicate::lt, m, in), m,
                       ctx.binary<SubOp>(period, m));
      src = clamped(src);
    }
    if (size == 0) { // (Nothing to gather: every position is the constant.)
      SmallVector<int64_t> full(shapeOf(y));
      full[a] = bounds[k];
      y = ctx.broadcastTo(fill, full);
    } else {
      y = ctx.gather(y, src, a);
    }
    if (mode == PadMode::constant) {
      SmallVector<int64_t> at(rank, 1);
      at[a] = bounds[k];
      Value inside = ctx.reshape(
          ctx.binary<AndOp>(ctx.compare(ComparePredicate::ge, j, zero),
                            ctx.compare(ComparePredicate::lt, j, in)),
          at);
      valid = valid ? ctx.binary<AndOp>(valid, inside) : inside;
    }
  }
  if (valid)
    y = ctx.select(valid, y, fill);
  for (auto [k, a] : llvm::enumerate(axes))
    y = ctx.trimDim(y, counts[k], a);
  return ctx.result(y);
}

static LogicalResult importPad(NodeContext &ctx) {
  Value x = ctx.input(0);
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  std::string modeName = ctx.getString("mode", "constant");
  std::optional<PadMode> mode = symbolizePadMode(modeName);
  if (!mode || (*mode == PadMode::wrap && ctx.opset < 19))
    return ctx.unsupportedValue("mode", modeName);
  SmallVector<int64_t> pads, axes;
  double value = 0;
  if (ctx.opset < 11) {
    pads = ctx.getInts(ctx.opset < 2 ? "paddings" : "pads");
    value = ctx.getFloat("value", 0);
  } else {
    // Pads known only at run time (not sizes from Shape): each padded
    // dimension a size the run computes.
    if (!matchPattern(ctx.input(1), m_Constant()) &&
        !holdsRunTimeSize(ctx.input(1)))
      return padAtRunTime(ctx, *mode);
    FailureOr<SmallVector<int64_t>> p = ctx.constInts(1);
    if (failed(p))
      return failure();
    pads = *p;
    if (ctx.input(2)) {
      FailureOr<double> v = ctx.constScalar(2);
      if (failed(v))
        return failure();
      value = *v;
    }
    if (ctx.input(3)) {
      FailureOr<SmallVector<int64_t>> a = ctx.constInts(3);
      if (failed(a))
        return failure();
      axes = *a;
    }
  }
  if (ctx.hasError())
    return failure();
  // Bounded so that cropping arithmetic cannot overflow.
  if (llvm::any_of(pads, [](int64_t p) {
        return p < -kMaxElements || p > kMaxElements;
      }))
    return ctx.emitError() << "pads hold a value out of range";
  if (axes.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  FailureOr<SmallVector<int64_t>> sorted = ctx.normalizeAxes(axes, rank);
  if (failed(sorted))
    return failure();
  size_t n = axes.size();
  if (pads.size() != 2 * n)
    return ctx.emitError() << "pads has " << pads.size() << " entries for " << n
                           << " axes";
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (size_t k = 0; k < n; ++k) {
    int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
    low[a] = pads[k];
    high[a] = pads[k + n];
  }
  // Negative pads crop: a slice first, then a pad by what is left.
  SmallVector<int64_t> offsets(rank, 0), steps(rank, 1), cropped(shape);
  bool crop = false;
  for (int64_t i = 0; i < rank; ++i) {
    if (low[i] >= 0 && high[i] >= 0)
      continue;
    if (ShapedType::isDynamic(shape[i]))
      return ctx.emitError() << "negative pads on dynamic dimension " << i
                             << " are not supported";
    crop = true;
    offsets[i] = -std::min<int64_t>(low[i], 0);
    cropped[i] =
        shape[i] + std::min<int64_t>(low[i], 0) + std::min<int64_t>(high[i], 0);
    if (cropped[i] < 0)
      return ctx.emitError() << "pads crop dimension " << i << " of size "
                             << shape[i] << " below zero";
    if (!cropped[i])
      offsets[i] = 0;
    low[i] = std::max<int64_t>(low[i], 0);
    high[i] = std::max<int64_t>(high[i], 0);
  }
  if (crop)
    x = ctx.check(ctx.builder().slice(x, offsets, steps, cropped));
  for (int64_t i = 0; i < rank; ++i) {
    int64_t d = shapeOf(x)[i], p = std::max(low[i], high[i]);
    if (ShapedType::isDynamic(d) || p == 0)
      continue;
    if ((*mode == PadMode::reflect && p >= d) ||
        (*mode != PadMode::constant && d == 0))
      return ctx.emitError()
             << modeName << " padding of " << p << " does not fit dimension "
             << i << " of size " << d;
  }
  ctx.setResult(0, ctx.pad(x, low, high, value, *mode));
  return success();
}

static LogicalResult importRange(NodeContext &ctx) {
  ctx.ignoreAttrs({"stash_type"}); // computed in double/int64 here
  Type et = elementTypeOf(ctx.input(0));
  for (unsigned i = 1; i < 3; ++i)
    if (elementTypeOf(ctx.input(i)) != et)
      return ctx.emitError() << "start, limit and delta differ in type";
  bool isFloat = isa<FloatType>(et);
  if (!isFloat && (!isa<IntegerType>(et) || et.isInteger(1)))
    return ctx.emitError() << "unsupported element type " << et;
  // Bounds known only at run time (not a size from Shape): a length the
  // run computes, up to the bound --dim gives it.
  bool runTime = llvm::any_of(llvm::seq(0u, 3u), [&](unsigned i) {
    return !matchPattern(ctx.input(i), m_Constant());
  });
  if (runTime) {
    FailureOr<int64_t> bound = ctx.computedSizeBound("the length of the range");
    if (failed(bound))
      return failure();
    Type f64 = ctx.b.getF64Type(), i64 = ctx.b.getI64Type();
    auto scalar = [&](unsigned i, Type t) {
      return ctx.castTo(ctx.reshape(ctx.input(i), {}), t);
    };
    // max(ceil((limit - start) / delta), 0), in double as ONNX defines it.
    Value count = ctx.castTo(
        ctx.binary<MaxOp>(ctx.unary<CeilOp>(ctx.binary<DivOp>(
                              ctx.binary<SubOp>(scalar(1, f64), scalar(0, f64)),
                              scalar(2, f64))),
                          ctx.scalar(f64, 0)),
        i64);
    Value values = ctx.binary<AddOp>(
        ctx.binary<MulOp>(ctx.iota(*bound, et), scalar(2, et)), scalar(0, et));
    return ctx.result(ctx.trim(values, count, 0));
  }
  FailureOr<double> start = ctx.constScalar(0), limit = ctx.constScalar(1),
                    delta = ctx.constScalar(2);
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  if (*delta == 0)
    return ctx.emitError() << "delta is zero";
  // To the size of a dynamic dimension (from Shape): its positions.
  if (isRunTimeSize(ctx.input(1))) {
    if (*start != 0 || *delta != 1) {
      auto str = [](double v) {
        return v == std::trunc(v) && std::abs(v) < 0x1p62
                   ? std::to_string((int64_t)v)
                   : llvm::formatv("{0}", v).str();
      };
      return ctx.emitError()
             << "a range to a size known only at run time must start at 0 "
                "in steps of 1; got start "
             << str(*start) << " and delta " << str(*delta);
    }
    return ctx.result(ctx.iota(kDyn, et, 0, 1, /*dynamic=*/true));
  }
  double count = std::max(0.0, std::ceil((*limit - *start) / *delta));
  // Checked before the values are computed: a tiny delta asks for a huge
  // constant (NaN bounds make count NaN).
  if (!(count <= (double)ctx.limits.maxElements))
    return ctx.emitError() << "the range of " << count
                           << " elements is more than the limit of "
                           << ctx.limits.maxElements
                           << "; raise it with --max-elements";
  RankedTensorType type = ctx.tensorType({(int64_t)count}, et);
  if (!type)
    return failure();
  unsigned bytes = et.getIntOrFloatBitWidth() / 8;
  SmallVector<char> raw((size_t)count * bytes);
  for (int64_t i = 0; i < (int64_t)count; ++i) {
    char *dst = raw.data() + i * bytes;
    if (et.isF64()) {
      double v = *start + i * *delta;
      std::memcpy(dst, &v, bytes);
    } else if (isFloat) {
      APFloat v(*start + i * *delta);
      bool lost;
      v.convert(cast<FloatType>(et).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
      uint64_t bits = v.bitcastToAPInt().getZExtValue();
      std::memcpy(dst, &bits, bytes);
    } else {
      // Saturating casts and wrapping steps: a hostile range must not be
      // undefined behaviour (its values are truncated to the type anyway).
      auto toInt = [](double d) -> int64_t {
        return d >= 0x1p63 ? INT64_MAX : d <= -0x1p63 ? INT64_MIN : (int64_t)d;
      };
      int64_t v = (int64_t)((uint64_t)toInt(*start) +
                            (uint64_t)i * (uint64_t)toInt(*delta));
      std::memcpy(dst, &v, bytes);
    }
  }
  ctx.setResult(0, ctx.constant(makeElements(type, raw, "range")));
  return success();
}

static LogicalResult importTile(NodeContext &ctx) {
  Value x = ctx.input(0);
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  SmallVector<int64_t> repeats;
  if (ctx.opset < 6) {
    // Tile-1: `tiles` copies along `axis`, both scalar inputs.
    FailureOr<double> tiles = ctx.constScalar(1), axis = ctx.constScalar(2);
    if (failed(tiles) || failed(axis))
      return failure();
    FailureOr<int64_t> a = ctx.normalizeAxis(saturatingInt(*axis), rank);
    if (failed(a))
      return failure();
    repeats.assign(rank, 1);
    repeats[*a] = saturatingInt(*tiles);
  } else if (!matchPattern(ctx.input(1), m_Constant()) &&
             !llvm::any_of(shape, ShapedType::isDynamic) &&
             shapeOf(ctx.input(1)) == ArrayRef<int64_t>{rank}) {
    // Repeats known only at run time: each dimension d * r, a size the run
    // computes up to the bound --dim gives it; position i takes element
    // i mod d (a gather along each dimension), trimmed.
    Value repeatsValue = ctx.castTo(ctx.input(1), ctx.b.getI64Type());
    SmallVector<int64_t> computed(shape);
    for (int64_t d = 0; d < rank; ++d)
      if (shape[d] != 0)
        computed[d] = kDyn;
    FailureOr<SmallVector<int64_t>> box =
        ctx.computedBox("the tiled size", computed);
    if (failed(box))
      return failure();
    Type i64 = ctx.b.getI64Type();
    Value y = x;
    SmallVector<Value> counts(rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (shape[d] == 0)
        continue; // (empty whatever the repeats)
      Value size = ctx.scalar(i64, double(shape[d]));
      counts[d] = ctx.binary<MulOp>(ctx.elementAt(repeatsValue, d), size);
      y = ctx.gather(y, ctx.binary<RemOp>(ctx.iota((*box)[d], i64), size), d);
    }
    for (int64_t d = 0; d < rank; ++d)
      if (counts[d])
        y = ctx.trimDim(y, counts[d], d);
    return ctx.result(y);
  } else {
    FailureOr<SmallVector<int64_t>> r = ctx.constInts(1);
    if (failed(r))
      return failure();
    repeats = *r;
  }
  if ((int64_t)repeats.size() != rank)
    return ctx.emitError() << "repeats has " << repeats.size()
                           << " entries for rank " << rank;
  if (llvm::all_of(repeats, [](int64_t r) { return r == 1; })) {
    ctx.setResult(0, x);
    return success();
  }
  if (llvm::any_of(repeats, [](int64_t r) { return r < 0; }))
    return ctx.emitError() << "repeats " << shapes::str(repeats)
                           << " has a negative entry";
  if (llvm::any_of(shape, ShapedType::isDynamic))
    return ctx.emitError() << "tiling a tensor of dynamic shape "
                           << shapes::str(shape) << " is not supported";
  // Copy r of each dimension d as an outer [r, d] pair: reshape to
  // [1, d0, 1, d1, ...], broadcast to [r0, d0, r1, d1, ...], then merge.
  SmallVector<int64_t> interleaved, broadcast, out;
  for (auto [d, r] : llvm::zip(shape, repeats)) {
    interleaved.append({1, d});
    broadcast.append({r, d});
    if (d && r > kMaxElements / d)
      return ctx.emitError() << "the result holds more than 2^31 elements";
    out.push_back(r * d);
  }
  Value y =
      ctx.reshape(ctx.broadcastTo(ctx.reshape(x, interleaved), broadcast), out);
  return ctx.result(y);
}

void mlir::tcc::onnx::registerShapeOps(OpTable &t) {
  t.add("Reshape", 1, 1, 1, 1, importReshape);
  t.add("Reshape", 5, 2, 2, 1, importReshape);
  t.add("Transpose", 1, 1, 1, 1, importTranspose);
  t.add("Flatten", 1, 1, 1, 1, importFlatten);
  t.add("Concat", 1, 1, kVariadic, 1, importConcat);
  t.add("Split", 1, 1, 2, kVariadic, importSplit);
  t.add("Split", 2, 1, 1, kVariadic, importSplit);
  t.add("Split", 13, 1, 2, kVariadic, importSplit);
  t.add("Slice", 1, 1, 1, 1, importSlice);
  t.add("Slice", 10, 3, 5, 1, importSlice);
  t.add("Gather", 1, 2, 2, 1, importGather);
  t.add("Unsqueeze", 1, 1, 1, 1, importUnsqueeze);
  t.add("Unsqueeze", 13, 2, 2, 1, importUnsqueeze);
  t.add("Squeeze", 1, 1, 1, 1, importSqueeze);
  t.add("Squeeze", 13, 1, 2, 1, importSqueeze);
  t.add("Shape", 1, 1, 1, 1, importShape);
  t.add("Constant", 1, 0, 0, 1, importConstant);
  t.add("ConstantOfShape", 9, 1, 1, 1, importConstantOfShape);
  t.add("Expand", 8, 2, 2, 1, importExpand);
  t.add("Pad", 1, 1, 1, 1, importPad);
  t.add("Pad", 11, 2, 4, 1, importPad);
  t.add("Range", 11, 3, 3, 1, importRange);
  t.add("Tile", 1, 3, 3, 1, importTile);
  t.add("Tile", 6, 2, 2, 1, importTile);
}
