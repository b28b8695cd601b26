//===- IndexingOps.cpp - ONNX gathers, scatters, selection and layout -----===//
//
// GatherElements and GatherND become one tcc.gather from the flattened data
// at computed linear indices; ScatterElements, ScatterND and TensorScatter
// become tcc.scatter (ScatterND on the data seen as [positions, slice]).
// OneHot, Trilu, EyeLike and Hardmax compare against index ramps; TopK and
// CumSum/CumProd have tcc ops; SpaceToDepth/DepthToSpace are reshapes and
// transposes. Ops whose result shape depends on values (Compress, NonZero,
// Unique) are computed at compile time and need those values constant.
//
//===----------------------------------------------------------------------===//

#include "compiler/Frontends/Onnx/NodeContext.h"

#include "mlir/IR/Matchers.h"

#include <map>
#include <numeric>

using namespace mlir;
using namespace mlir::tcc;
using namespace mlir::tcc::onnx;

static LogicalResult requireIndices(NodeContext &ctx, Value v) {
  Type et = elementTypeOf(v);
  if (et.isSignlessInteger(32) || et.isSignlessInteger(64))
    return success();
  return ctx.emitError() << "indices must be int32 or int64; got "
                         << v.getType();
}

/// Row-major strides of a static shape.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

static LogicalResult importGatherElements(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1);
  if (failed(requireIndices(ctx, indices)) || failed(ctx.requireStatic(data)) ||
      failed(ctx.requireStatic(indices, "indices")))
    return failure();
  ArrayRef<int64_t> dshape = shapeOf(data), ishape = shapeOf(indices);
  int64_t rank = dshape.size();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  if ((int64_t)ishape.size() != rank)
    return ctx.emitError() << "indices " << shapes::str(ishape)
                           << " must have the rank of data "
                           << shapes::str(dshape);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && ishape[d] > dshape[d])
      return ctx.emitError()
             << "indices " << shapes::str(ishape) << " exceed data "
             << shapes::str(dshape) << " in dimension " << d;
  Type i64 = ctx.b.getI64Type();
  SmallVector<int64_t> strides = stridesOf(dshape);
  Value idx = ctx.wrapNegative(ctx.castTo(indices, i64),
                               ctx.scalar(i64, dshape[*axis]));
  // Out-of-range indices are clamped by tcc.gather; keep them in range of
  // the axis so they never reach another row.
  idx = ctx.clamp(idx, 0.0, double(dshape[*axis] - 1));
  Value linear = ctx.binary<MulOp>(idx, ctx.scalar(i64, strides[*axis]));
  for (int64_t d = 0; d < rank; ++d) {
    if (d == *axis || ishape[d] == 1)
      continue;
    Value ramp = ctx.binary<MulOp>(ctx.iota(ishape[d], i64, d, rank),
                                   ctx.scalar(i64, strides[d]));
    linear = ctx.binary<AddOp>(linear, ramp);
  }
  Value flat = ctx.reshape(data, {shapes::numElements(dshape)});
  Value y = ctx.gather(flat, linear, 0);
  return ctx.result(y);
}

static LogicalResult importGatherND(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1);
  int64_t b = ctx.opset >= 12 ? ctx.getInt("batch_dims", 0) : 0;
  if (failed(requireIndices(ctx, indices)) || failed(ctx.requireStatic(data)) ||
      failed(ctx.requireStatic(indices, "indices")) || ctx.hasError())
    return failure();
  ArrayRef<int64_t> dshape = shapeOf(data), ishape = shapeOf(indices);
  int64_t r = dshape.size(), q = ishape.size();
  if (q < 1 || b < 0 || b >= std::min(r, q))
    return ctx.emitError() << "batch_dims = " << b << " is out of range";
  int64_t k = ishape.back();
  if (k < 1 || b + k > r)
    return ctx.emitError() << "indices of depth " << k << " do not fit data "
                           << shapes::str(dshape) << " after " << b
                           << " batch dimensions";
  for (int64_t i = 0; i < b; ++i)
    if (ishape[i] != dshape[i])
      return ctx.emitError() << "batch dimension " << i << " differs";
  int64_t batch = shapes::numElements(dshape.take_front(b));
  ArrayRef<int64_t> indexed = dshape.slice(b, k);
  int64_t m = shapes::numElements(indexed);
  ArrayRef<int64_t> rest = dshape.drop_front(b + k);
  int64_t positions = shapes::numElements(ishape.slice(b, q - b - 1));
  Type i64 = ctx.b.getI64Type();
  SmallVector<double> dims, strides;
  for (int64_t d : indexed)
    dims.push_back(d);
  for (int64_t s : stridesOf(indexed))
    strides.push_back(s);
  Value idx = ctx.reshape(ctx.castTo(indices, i64), {batch, positions, k});
  idx = ctx.wrapNegative(idx, ctx.constant({k}, i64, dims));
  Value linear = ctx.reduce<ReduceSumOp>(
      ctx.binary<MulOp>(idx, ctx.constant({k}, i64, strides)), {2}, false);
  if (batch > 1)
    linear =
        ctx.binary<AddOp>(linear, ctx.binary<MulOp>(ctx.iota(batch, i64, 0, 2),
                                                    ctx.scalar(i64, m)));
  SmallVector<int64_t> flatShape = {batch * m};
  flatShape.append(rest.begin(), rest.end());
  Value y = ctx.gather(ctx.reshape(data, flatShape), linear, 0);
  SmallVector<int64_t> out(ishape.drop_back());
  out.append(rest.begin(), rest.end());
  y = ctx.reshape(y, out);
  return ctx.result(y);
}

static FailureOr<ScatterReduction> readReduction(NodeContext &ctx) {
  std::string name = ctx.opset >= 16 ? ctx.getString("reduction", "none")
                                     : std::string("none");
  std::optional<ScatterReduction> r = symbolizeScatterReduction(name);
  if (!r) {
    (void)ctx.unsupportedValue("reduction", name);
    return failure();
  }
  return *r;
}

static Value scatter(NodeContext &ctx, Value data, Value indices, Value updates,
                     int64_t axis, ScatterReduction r) {
  return ctx.scatter(data, indices, updates, axis, r);
}

static LogicalResult importScatterElements(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  FailureOr<ScatterReduction> r = readReduction(ctx);
  if (failed(r) || failed(requireIndices(ctx, indices)))
    return failure();
  if (elementTypeOf(data) != elementTypeOf(updates))
    return ctx.emitError() << "data and updates differ in type";
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), shapeOf(data).size());
  if (failed(axis))
    return failure();
  ctx.setResult(0, scatter(ctx, data, indices, updates, *axis, *r));
  return success();
}

static LogicalResult importScatterND(NodeContext &ctx) {
  Value data = ctx.input(0), indices = ctx.input(1), updates = ctx.input(2);
  FailureOr<ScatterReduction> r = readReduction(ctx);
  if (failed(r) || failed(requireIndices(ctx, indices)) ||
      failed(ctx.requireStatic(data)) ||
      failed(ctx.requireStatic(indices, "indices")))
    return failure();
  if (elementTypeOf(data) != elementTypeOf(updates))
    return ctx.emitError() << "data and updates differ in type";
  ArrayRef<int64_t> dshape = shapeOf(data), ishape = shapeOf(indices);
  int64_t k = ishape.empty() ? 0 : ishape.back();
  if (k < 1 || k > (int64_t)dshape.size())
    return ctx.emitError() << "indices of depth " << k << " do not fit data "
                           << shapes::str(dshape);
  int64_t positions = shapes::numElements(ishape.drop_back());
  int64_t slice = shapes::numElements(dshape.drop_front(k));
  int64_t m = shapes::numElements(dshape.take_front(k));
  SmallVector<int64_t> expected(ishape.drop_back());
  expected.append(dshape.begin() + k, dshape.end());
  if (shapeOf(updates) != ArrayRef<int64_t>(expected))
    return ctx.emitError() << "updates " << shapes::str(shapeOf(updates))
                           << " must have shape " << shapes::str(expected);
  Type i64 = ctx.b.getI64Type();
  SmallVector<double> dims, strides;
  for (int64_t d : dshape.take_front(k))
    dims.push_back(d);
  for (int64_t s : stridesOf(dshape.take_front(k)))
    strides.push_back(s);
  Value idx = ctx.reshape(ctx.castTo(indices, i64), {positions, k});
  idx = ctx.wrapNegative(idx, ctx.constant({k}, i64, dims));
  Value linear = ctx.reduce<ReduceSumOp>(
      ctx.binary<MulOp>(idx, ctx.constant({k}, i64, strides)), {1}, true);
  linear = ctx.broadcastTo(linear, {positions, slice});
  Value y = scatter(ctx, ctx.reshape(data, {m, slice}), linear,
                    ctx.reshape(updates, {positions, slice}), 0, *r);
  y = ctx.reshape(y, dshape);
  return ctx.result(y);
}

static LogicalResult importTensorScatter(NodeContext &ctx) {
  Value past = ctx.input(0), update = ctx.input(1), where = ctx.input(2);
  std::string mode = ctx.getString("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return ctx.unsupportedValue("mode", mode);
  if (failed(ctx.requireStatic(past)) ||
      failed(ctx.requireStatic(update, "update")))
    return failure();
  ArrayRef<int64_t> pshape = shapeOf(past), ushape = shapeOf(update);
  int64_t rank = pshape.size();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", -2), rank);
  if (failed(axis) || ctx.hasError())
    return failure();
  if (*axis == 0 || ushape.size() != pshape.size())
    return ctx.emitError() << "update " << shapes::str(ushape)
                           << " does not fit the cache " << shapes::str(pshape);
  Type i64 = ctx.b.getI64Type();
  // Row b of the update goes to positions write_indices[b] + s.
  Value start =
      where ? ctx.castTo(where, i64) : ctx.constant({pshape[0]}, i64, {0.0});
  SmallVector<int64_t> batchShape(rank, 1);
  batchShape[0] = pshape[0];
  Value idx = ctx.binary<AddOp>(ctx.reshape(start, batchShape),
                                ctx.iota(ushape[*axis], i64, *axis, rank));
  if (mode == "circular")
    idx = ctx.binary<RemOp>(idx, ctx.scalar(i64, pshape[*axis]));
  idx = ctx.broadcastTo(idx, ushape);
  ctx.setResult(0,
                scatter(ctx, past, idx, update, *axis, ScatterReduction::none));
  return success();
}

static LogicalResult importOneHot(NodeContext &ctx) {
  Value indices = ctx.input(0), values = ctx.input(2);
  Type i64 = ctx.b.getI64Type();
  // The depth: a constant, else known only at run time, a size the run
  // computes up to the bound --dim gives it (the positions compared).
  bool runTime = ctx.input(1) && !matchPattern(ctx.input(1), m_Constant());
  int64_t positions;
  Value depth;
  if (runTime) {
    FailureOr<int64_t> bound = ctx.computedSizeBound("the depth");
    if (failed(bound))
      return failure();
    positions = *bound;
    depth = ctx.castTo(
        ctx.reshape(ctx.castTo(ctx.input(1), ctx.b.getF64Type()), {}), i64);
  } else {
    FailureOr<double> depthValue = ctx.constScalar(1);
    if (failed(depthValue))
      return failure();
    positions = saturatingInt(*depthValue);
    if (positions < 1)
      return ctx.emitError() << "depth " << positions << " must be positive";
    depth = ctx.scalar(i64, positions);
  }
  if (shapes::numElements(shapeOf(values)) != 2)
    return ctx.emitError() << "values must hold two elements (off, on)";
  int64_t rank = shapeOf(indices).size() + 1;
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  Value idx = ctx.wrapNegative(ctx.castTo(indices, i64), depth);
  SmallVector<int64_t> expanded(shapeOf(indices));
  expanded.insert(expanded.begin() + *axis, 1);
  Value hot = ctx.compare(ComparePredicate::eq, ctx.reshape(idx, expanded),
                          ctx.iota(positions, i64, *axis, rank));
  Value flat = ctx.reshape(values, {2});
  Value off = ctx.elementAt(flat, 0);
  Value on = ctx.elementAt(flat, 1);
  Value y = ctx.select(hot, on, off);
  return ctx.result(runTime ? ctx.trim(y, depth, *axis) : y);
}

/// The integer of an optional constant scalar input, `dflt` when absent.
static FailureOr<int64_t> optionalConstInt(NodeContext &ctx, unsigned i,
                                           int64_t dflt) {
  if (!ctx.input(i))
    return dflt;
  FailureOr<SmallVector<int64_t>> v = ctx.constInts(i);
  if (failed(v))
    return failure();
  if (v->size() != 1) {
    ctx.emitError() << "input " << i << " must hold one value";
    return failure();
  }
  return v->front();
}

static LogicalResult importTrilu(NodeContext &ctx) {
  Value x = ctx.input(0);
  bool upper = ctx.getInt("upper", 1);
  // k decides which elements are kept, not any shape: one computed at run
  // time (a graph input) is an operand of the comparison.
  Value runK = ctx.input(1);
  if (runK && matchPattern(runK, m_Constant()))
    runK = Value();
  FailureOr<int64_t> k = runK ? 0 : optionalConstInt(ctx, 1, 0);
  if (failed(k) || ctx.hasError())
    return failure();
  if (runK) {
    if (!elementTypeOf(runK).isInteger(64) ||
        shapes::numElements(shapeOf(runK)) != 1)
      return ctx.emitError()
             << "input 1 (k) must be one int64; got "
             << shapes::str(shapeOf(runK)) << " of " << elementTypeOf(runK);
    runK = ctx.reshape(runK, {});
  }
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.size() < 2)
    return ctx.emitError() << "input must have rank >= 2; got "
                           << shapes::str(shape);
  int64_t n = shape[shape.size() - 2], m = shape.back();
  Type i64 = ctx.b.getI64Type();
  // Keep (i, j) with j - i >= k (upper) or j - i <= k (lower).
  Value diff = ctx.binary<SubOp>(ctx.iota(m, i64, 1, 2, /*dynamic=*/true),
                                 ctx.iota(n, i64, 0, 2, /*dynamic=*/true));
  Value keep = ctx.compare(upper ? ComparePredicate::ge : ComparePredicate::le,
                           diff, runK ? runK : ctx.scalar(i64, (double)*k));
  Value y = ctx.select(keep, x, ctx.scalarLike(x, 0));
  return ctx.result(y);
}

static LogicalResult importEyeLike(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t k = ctx.getInt("k", 0);
  Type et = elementTypeOf(x);
  if (ctx.hasAttr("dtype")) {
    int32_t dtype = ctx.getInt("dtype", 0);
    et = convertDataType(ctx.b.getContext(), dtype);
    if (!et)
      return ctx.emitError()
             << "dtype " << dataTypeName(dtype) << " is not supported";
  }
  if (ctx.hasError() || failed(ctx.requireStatic(x)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.size() != 2)
    return ctx.emitError() << "input must be a matrix; got "
                           << shapes::str(shape);
  SmallVector<double> values(shape[0] * shape[1], 0.0);
  for (int64_t i = 0; i < shape[0]; ++i)
    if (i + k >= 0 && i + k < shape[1])
      values[i * shape[1] + i + k] = 1;
  ctx.setResult(0, values.empty() ? ctx.constant(shape, et, {0.0})
                                  : ctx.constant(shape, et, values));
  return success();
}

/// Whether input `i` is known only at run time (not a constant).
static bool atRunTime(NodeContext &ctx, unsigned i) {
  return ctx.input(i) && !matchPattern(ctx.input(i), m_Constant());
}

static LogicalResult importTopK(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t rank = shapeOf(x).size();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", -1), rank);
  bool largest = ctx.opset < 11 || ctx.getInt("largest", 1);
  // Results always come sorted, which `sorted = 0` allows.
  if (ctx.opset >= 11)
    ctx.ignoreAttrs({"sorted"});
  if (failed(axis) || ctx.hasError())
    return failure();
  int64_t k;
  if (ctx.opset < 10) {
    if (!ctx.hasAttr("k"))
      return ctx.emitError() << "attribute 'k' is required";
    k = ctx.getInt("k", 0);
  } else if (atRunTime(ctx, 1)) {
    // k known only at run time: every element in order, the first k a
    // size the run computes (at most the axis; out of range, an error
    // from the run).
    k = ShapedType::kDynamic;
  } else {
    FailureOr<int64_t> given = optionalConstInt(ctx, 1, -1);
    if (failed(given))
      return failure();
    k = *given;
  }
  int64_t d = shapeOf(x)[*axis];
  bool runTimeK = ShapedType::isDynamic(k);
  if (runTimeK && !ShapedType::isDynamic(d))
    k = d;
  if (elementTypeOf(x).isInteger(1))
    return ctx.emitError() << "input must be a numeric tensor; got "
                           << x.getType();
  if (k < 0 || ShapedType::isDynamic(d) || k > d)
    return ctx.emitError() << "k = " << k << " is out of range for the " << d
                           << " elements along axis " << *axis;
  // tcc.topk's k is its results' size along the axis.
  SmallVector<int64_t> shape(shapeOf(x));
  shape[*axis] = k;
  RankedTensorType values = ctx.tensorType(shape, elementTypeOf(x));
  RankedTensorType indices = ctx.tensorType(shape, ctx.b.getI64Type());
  if (!values || !indices)
    return failure();
  SmallVector<NamedAttribute, 2> attrs = {
      ctx.attr("axis", ctx.b.getI64IntegerAttr(*axis))};
  if (largest)
    attrs.push_back(ctx.attr("largest", ctx.b.getUnitAttr()));
  FailureOr<SmallVector<Value>> topk = ctx.builder().create(
      TopKOp::getOperationName(), {x}, attrs, {values, indices});
  if (failed(topk))
    return failure();
  if (runTimeK) {
    // (Both results are cut to one size, named after the values.)
    Value count = ctx.reshape(ctx.castTo(ctx.input(1), ctx.b.getI64Type()), {});
    ctx.setResult(0, ctx.trim((*topk)[0], count, *axis));
    ctx.setResult(1, ctx.trim((*topk)[1], count, *axis));
    return success();
  }
  ctx.setResult(0, (*topk)[0]);
  ctx.setResult(1, (*topk)[1]);
  return success();
}

template <typename OpT>
static LogicalResult importCumulative(NodeContext &ctx) {
  Value x = ctx.input(0);
  FailureOr<int64_t> given = optionalConstInt(ctx, 1, 0);
  bool exclusive = ctx.getInt("exclusive", 0),
       reverse = ctx.getInt("reverse", 0);
  if (failed(given) || ctx.hasError())
    return failure();
  FailureOr<int64_t> axis = ctx.normalizeAxis(*given, shapeOf(x).size());
  if (failed(axis))
    return failure();
  if (elementTypeOf(x).isInteger(1))
    return ctx.emitError() << "input must be a numeric tensor; got "
                           << x.getType();
  ctx.setResult(0, ctx.check(ctx.builder().cumulative<OpT>(x, *axis, exclusive,
                                                           reverse)));
  return success();
}

static LogicalResult importHardmax(NodeContext &ctx) {
  Value x = ctx.input(0);
  FailureOr<SoftmaxRows> rows = softmaxRows(ctx);
  if (failed(rows))
    return failure();
  Value v = rows->rows;
  int64_t a = rows->axis, vr = shapeOf(v).size();
  Value best = ctx.check(ctx.builder().argReduce<ArgMaxOp>(v, a, true));
  Value hot = ctx.compare(ComparePredicate::eq, best,
                          ctx.iota(shapeOf(v)[a], ctx.b.getI64Type(), a, vr));
  Value y = ctx.reshape(ctx.castTo(hot, elementTypeOf(x)), shapeOf(x));
  return ctx.result(y);
}

/// The largest blocksize of SpaceToDepth/DepthToSpace: a block of bs * bs
/// elements (times the channels) stays within int64_t.
constexpr int64_t kMaxBlock = 1 << 15;

static LogicalResult importSpaceToDepth(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t bs = ctx.getInt("blocksize", 0);
  if (ctx.hasError() || failed(ctx.requireStatic(x)))
    return failure();
  ArrayRef<int64_t> s = shapeOf(x);
  // A block of bs * bs elements must be addressable (no overflow below).
  if (s.size() != 4 || bs < 1 || bs > kMaxBlock || s[2] % bs || s[3] % bs)
    return ctx.emitError() << "blocksize " << bs << " does not fit input "
                           << shapes::str(s);
  Value y = ctx.reshape(x, {s[0], s[1], s[2] / bs, bs, s[3] / bs, bs});
  y = ctx.transpose(y, {0, 3, 5, 1, 2, 4});
  y = ctx.reshape(y, {s[0], s[1] * bs * bs, s[2] / bs, s[3] / bs});
  return ctx.result(y);
}

static LogicalResult importDepthToSpace(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t bs = ctx.getInt("blocksize", 0);
  std::string mode = ctx.opset >= 11 ? ctx.getString("mode", "DCR") : "DCR";
  if (ctx.hasError() || failed(ctx.requireStatic(x)))
    return failure();
  ArrayRef<int64_t> s = shapeOf(x);
  if (s.size() != 4 || bs < 1 || bs > kMaxBlock || s[1] % (bs * bs))
    return ctx.emitError() << "blocksize " << bs << " does not fit input "
                           << shapes::str(s);
  int64_t c = s[1] / (bs * bs);
  Value y;
  if (mode == "DCR") {
    y = ctx.reshape(x, {s[0], bs, bs, c, s[2], s[3]});
    y = ctx.transpose(y, {0, 3, 4, 1, 5, 2});
  } else if (mode == "CRD") {
    y = ctx.reshape(x, {s[0], c, bs, bs, s[2], s[3]});
    y = ctx.transpose(y, {0, 1, 4, 2, 5, 3});
  } else {
    return ctx.unsupportedValue("mode", mode);
  }
  y = ctx.reshape(y, {s[0], c, s[2] * bs, s[3] * bs});
  return ctx.result(y);
}

static LogicalResult importCenterCropPad(NodeContext &ctx) {
  Value x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> target = ctx.constInts(1);
  SmallVector<int64_t> axes = ctx.getInts("axes");
  if (failed(target) || ctx.hasError() || failed(ctx.requireStatic(x)))
    return failure();
  int64_t rank = shapeOf(x).size();
  if (axes.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (axes.size() != target->size())
    return ctx.emitError() << "shape has " << target->size() << " entries for "
                           << axes.size() << " axes";
  Value y = x;
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (auto [a, want] : llvm::zip(axes, *target)) {
    FailureOr<int64_t> axis = ctx.normalizeAxis(a, rank);
    if (failed(axis))
      return failure();
    int64_t dim = shapeOf(x)[*axis];
    if (want < 0)
      return ctx.emitError() << "shape has a negative dimension " << want;
    if (want < dim)
      y = ctx.slice(y, *axis, (dim - want) / 2, want);
    else if (want > dim) {
      low[*axis] = (want - dim) / 2;
      high[*axis] = want - dim - low[*axis];
    }
  }
  if (!y)
    return failure();
  y = ctx.pad(y, low, high);
  ctx.setResult(0, y);
  return success();
}

static LogicalResult importReverseSequence(NodeContext &ctx) {
  Value x = ctx.input(0), lens = ctx.input(1);
  if (failed(ctx.requireStatic(x)))
    return failure();
  int64_t rank = shapeOf(x).size();
  FailureOr<int64_t> batchAxis =
      ctx.normalizeAxis(ctx.getInt("batch_axis", 1), rank);
  FailureOr<int64_t> timeAxis =
      ctx.normalizeAxis(ctx.getInt("time_axis", 0), rank);
  if (failed(batchAxis) || failed(timeAxis))
    return failure();
  if (rank < 2 || *batchAxis == *timeAxis)
    return ctx.emitError() << "batch_axis and time_axis must differ";
  Type i64 = ctx.b.getI64Type();
  ArrayRef<int64_t> shape = shapeOf(x);
  // Source time index: len - 1 - t inside the sequence, t after it.
  SmallVector<int64_t> lenShape(rank, 1);
  lenShape[*batchAxis] = shape[*batchAxis];
  Value len = ctx.reshape(ctx.castTo(lens, i64), lenShape);
  Value t = ctx.iota(shape[*timeAxis], i64, *timeAxis, rank);
  Value inside = ctx.compare(ComparePredicate::lt, t, len);
  Value reversed =
      ctx.binary<SubOp>(ctx.binary<SubOp>(len, ctx.scalar(i64, 1)), t);
  Value idx = ctx.broadcastTo(ctx.select(inside, reversed, t), shape);
  if (!idx)
    return failure();
  // A GatherElements along the time axis, on the flattened data.
  SmallVector<int64_t> strides = stridesOf(shape);
  Value linear = ctx.binary<MulOp>(idx, ctx.scalar(i64, strides[*timeAxis]));
  for (int64_t d = 0; d < rank; ++d)
    if (d != *timeAxis && shape[d] != 1)
      linear = ctx.binary<AddOp>(
          linear, ctx.binary<MulOp>(ctx.iota(shape[d], i64, d, rank),
                                    ctx.scalar(i64, strides[d])));
  Value y = ctx.gather(ctx.reshape(x, {shapes::numElements(shape)}), linear, 0);
  return ctx.result(y);
}

//===----------------------------------------------------------------------===//
// Ops whose result shape depends on values: computed at compile time
//===----------------------------------------------------------------------===//

/// The elements of constant input `i` as doubles (its values decide the
/// result's shape, so they must be known at compile time).
static FailureOr<SmallVector<double>> constValues(NodeContext &ctx,
                                                  unsigned i) {
  DenseElementsAttr dense = ctx.constInput(i);
  if (!dense)
    return failure();
  SmallVector<double> out;
  Type et = dense.getElementType();
  if (isa<FloatType>(et)) {
    for (const APFloat &v : dense.getValues<APFloat>())
      out.push_back(v.convertToDouble());
  } else {
    bool zext = et.isUnsignedInteger() || et.isInteger(1);
    for (const APInt &v : dense.getValues<APInt>())
      out.push_back(zext ? (double)v.getZExtValue() : (double)v.getSExtValue());
  }
  return out;
}

/// The positions where the rank-1 boolean `set` holds, in order, compacted
/// to the front of an [n] int64 tensor (zeros after them), and their count
/// (an int64 scalar): a running count gives each set position its place.
static std::pair<Value, Value> compactedPositions(NodeContext &ctx, Value set) {
  int64_t n = shapeOf(set)[0];
  Type i64 = ctx.b.getI64Type();
  Value running = ctx.check(ctx.builder().cumulative<CumsumOp>(
      ctx.castTo(set, i64), 0, false, false));
  Value count = ctx.elementAt(running, n - 1);
  // Unset positions go to a spare slot past the end.
  Value at = ctx.select(set, ctx.binary<SubOp>(running, ctx.scalar(i64, 1)),
                        ctx.scalar(i64, n));
  Value positions = ctx.scatter(ctx.constant({n + 1}, i64, {0.0}), at,
                                ctx.iota(n, i64), 0, ScatterReduction::none);
  return {ctx.check(ctx.builder().sliceAxis(positions, 0, 0, n)), count};
}

static LogicalResult importCompress(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (failed(ctx.requireStatic(x)))
    return failure();
  // The data and the axis selected along (the flattened data without one).
  Value data = x;
  int64_t axis = 0;
  if (ctx.hasAttr("axis")) {
    FailureOr<int64_t> a =
        ctx.normalizeAxis(ctx.getInt("axis", 0), shapeOf(x).size());
    if (failed(a))
      return failure();
    axis = *a;
  } else {
    data = ctx.reshape(x, {shapes::numElements(shapeOf(x))});
  }
  if (atRunTime(ctx, 1)) {
    // The condition known at run time: the selected slices gathered to the
    // front of the whole axis, trimmed to their count.
    Value cond = ctx.input(1);
    if (shapeOf(cond).size() != 1 || !elementTypeOf(cond).isInteger(1))
      return ctx.emitError() << "condition must be a rank-1 bool tensor; got "
                             << cond.getType();
    int64_t m = std::min(shapeOf(cond)[0], shapeOf(data)[axis]);
    if (m == 0)
      return ctx.result(ctx.check(ctx.builder().sliceAxis(data, axis, 0, 0)));
    if (m < shapeOf(data)[axis])
      data = ctx.check(ctx.builder().sliceAxis(data, axis, 0, m));
    auto [positions, count] = compactedPositions(
        ctx, ctx.check(ctx.builder().sliceAxis(cond, 0, 0, m)));
    return ctx.result(ctx.trim(ctx.gather(data, positions, axis), count, axis));
  }
  FailureOr<SmallVector<double>> cond = constValues(ctx, 1);
  if (failed(cond))
    return failure();
  int64_t d = shapeOf(data)[axis];
  SmallVector<double> picked;
  for (int64_t i = 0; i < (int64_t)cond->size() && i < d; ++i)
    if ((*cond)[i] != 0)
      picked.push_back(i);
  Type i64 = ctx.b.getI64Type();
  Value idx = picked.empty()
                  ? ctx.constant({0}, i64, {0.0})
                  : ctx.constant({(int64_t)picked.size()}, i64, picked);
  Value y = ctx.gather(data, idx, axis);
  return ctx.result(y);
}

static LogicalResult importNonZero(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (atRunTime(ctx, 0)) {
    // Known at run time: the coordinates of every element, the set ones
    // compacted to the front ([rank, numel]), trimmed to their count.
    if (failed(ctx.requireStatic(x)))
      return failure();
    ArrayRef<int64_t> shape = shapeOf(x);
    int64_t rank = shape.size(), n = shapes::numElements(shape);
    if (rank == 0 || n == 0)
      return ctx.emitError() << "input " << shapes::str(shape)
                             << " known only at run time has no elements "
                                "to count; tcc takes a non-empty tensor";
    Value flat = ctx.reshape(x, {n});
    Value set =
        elementTypeOf(x).isInteger(1)
            ? flat
            : ctx.compare(ComparePredicate::ne, flat, ctx.scalarLike(flat, 0));
    auto [positions, count] = compactedPositions(ctx, set);
    Type i64 = ctx.b.getI64Type();
    SmallVector<double> strides, sizes;
    for (int64_t d : stridesOf(shape))
      strides.push_back(d);
    for (int64_t d : shape)
      sizes.push_back(d);
    Value coords = ctx.binary<RemOp>(
        ctx.binary<DivOp>(ctx.reshape(positions, {1, n}),
                          ctx.constant({rank, 1}, i64, strides)),
        ctx.constant({rank, 1}, i64, sizes));
    return ctx.result(ctx.trim(coords, count, 1));
  }
  FailureOr<SmallVector<double>> values = constValues(ctx, 0);
  if (failed(values))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  SmallVector<int64_t> strides = stridesOf(shape);
  SmallVector<SmallVector<double>> coords(rank);
  int64_t count = 0;
  for (auto [flat, v] : llvm::enumerate(*values)) {
    if (v == 0)
      continue;
    ++count;
    for (int64_t d = 0; d < rank; ++d)
      coords[d].push_back((double)((flat / strides[d]) % shape[d]));
  }
  SmallVector<double> all;
  for (auto &c : coords)
    all.append(c.begin(), c.end());
  Type i64 = ctx.b.getI64Type();
  ctx.setResult(0, all.empty() ? ctx.constant({rank, count}, i64, {0.0})
                               : ctx.constant({rank, count}, i64, all));
  return success();
}

/// Unique of elements known only at run time (flattened, or a vector):
/// the elements sorted (tcc.topk, stable), the first of each run of equal
/// ones gathered first (their count the size the run computes), the
/// inverse and counts scattered from the runs' numbers; unsorted, the
/// runs reordered by their first index.
static LogicalResult uniqueAtRunTime(NodeContext &ctx, bool sorted) {
  Value x = ctx.input(0);
  if (failed(ctx.requireStatic(x)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  if (ctx.hasAttr("axis")) {
    // (Along the one axis of a vector: its elements.)
    if (failed(ctx.normalizeAxis(ctx.getInt("axis", 0), shape.size())))
      return failure();
    if (shape.size() > 1) {
      (void)ctx.constInput(0, "Unique along an axis of a matrix needs it");
      return failure();
    }
  }
  if (elementTypeOf(x).isInteger(1))
    return ctx.emitError() << "input must be a numeric tensor; got "
                           << x.getType();
  int64_t n = shapes::numElements(shape);
  Type i64 = ctx.b.getI64Type(), et = elementTypeOf(x);
  if (n == 0) {
    ctx.setResult(0, ctx.constant({0}, et, {0.0}));
    for (unsigned i = 1; i < 4; ++i)
      ctx.setResult(i, ctx.constant({0}, i64, {0.0}));
    return success();
  }
  auto sortAscending = [&](Value v) -> FailureOr<SmallVector<Value>> {
    RankedTensorType values = ctx.tensorType({n}, elementTypeOf(v));
    RankedTensorType indices = ctx.tensorType({n}, i64);
    if (!values || !indices)
      return failure();
    return ctx.builder().create(TopKOp::getOperationName(), {v},
                                {ctx.attr("axis", ctx.b.getI64IntegerAttr(0))},
                                {values, indices});
  };
  FailureOr<SmallVector<Value>> sortedX = sortAscending(ctx.reshape(x, {n}));
  if (failed(sortedX))
    return failure();
  Value vals = (*sortedX)[0], order = (*sortedX)[1];
  // The first of each run of equal elements, and each position's run.
  Value first = ctx.constant({n}, ctx.b.getI1Type(), {1.0});
  if (n > 1)
    first = ctx.concat(
        {ctx.constant({1}, ctx.b.getI1Type(), {1.0}),
         ctx.compare(ComparePredicate::ne, ctx.slice(vals, 0, 1, n - 1),
                     ctx.slice(vals, 0, 0, n - 1))},
        0);
  Value run = ctx.binary<SubOp>(ctx.check(ctx.builder().cumulative<CumsumOp>(
                                    ctx.castTo(first, i64), 0, false, false)),
                                ctx.scalar(i64, 1));
  auto [starts, count] = compactedPositions(ctx, first);
  Value y = ctx.gather(vals, starts, 0);
  Value index = ctx.gather(order, starts, 0); // (stable: the first index)
  Value zeros = ctx.constant({n}, i64, {0.0});
  Value counts = ctx.scatter(zeros, run, ctx.constant({n}, i64, {1.0}), 0,
                             ScatterReduction::add);
  Value inverse = ctx.scatter(zeros, order, run, 0, ScatterReduction::none);
  if (!sorted) {
    // Runs by their first index (those past the count last).
    Value key = ctx.select(
        ctx.compare(ComparePredicate::lt, ctx.iota(n, i64), count), index,
        ctx.binary<AddOp>(ctx.iota(n, i64), ctx.scalar(i64, double(n))));
    FailureOr<SmallVector<Value>> byFirst = sortAscending(key);
    if (failed(byFirst))
      return failure();
    Value perm = (*byFirst)[1];
    Value rank =
        ctx.scatter(zeros, perm, ctx.iota(n, i64), 0, ScatterReduction::none);
    y = ctx.gather(y, perm, 0);
    index = ctx.gather(index, perm, 0);
    counts = ctx.gather(counts, perm, 0);
    inverse = ctx.gather(rank, inverse, 0);
  }
  // (Y, indices and counts: one size, named after Y.)
  ctx.setResult(0, ctx.trim(y, count, 0));
  ctx.setResult(1, ctx.trim(index, count, 0));
  ctx.setResult(2, inverse);
  ctx.setResult(3, ctx.trim(counts, count, 0));
  return success();
}

static LogicalResult importUnique(NodeContext &ctx) {
  Value x = ctx.input(0);
  bool sorted = ctx.getInt("sorted", 1);
  if (atRunTime(ctx, 0))
    return uniqueAtRunTime(ctx, sorted);
  FailureOr<SmallVector<double>> values = constValues(ctx, 0);
  if (failed(values) || ctx.hasError())
    return failure();
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = shape.size();
  // Each unique entry is a slice along `axis` (an element when flattened).
  bool hasAxis = ctx.hasAttr("axis");
  int64_t axis = 0, n = values->size(), inner = 1, outer = 1, d = n;
  if (hasAxis) {
    FailureOr<int64_t> a = ctx.normalizeAxis(ctx.getInt("axis", 0), rank);
    if (failed(a))
      return failure();
    axis = *a;
    d = shape[axis];
    inner = shapes::numElements(shape.drop_front(axis + 1));
    outer = shapes::numElements(shape.take_front(axis));
  }
  auto sliceOf = [&](int64_t i) {
    SmallVector<double> s;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < inner; ++j)
        s.push_back((*values)[(o * d + i) * inner + j]);
    return s;
  };
  std::vector<SmallVector<double>> uniques;
  SmallVector<double> firstIndex, inverse, counts;
  for (int64_t i = 0; i < d; ++i) {
    SmallVector<double> s = sliceOf(i);
    auto it = llvm::find(uniques, s);
    if (it == uniques.end()) {
      uniques.push_back(s);
      firstIndex.push_back(i);
      counts.push_back(0);
      it = uniques.end() - 1;
    }
    int64_t u = it - uniques.begin();
    inverse.push_back(u);
    counts[u] += 1;
  }
  SmallVector<int64_t> order(uniques.size());
  std::iota(order.begin(), order.end(), 0);
  if (sorted)
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return std::lexicographical_compare(uniques[a].begin(), uniques[a].end(),
                                          uniques[b].begin(), uniques[b].end());
    });
  SmallVector<double> rank2(order.size());
  for (auto [r, u] : llvm::enumerate(order))
    rank2[u] = r;
  int64_t u = order.size();
  // Y: the unique slices in order, laid out like the input along `axis`.
  SmallVector<double> y;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < u; ++r)
      for (int64_t j = 0; j < inner; ++j)
        y.push_back(uniques[order[r]][o * inner + j]);
  SmallVector<int64_t> yShape =
      hasAxis ? SmallVector<int64_t>(shape) : SmallVector<int64_t>{n};
  yShape[hasAxis ? axis : 0] = u;
  Type i64 = ctx.b.getI64Type();
  SmallVector<double> idx, inv, cnt;
  for (int64_t r = 0; r < u; ++r) {
    idx.push_back(firstIndex[order[r]]);
    cnt.push_back(counts[order[r]]);
  }
  for (double v : inverse)
    inv.push_back(rank2[(int64_t)v]);
  auto make = [&](ArrayRef<int64_t> s, Type et, ArrayRef<double> v) {
    return v.empty() ? ctx.constant(s, et, {0.0}) : ctx.constant(s, et, v);
  };
  ctx.setResult(0, make(yShape, elementTypeOf(x), y));
  ctx.setResult(1, make({u}, i64, idx));
  ctx.setResult(2, make({d}, i64, inv));
  ctx.setResult(3, make({u}, i64, cnt));
  return success();
}

/// Whether box `a` suppresses box `b` (IoU above the threshold), as ONNX's
/// reference decides it.
static bool suppresses(ArrayRef<double> a, ArrayRef<double> b, bool center,
                       double threshold) {
  auto minMax = [](double p, double q) {
    return p >= q ? std::make_pair(q, p) : std::make_pair(p, q);
  };
  double ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (!center) {
    std::tie(ax0, ax1) = minMax(a[1], a[3]);
    std::tie(bx0, bx1) = minMax(b[1], b[3]);
    std::tie(ay0, ay1) = minMax(a[0], a[2]);
    std::tie(by0, by1) = minMax(b[0], b[2]);
  } else {
    ax0 = a[0] - a[2] / 2, ax1 = a[0] + a[2] / 2;
    bx0 = b[0] - b[2] / 2, bx1 = b[0] + b[2] / 2;
    ay0 = a[1] - a[3] / 2, ay1 = a[1] + a[3] / 2;
    by0 = b[1] - b[3] / 2, by1 = b[1] + b[3] / 2;
  }
  double ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  double iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (ix1 <= ix0 || iy1 <= iy0)
    return false;
  double inter = (ix1 - ix0) * (iy1 - iy0);
  double areaA = (ax1 - ax0) * (ay1 - ay0), areaB = (bx1 - bx0) * (by1 - by0);
  double uni = areaA + areaB - inter;
  if (inter <= 0 || areaA <= 0 || areaB <= 0 || uni <= 0)
    return false;
  return inter / uni > threshold;
}

/// NonMaxSuppression of boxes and scores known only at run time: the
/// candidates of each (batch, class) sorted by score (tcc.topk, stable),
/// the IoU of every pair of boxes compared with the threshold once, then
/// one greedy step per sorted position (a tcc.loop over as many positions
/// as the most candidates above the score threshold): a candidate is kept
/// when it passes the threshold, no kept box suppresses it and fewer than
/// the maximum are kept. The kept ones, in (batch, class, score) order, are
/// the rows of a result at its bound (every candidate), tcc.trim-med to
/// their count.
static LogicalResult nonMaxSuppressionAtRunTime(NodeContext &ctx, bool center) {
  Value boxes = ctx.input(0), scores = ctx.input(1);
  if (failed(ctx.requireStatic(boxes, "boxes")) ||
      failed(ctx.requireStatic(scores, "scores")))
    return failure();
  ArrayRef<int64_t> bs = shapeOf(boxes), ss = shapeOf(scores);
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] ||
      ss[2] != bs[1])
    return ctx.emitError() << "boxes " << shapes::str(bs) << " and scores "
                           << shapes::str(ss) << " do not match";
  if (!isa<FloatType>(elementTypeOf(boxes)) ||
      !isa<FloatType>(elementTypeOf(scores)))
    return ctx.emitError() << "boxes and scores must be floating-point";
  int64_t batches = bs[0], n = bs[1], classes = ss[1];
  Type i64 = ctx.b.getI64Type(), f64 = ctx.b.getF64Type(),
       i1 = ctx.b.getI1Type();
  int64_t total = batches * classes * n;
  if (total == 0)
    return ctx.result(ctx.constant({0, 3}, i64, {0.0}));
  auto scalarInput = [&](unsigned i, Type t) -> Value {
    Value v = i < ctx.numInputs() ? ctx.input(i) : Value();
    if (!v || shapes::numElements(shapeOf(v)) == 0)
      return {};
    return ctx.castTo(ctx.reshape(v, {}), t);
  };
  Value limit = scalarInput(2, i64);
  if (!limit) // (none given: nothing is selected)
    limit = ctx.scalar(i64, 0);
  Value iou = scalarInput(3, f64);
  if (!iou)
    iou = ctx.scalar(f64, 0);
  Value scoreMin = scalarInput(4, f64);
  // Candidates by score, best first (equal scores: the lower index first).
  RankedTensorType sortedType = ctx.tensorType(ss, f64);
  RankedTensorType orderType = ctx.tensorType(ss, i64);
  if (!sortedType || !orderType)
    return failure();
  FailureOr<SmallVector<Value>> topk = ctx.builder().create(
      TopKOp::getOperationName(), {ctx.castTo(scores, f64)},
      {ctx.attr("axis", ctx.b.getI64IntegerAttr(2)),
       ctx.attr("largest", ctx.b.getUnitAttr())},
      {sortedType, orderType});
  if (failed(topk))
    return failure();
  Value sorted = (*topk)[0], order = (*topk)[1];
  // Above the score threshold: a prefix of each sorted row.
  Value valid = scoreMin ? ctx.compare(ComparePredicate::gt, sorted, scoreMin)
                         : ctx.constant(ss, i1, {1.0});
  // Corners of every box ([B, N] each).
  Value b64 = ctx.castTo(boxes, f64);
  auto coord = [&](int64_t k) {
    return ctx.reshape(ctx.slice(b64, 2, k, 1), {batches, n});
  };
  Value x0, x1, y0, y1;
  if (center) {
    Value half = ctx.scalar(f64, 0.5);
    Value w = ctx.binary<MulOp>(coord(2), half),
          h = ctx.binary<MulOp>(coord(3), half);
    x0 = ctx.binary<SubOp>(coord(0), w), x1 = ctx.binary<AddOp>(coord(0), w);
    y0 = ctx.binary<SubOp>(coord(1), h), y1 = ctx.binary<AddOp>(coord(1), h);
  } else {
    x0 = ctx.binary<MinOp>(coord(1), coord(3));
    x1 = ctx.binary<MaxOp>(coord(1), coord(3));
    y0 = ctx.binary<MinOp>(coord(0), coord(2));
    y1 = ctx.binary<MaxOp>(coord(0), coord(2));
  }
  // Whether box j suppresses box i ([B, N, N], symmetric).
  auto rows = [&](Value v) { return ctx.reshape(v, {batches, n, 1}); };
  auto cols = [&](Value v) { return ctx.reshape(v, {batches, 1, n}); };
  Value ix0 = ctx.binary<MaxOp>(rows(x0), cols(x0));
  Value ix1 = ctx.binary<MinOp>(rows(x1), cols(x1));
  Value iy0 = ctx.binary<MaxOp>(rows(y0), cols(y0));
  Value iy1 = ctx.binary<MinOp>(rows(y1), cols(y1));
  Value zero = ctx.scalar(f64, 0);
  Value inter = ctx.binary<MulOp>(ctx.binary<SubOp>(ix1, ix0),
                                  ctx.binary<SubOp>(iy1, iy0));
  Value area =
      ctx.binary<MulOp>(ctx.binary<SubOp>(x1, x0), ctx.binary<SubOp>(y1, y0));
  Value uni =
      ctx.binary<SubOp>(ctx.binary<AddOp>(rows(area), cols(area)), inter);
  auto gt = [&](Value a, Value b) {
    return ctx.compare(ComparePredicate::gt, a, b);
  };
  Value overlaps = ctx.binary<AndOp>(gt(ix1, ix0), gt(iy1, iy0));
  overlaps = ctx.binary<AndOp>(overlaps, gt(inter, zero));
  overlaps = ctx.binary<AndOp>(
      overlaps, ctx.binary<AndOp>(gt(rows(area), zero), gt(cols(area), zero)));
  overlaps = ctx.binary<AndOp>(overlaps, gt(uni, zero));
  Value safeUnion = ctx.select(gt(uni, zero), uni, ctx.scalar(f64, 1));
  Value suppress =
      ctx.binary<AndOp>(overlaps, gt(ctx.binary<DivOp>(inter, safeUnion), iou));
  Value suppressRows = ctx.reshape(suppress, {batches * n, n});
  // Row b*N + box of each (b, c, position): where that box's row lies.
  SmallVector<double> batchBase;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c)
      batchBase.push_back(double(b * n));
  Value base = ctx.constant({batches, classes}, i64, batchBase);
  // The greedy steps, over as many positions as the most candidates.
  Value steps = ctx.reduce<ReduceMaxOp>(
      ctx.reduce<ReduceSumOp>(ctx.castTo(valid, i64), {2}, false), {0, 1},
      false);
  auto tensorOf = [&](ArrayRef<int64_t> shape, Type t) {
    return RankedTensorType::get(shape, t);
  };
  Type scalarI64 = tensorOf({}, i64), scalarI1 = tensorOf({}, i1);
  Type keptType = tensorOf(ss, i1),
       countType = tensorOf({batches, classes}, i64);
  Value keptInit = ctx.constant(ss, i1, {0.0});
  Value boxKeptInit = ctx.constant(ss, i1, {0.0});
  Value countInit = ctx.constant({batches, classes}, i64, {0.0});
  auto loop =
      ctx.b.create<LoopOp>(ctx.loc, TypeRange{keptType, keptType, countType},
                           steps, ctx.constant({}, i1, {1.0}),
                           ValueRange{keptInit, boxKeptInit, countInit});
  Block *body = new Block();
  loop.getBody().push_back(body);
  Value step = body->addArgument(scalarI64, ctx.loc);
  Value goOn = body->addArgument(scalarI1, ctx.loc);
  Value kept = body->addArgument(keptType, ctx.loc);    // by sorted position
  Value boxKept = body->addArgument(keptType, ctx.loc); // by box
  Value count = body->addArgument(countType, ctx.loc);
  {
    OpBuilder::InsertionGuard guard(ctx.b);
    ctx.b.setInsertionPointToEnd(body);
    // The box at this position of each (b, c), and the boxes it overlaps.
    Value box = ctx.gather(order, step, 2); // [B, C]
    Value row = ctx.gather(suppressRows, ctx.binary<AddOp>(base, box), 0);
    Value suppressed = ctx.reduce<ReduceMaxOp>(
        ctx.castTo(ctx.binary<AndOp>(boxKept, row), i64), {2}, false);
    Value ok = ctx.binary<AndOp>(
        ctx.binary<AndOp>(
            ctx.gather(valid, step, 2),
            ctx.compare(ComparePredicate::eq, suppressed, ctx.scalar(i64, 0))),
        ctx.compare(ComparePredicate::lt, count, limit));
    Value okCol = ctx.reshape(ok, {batches, classes, 1});
    Value positions = ctx.iota(n, i64, 2, 3); // [1, 1, N]
    Value atStep = ctx.compare(ComparePredicate::eq, positions, step);
    Value atBox = ctx.compare(ComparePredicate::eq, positions,
                              ctx.reshape(box, {batches, classes, 1}));
    Value nextKept = ctx.select(atStep, okCol, kept);
    Value nextBoxKept = ctx.select(atBox, okCol, boxKept);
    Value nextCount = ctx.binary<AddOp>(count, ctx.castTo(ok, i64));
    ctx.b.create<YieldOp>(ctx.loc,
                          ValueRange{goOn, nextKept, nextBoxKept, nextCount});
  }
  // The kept candidates' rows (batch, class, box), in order, first.
  Value set = ctx.reshape(loop.getResult(0), {total});
  auto [positions, selected] = compactedPositions(ctx, set);
  SmallVector<double> bIndex, cIndex;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c)
      for (int64_t i = 0; i < n; ++i) {
        bIndex.push_back(double(b));
        cIndex.push_back(double(c));
      }
  auto column = [&](Value v) { return ctx.reshape(v, {total, 1}); };
  Value triples = ctx.concat(
      {column(ctx.gather(ctx.constant({total}, i64, bIndex), positions, 0)),
       column(ctx.gather(ctx.constant({total}, i64, cIndex), positions, 0)),
       column(ctx.gather(ctx.reshape(order, {total}), positions, 0))},
      1);
  return ctx.result(ctx.trim(triples, selected, 0));
}

/// NonMaxSuppression on constant boxes and scores (the number of selected
/// boxes is the result's shape), else at run time (above).
static LogicalResult importNonMaxSuppression(NodeContext &ctx) {
  bool center = ctx.getInt("center_point_box", 0);
  if (ctx.hasError())
    return failure();
  if (llvm::any_of(llvm::seq(0u, std::min(ctx.numInputs(), 5u)),
                   [&](unsigned i) { return atRunTime(ctx, i); }))
    return nonMaxSuppressionAtRunTime(ctx, center);
  FailureOr<SmallVector<double>> boxes = constValues(ctx, 0);
  if (failed(boxes))
    return failure();
  FailureOr<SmallVector<double>> scores = constValues(ctx, 1);
  if (failed(scores))
    return failure();
  auto optional = [&](unsigned i) -> FailureOr<std::optional<double>> {
    if (!ctx.input(i) || shapes::numElements(shapeOf(ctx.input(i))) == 0)
      return std::optional<double>();
    FailureOr<SmallVector<double>> v = constValues(ctx, i);
    if (failed(v))
      return failure();
    return std::optional<double>(v->front());
  };
  auto maxBoxes = optional(2), iou = optional(3), scoreMin = optional(4);
  if (failed(maxBoxes) || failed(iou) || failed(scoreMin))
    return failure();
  ArrayRef<int64_t> bs = shapeOf(ctx.input(0)), ss = shapeOf(ctx.input(1));
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] ||
      ss[2] != bs[1])
    return ctx.emitError() << "boxes " << shapes::str(bs) << " and scores "
                           << shapes::str(ss) << " do not match";
  int64_t batches = bs[0], boxCount = bs[1], classes = ss[1];
  int64_t limit = std::max<int64_t>((int64_t)maxBoxes->value_or(0), 0);
  double threshold = iou->value_or(0);
  SmallVector<double> selected;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      SmallVector<std::pair<double, int64_t>> candidates;
      for (int64_t i = 0; i < boxCount; ++i) {
        double score = (*scores)[(b * classes + c) * boxCount + i];
        if (!*scoreMin || score > **scoreMin)
          candidates.push_back({score, i});
      }
      // Highest score first; equal scores keep the lower index first.
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](auto &p, auto &q) { return p.first > q.first; });
      SmallVector<int64_t> kept;
      for (auto [score, i] : candidates) {
        if ((int64_t)kept.size() >= limit)
          break;
        ArrayRef<double> box =
            ArrayRef(*boxes).slice((b * boxCount + i) * 4, 4);
        if (llvm::any_of(kept, [&](int64_t k) {
              return suppresses(
                  box, ArrayRef(*boxes).slice((b * boxCount + k) * 4, 4),
                  center, threshold);
            }))
          continue;
        kept.push_back(i);
        selected.append({(double)b, (double)c, (double)i});
      }
    }
  int64_t n = selected.size() / 3;
  Type i64 = ctx.b.getI64Type();
  ctx.setResult(0, n ? ctx.constant({n, 3}, i64, selected)
                     : ctx.constant({0, 3}, i64, {0.0}));
  return success();
}

/// TfIdfVectorizer on integer tokens: each pool n-gram's count is a sum of
/// matches of shifted slices of the rows against its tokens, for every skip
/// distance (unigrams once), as ONNX's reference counts them.
static LogicalResult importTfIdfVectorizer(NodeContext &ctx) {
  Value x = ctx.input(0);
  int64_t minN = ctx.getInt("min_gram_length", 0);
  int64_t maxN = ctx.getInt("max_gram_length", 0);
  int64_t maxSkip = ctx.getInt("max_skip_count", 0);
  std::string mode = ctx.getString("mode", "");
  SmallVector<int64_t> counts = ctx.getInts("ngram_counts");
  SmallVector<int64_t> indexes = ctx.getInts("ngram_indexes");
  SmallVector<int64_t> pool = ctx.getInts("pool_int64s");
  SmallVector<float> weights = ctx.getFloats("weights");
  if (ctx.hasAttr("pool_strings"))
    return ctx.emitError() << "attribute 'pool_strings' is not supported";
  if (ctx.hasError())
    return failure();
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.unsupportedValue("mode", mode);
  Type et = elementTypeOf(x);
  if (!isa<IntegerType>(et) || et.isInteger(1))
    return ctx.emitError() << "input " << x.getType()
                           << " must hold integer tokens";
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() > 2 || xs.empty() ||
      !cast<RankedTensorType>(x.getType()).hasStaticShape())
    return ctx.emitError() << "input must be a static [C] or [B, C] tensor";
  if (minN < 1 || maxN < minN || counts.size() < (size_t)maxN)
    return ctx.emitError() << "gram lengths " << minN << ".." << maxN
                           << " do not fit ngram_counts";
  // The pool's n-grams of length n are pool[counts[n-1], counts[n]), the
  // last up to its end: the offsets must be ordered and inside it.
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i] < (i ? counts[i - 1] : 0) || counts[i] > (int64_t)pool.size())
      return ctx.emitError()
             << "ngram_counts must be ordered offsets into pool_int64s (of "
             << pool.size() << " values); got " << counts[i] << " at " << i;
  int64_t c = xs.back(), last = xs.size() - 1;
  int64_t outSize = 0;
  constexpr int64_t kMaxOutput = int64_t(1) << 24;
  for (int64_t i : indexes) {
    if (i < 0 || i >= kMaxOutput)
      return ctx.emitError() << "ngram_indexes holds " << i << ", outside [0, "
                             << kMaxOutput << ")";
    outSize = std::max(outSize, i + 1);
  }
  Type f32 = ctx.b.getF32Type();
  SmallVector<int64_t> countShape(xs.drop_back());
  countShape.push_back(1);
  SmallVector<Value> outputs(outSize);
  size_t k = 0; // index into ngram_indexes
  for (int64_t n = 1; n <= (int64_t)counts.size(); ++n) {
    size_t begin = counts[n - 1];
    size_t end = n < (int64_t)counts.size() ? counts[n] : pool.size();
    for (size_t at = begin; at + n <= end; at += n, ++k) {
      if (k >= indexes.size())
        return ctx.emitError() << "ngram_indexes is shorter than the pool";
      Value count = ctx.constant(countShape, f32, {0.0});
      bool counted = n >= minN && n <= maxN;
      int64_t skips = n == 1 ? 1 : maxSkip + 1;
      for (int64_t s = 1; counted && s <= skips; ++s) {
        int64_t len = c - s * (n - 1);
        if (len <= 0)
          continue;
        Value match;
        for (int64_t j = 0; j < n; ++j) {
          Value eq =
              ctx.compare(ComparePredicate::eq, ctx.slice(x, last, j * s, len),
                          ctx.scalar(et, (double)pool[at + j]));
          match = match ? ctx.binary<AndOp>(match, eq) : eq;
        }
        count = ctx.binary<AddOp>(
            count,
            ctx.reduce<ReduceSumOp>(ctx.castTo(match, f32), {last}, true));
      }
      Value y = count;
      double w = k < weights.size() ? weights[k] : 1.0;
      if (mode == "IDF")
        y = ctx.select(
            ctx.compare(ComparePredicate::gt, count, ctx.scalar(f32, 0)),
            ctx.scalar(f32, w), ctx.scalar(f32, 0));
      else if (mode == "TFIDF")
        y = ctx.binary<MulOp>(count, ctx.scalar(f32, w));
      outputs[indexes[k]] = y;
    }
  }
  for (Value &v : outputs)
    if (!v)
      v = ctx.constant(countShape, f32, {0.0});
  Value y = ctx.concat(outputs, last);
  return ctx.result(y);
}

void mlir::tcc::onnx::registerIndexingOps(OpTable &t) {
  t.add("GatherElements", 11, 2, 2, 1, importGatherElements);
  t.add("GatherND", 11, 2, 2, 1, importGatherND);
  t.add("Scatter", 9, 3, 3, 1, importScatterElements);
  t.add("ScatterElements", 11, 3, 3, 1, importScatterElements);
  t.add("ScatterND", 11, 3, 3, 1, importScatterND);
  t.add("TensorScatter", 24, 2, 3, 1, importTensorScatter);
  t.add("OneHot", 9, 3, 3, 1, importOneHot);
  t.add("Trilu", 14, 1, 2, 1, importTrilu);
  t.add("EyeLike", 9, 1, 1, 1, importEyeLike);
  t.add("TopK", 1, 1, 1, 2, importTopK);
  t.add("TopK", 10, 2, 2, 2, importTopK);
  t.add("CumSum", 11, 2, 2, 1, importCumulative<CumsumOp>);
  t.add("CumProd", 26, 2, 2, 1, importCumulative<CumprodOp>);
  t.add("Hardmax", 1, 1, 1, 1, importHardmax);
  t.add("SpaceToDepth", 1, 1, 1, 1, importSpaceToDepth);
  t.add("DepthToSpace", 1, 1, 1, 1, importDepthToSpace);
  t.add("CenterCropPad", 18, 2, 2, 1, importCenterCropPad);
  t.add("ReverseSequence", 10, 2, 2, 1, importReverseSequence);
  t.add("Compress", 9, 2, 2, 1, importCompress);
  t.add("NonZero", 9, 1, 1, 1, importNonZero);
  t.add("Unique", 11, 1, 1, 4, importUnique);
  t.add("NonMaxSuppression", 10, 2, 5, 1, importNonMaxSuppression);
  t.add("TfIdfVectorizer", 9, 1, 1, 1, importTfIdfVectorizer);
}
