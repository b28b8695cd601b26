//===- TccOps.cpp - tcc op verifiers --------------------------------------===//
//
// Verifiers check each op's types against the shape rules in TccShapes.cpp,
// so a frontend that infers types with those rules always verifies.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include "dialects/Tcc/IR/TccBuilder.h"
#include "dialects/Tcc/IR/TccOps.h"
#include "dialects/Tcc/IR/TccShapes.h"

using namespace mlir;
using namespace mlir::tcc;

#include "dialects/Tcc/IR/TccInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/Tcc/IR/TccOps.cpp.inc"

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

/// Compares a result type against the shape the rules expect; dynamic sizes
/// on either side match anything.
static LogicalResult checkResultShape(Operation *op, Type result,
                                      FailureOr<shapes::Shape> expected) {
  if (failed(expected))
    return failure();
  ArrayRef<int64_t> actual = cast<ShapedType>(result).getShape();
  bool ok = actual.size() == expected->size();
  for (size_t i = 0; ok && i < actual.size(); ++i)
    ok = actual[i] == (*expected)[i] || ShapedType::isDynamic(actual[i]) ||
         ShapedType::isDynamic((*expected)[i]);
  if (!ok)
    return op->emitOpError()
           << "result shape " << shapes::str(actual)
           << " does not match the expected shape " << shapes::str(*expected);
  return success();
}

static LogicalResult checkAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError()
           << "axis " << axis << " is out of range for rank " << rank;
  return success();
}

//===----------------------------------------------------------------------===//
// Result-type inference
//===----------------------------------------------------------------------===//

namespace {
/// Where inference reports: at the op's location, worded as its verifier
/// words it ("'tcc.matmul' op ..."), or nowhere when the caller gave no
/// location (it only asks whether the types work out).
struct InferenceError {
  std::optional<Location> location;
  StringRef opName;
  InFlightDiagnostic operator()() const {
    if (!location)
      return InFlightDiagnostic();
    return emitError(*location) << "'" << opName << "' op ";
  }
};
using Shapes = ArrayRef<ArrayRef<int64_t>>;
using ShapeRule =
    function_ref<FailureOr<shapes::Shape>(Shapes, shapes::EmitErrorFn)>;
} // namespace

/// One ranked tensor result whose shape `rule` gives from the shapes of the
/// named `operands`, of `elementType` (the first operand's when null).
/// Inference also runs on ops built from unchecked input, before any
/// verifier: operands that are no ranked tensors and missing attributes
/// (those `rule` reads) are reported, not assumed.
static LogicalResult
inferWith(std::optional<Location> location, StringRef opName,
          std::initializer_list<std::pair<StringRef, Value>> operands,
          std::initializer_list<std::pair<StringRef, Attribute>> attrs,
          ShapeRule rule, Type elementType, SmallVectorImpl<Type> &types) {
  InferenceError emit{location, opName};
  SmallVector<ArrayRef<int64_t>, 4> operandShapes;
  for (auto [what, v] : operands) {
    auto type = v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr;
    if (!type)
      return emit() << what << " must be a ranked tensor", failure();
    operandShapes.push_back(type.getShape());
  }
  for (auto [name, value] : attrs)
    if (!value)
      return emit() << "requires attribute '" << name << "'", failure();
  FailureOr<shapes::Shape> shape = rule(operandShapes, emit);
  if (failed(shape))
    return failure();
  if (!elementType)
    elementType = getElementTypeOrSelf(operands.begin()->second);
  types.assign({RankedTensorType::get(*shape, elementType)});
  return success();
}

LogicalResult mlir::tcc::inferBroadcastType(std::optional<Location> location,
                                            StringRef opName,
                                            ValueRange operands,
                                            Type elementType,
                                            SmallVectorImpl<Type> &types) {
  InferenceError emit{location, opName};
  SmallVector<ArrayRef<int64_t>> all;
  for (Value v : operands) {
    auto type = v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr;
    if (!type)
      return emit() << "every operand must be a ranked tensor", failure();
    all.push_back(type.getShape());
  }
  if (all.empty())
    return emit() << "needs operands", failure();
  FailureOr<shapes::Shape> shape = shapes::broadcast(all, emit);
  if (failed(shape))
    return failure();
  types.assign({RankedTensorType::get(
      *shape,
      elementType ? elementType : getElementTypeOrSelf(operands.front()))});
  return success();
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferBroadcastType(location, getOperationName(), adaptor.getOperands(),
                            IntegerType::get(context, 1), types);
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferBroadcastType(location, getOperationName(), adaptor.getOperands(),
                            getElementTypeOrSelf(adaptor.getOnTrue()), types);
}

template <typename Op>
static LogicalResult inferReduce(std::optional<Location> location,
                                 typename Op::Adaptor adaptor,
                                 SmallVectorImpl<Type> &types) {
  return inferWith(
      location, Op::getOperationName(), {{"input", adaptor.getInput()}},
      {{"axes", adaptor.getAxesAttr()}},
      [&](Shapes s, shapes::EmitErrorFn emit) {
        return shapes::reduce(s[0], adaptor.getAxes(), adaptor.getKeepdims(),
                              emit);
      },
      {}, types);
}

template <typename Op>
static LogicalResult
inferArgReduce(MLIRContext *context, std::optional<Location> location,
               typename Op::Adaptor adaptor, SmallVectorImpl<Type> &types) {
  return inferWith(
      location, Op::getOperationName(), {{"input", adaptor.getInput()}},
      {{"axis", adaptor.getAxisAttr()}},
      [&](Shapes s, shapes::EmitErrorFn emit) -> FailureOr<shapes::Shape> {
        int64_t axis = adaptor.getAxis();
        if (axis < 0 || axis >= (int64_t)s[0].size())
          return emit() << "axis " << axis << " is out of range for rank "
                        << s[0].size(),
                 failure();
        return shapes::reduce(s[0], {axis}, adaptor.getKeepdims(), emit);
      },
      IntegerType::get(context, 64), types);
}

template <typename Op>
static LogicalResult inferPool(std::optional<Location> location,
                               typename Op::Adaptor adaptor,
                               SmallVectorImpl<Type> &types) {
  return inferWith(
      location, Op::getOperationName(), {{"input", adaptor.getInput()}},
      {{"kernel", adaptor.getKernelAttr()},
       {"strides", adaptor.getStridesAttr()},
       {"padding", adaptor.getPaddingAttr()},
       {"dilations", adaptor.getDilationsAttr()}},
      [&](Shapes s, shapes::EmitErrorFn emit) {
        return shapes::pool(s[0], adaptor.getKernel(), adaptor.getStrides(),
                            adaptor.getPadding(), adaptor.getDilations(),
                            adaptor.getCeilMode(), emit);
      },
      {}, types);
}

/// Normalizations keep their input's shape.
static FailureOr<shapes::Shape> sameShape(Shapes s, shapes::EmitErrorFn) {
  return shapes::Shape(s[0]);
}

#define TCC_INFER_WITH(Op, infer, ...)                                         \
  LogicalResult Op::inferReturnTypes(                                          \
      MLIRContext *context, std::optional<Location> location, Adaptor adaptor, \
      SmallVectorImpl<Type> &types) {                                          \
    (void)context;                                                             \
    return infer<Op>(__VA_ARGS__);                                             \
  }
TCC_INFER_WITH(ReduceSumOp, inferReduce, location, adaptor, types)
TCC_INFER_WITH(ReduceMeanOp, inferReduce, location, adaptor, types)
TCC_INFER_WITH(ReduceMaxOp, inferReduce, location, adaptor, types)
TCC_INFER_WITH(ReduceMinOp, inferReduce, location, adaptor, types)
TCC_INFER_WITH(ReduceProdOp, inferReduce, location, adaptor, types)
TCC_INFER_WITH(ArgMaxOp, inferArgReduce, context, location, adaptor, types)
TCC_INFER_WITH(ArgMinOp, inferArgReduce, context, location, adaptor, types)
TCC_INFER_WITH(MaxPoolOp, inferPool, location, adaptor, types)
TCC_INFER_WITH(AvgPoolOp, inferPool, location, adaptor, types)
#undef TCC_INFER_WITH

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferWith(
      location, getOperationName(),
      {{"lhs", adaptor.getLhs()}, {"rhs", adaptor.getRhs()}}, {},
      [](Shapes s, shapes::EmitErrorFn emit) {
        return shapes::matmul(s[0], s[1], emit);
      },
      {}, types);
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  return inferWith(
      location, getOperationName(),
      {{"input", adaptor.getInput()}, {"weight", adaptor.getWeight()}},
      {{"strides", adaptor.getStridesAttr()},
       {"padding", adaptor.getPaddingAttr()},
       {"dilations", adaptor.getDilationsAttr()},
       {"groups", adaptor.getGroupsAttr()}},
      [&](Shapes s, shapes::EmitErrorFn emit) {
        return shapes::conv(s[0], s[1], adaptor.getStrides(),
                            adaptor.getPadding(), adaptor.getDilations(),
                            adaptor.getGroups(), emit);
      },
      {}, types);
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferWith(location, getOperationName(),
                   {{"input", adaptor.getInput()}}, {}, sameShape, {}, types);
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferWith(location, getOperationName(),
                   {{"input", adaptor.getInput()}}, {}, sameShape, {}, types);
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferWith(
      location, getOperationName(), {{"input", adaptor.getInput()}},
      {{"perm", adaptor.getPermAttr()}},
      [&](Shapes s, shapes::EmitErrorFn emit) {
        return shapes::transpose(s[0], adaptor.getPerm(), emit);
      },
      {}, types);
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  InferenceError emit{location, getOperationName()};
  if (adaptor.getInputs().empty())
    return emit() << "needs at least one input", failure();
  // The first input stands for the others, whose shapes the rule reads.
  return inferWith(
      location, getOperationName(), {{"every input", adaptor.getInputs()[0]}},
      {{"axis", adaptor.getAxisAttr()}},
      [&](Shapes, shapes::EmitErrorFn emit) -> FailureOr<shapes::Shape> {
        SmallVector<ArrayRef<int64_t>> inputs;
        for (Value v : adaptor.getInputs()) {
          auto type = dyn_cast<RankedTensorType>(v.getType());
          if (!type)
            return emit() << "every input must be a ranked tensor", failure();
          inputs.push_back(type.getShape());
        }
        return shapes::concat(inputs, adaptor.getAxis(), emit);
      },
      {}, types);
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  return inferWith(
      location, getOperationName(),
      {{"data", adaptor.getData()}, {"indices", adaptor.getIndices()}},
      {{"axis", adaptor.getAxisAttr()}},
      [&](Shapes s, shapes::EmitErrorFn emit) {
        return shapes::gather(s[0], s[1], adaptor.getAxis(), emit);
      },
      {}, types);
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferWith(
      location, getOperationName(), {{"input", adaptor.getInput()}},
      {{"low", adaptor.getLowAttr()}, {"high", adaptor.getHighAttr()}},
      [&](Shapes s, shapes::EmitErrorFn emit) {
        return shapes::pad(s[0], adaptor.getLow(), adaptor.getHigh(), emit);
      },
      {}, types);
}

/// Checks an op's result type against the type it infers from its operands
/// and attributes: one rule for building and verifying.
template <typename Op> static LogicalResult verifyInferredType(Op op) {
  SmallVector<Type, 1> types;
  if (failed(Op::inferReturnTypes(op.getContext(), op.getLoc(),
                                  typename Op::Adaptor(op), types)))
    return failure();
  return checkResultShape(op, op.getType(),
                          shapes::Shape(cast<ShapedType>(types[0]).getShape()));
}

LogicalResult mlir::tcc::verifyBroadcastingElementwise(Operation *op) {
  SmallVector<ArrayRef<int64_t>> operands;
  for (Value v : op->getOperands())
    operands.push_back(shapeOf(v));
  auto emit = [&] { return op->emitOpError(); };
  FailureOr<shapes::Shape> shape = shapes::broadcast(operands, emit);
  for (Value r : op->getResults())
    if (failed(checkResultShape(op, r.getType(), shape)))
      return failure();
  return success();
}

LogicalResult ClampOp::verify() {
  if (getMin() && getMax() &&
      getMin()->convertToDouble() > getMax()->convertToDouble())
    return emitOpError() << "min (" << getMin()->convertToDouble()
                         << ") is greater than max ("
                         << getMax()->convertToDouble() << ")";
  return success();
}

LogicalResult ReduceSumOp::verify() { return verifyInferredType(*this); }
LogicalResult ReduceMeanOp::verify() { return verifyInferredType(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyInferredType(*this); }
LogicalResult ReduceMinOp::verify() { return verifyInferredType(*this); }
LogicalResult ReduceProdOp::verify() { return verifyInferredType(*this); }
LogicalResult ArgMaxOp::verify() { return verifyInferredType(*this); }
LogicalResult ArgMinOp::verify() { return verifyInferredType(*this); }
LogicalResult MatmulOp::verify() { return verifyInferredType(*this); }

LogicalResult ConvOp::verify() {
  ArrayRef<int64_t> weight = shapeOf(getWeight());
  if (Value bias = getBias()) {
    ArrayRef<int64_t> b = shapeOf(bias);
    if (b.size() != 1 || (b[0] != weight[0] && !ShapedType::isDynamic(b[0]) &&
                          !ShapedType::isDynamic(weight[0])))
      return emitOpError() << "bias shape " << shapes::str(b)
                           << " does not match the " << weight[0] << " filters";
  }
  return verifyInferredType(*this);
}

LogicalResult MaxPoolOp::verify() { return verifyInferredType(*this); }
LogicalResult AvgPoolOp::verify() { return verifyInferredType(*this); }

LogicalResult SoftmaxOp::verify() {
  return checkAxis(*this, getAxis(), getType().getRank());
}
LogicalResult LogSoftmaxOp::verify() {
  return checkAxis(*this, getAxis(), getType().getRank());
}

LogicalResult LayerNormOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  if (failed(checkAxis(*this, getAxis(), input.size())))
    return failure();
  ArrayRef<int64_t> normalized = input.drop_front(getAxis());
  for (Value param : {getScale(), getBias()}) {
    if (param && !shapes::broadcastsTo(shapeOf(param), normalized))
      return emitOpError() << "parameter shape " << shapes::str(shapeOf(param))
                           << " does not broadcast to the normalized shape "
                           << shapes::str(normalized);
  }
  if (getEpsilon().convertToDouble() < 0)
    return emitOpError() << "epsilon must be >= 0";
  return checkResultShape(*this, getType(), shapes::Shape(input));
}

LogicalResult BatchNormOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  if (input.size() < 2)
    return emitOpError() << "input must have rank >= 2 (N x C x ...); got "
                         << shapes::str(input);
  for (Value param : {getScale(), getBias(), getMean(), getVariance()}) {
    ArrayRef<int64_t> p = shapeOf(param);
    if (p.size() != 1 || (p[0] != input[1] && !ShapedType::isDynamic(p[0]) &&
                          !ShapedType::isDynamic(input[1])))
      return emitOpError() << "parameter shape " << shapes::str(p)
                           << " does not match the " << input[1]
                           << " channels of input " << shapes::str(input);
  }
  if (getEpsilon().convertToDouble() < 0)
    return emitOpError() << "epsilon must be >= 0";
  return checkResultShape(*this, getType(), shapes::Shape(input));
}

/// The shapes of an NLL loss's operands, or an error naming what is wrong.
static LogicalResult checkNllLossShapes(ArrayRef<int64_t> input,
                                        ArrayRef<int64_t> target,
                                        std::optional<ArrayRef<int64_t>> weight,
                                        shapes::EmitErrorFn emit) {
  auto same = [](int64_t a, int64_t b) {
    return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
  };
  bool ok = input.size() >= 2 && target.size() == input.size() - 1 &&
            same(input[0], target[0]);
  for (size_t i = 2; ok && i < input.size(); ++i)
    ok = same(input[i], target[i - 1]);
  if (!ok)
    return emit() << "input " << shapes::str(input) << " and target "
                  << shapes::str(target)
                  << " must be N x C x d... and N x d...";
  if (weight && (weight->size() != 1 || !same((*weight)[0], input[1])))
    return emit() << "weight " << shapes::str(*weight)
                  << " must hold one value per class (" << input[1] << ")";
  return success();
}

LogicalResult NllLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  Value weight = adaptor.getWeight();
  return inferWith(
      location, getOperationName(),
      {{"input", adaptor.getInput()},
       {"target", adaptor.getTarget()},
       {"weight", weight ? weight : adaptor.getInput()}},
      {{"reduction", adaptor.getReductionAttr()}},
      [&](Shapes s, shapes::EmitErrorFn emit) -> FailureOr<shapes::Shape> {
        if (failed(checkNllLossShapes(
                s[0], s[1], weight ? std::optional(s[2]) : std::nullopt, emit)))
          return failure();
        if (adaptor.getReduction() == LossReduction::none)
          return shapes::Shape(s[1]);
        return shapes::Shape();
      },
      {}, types);
}

FailureOr<std::pair<Value, Value>> NllLossOp::buildPick(TccBuilder &b) {
  auto type = cast<RankedTensorType>(getInput().getType());
  int64_t rank = type.getRank(), classes = type.getDimSize(1);
  if (ShapedType::isDynamic(classes))
    return b.emitError() << "the number of classes must be known", failure();
  Type et = type.getElementType(), i64 = b.builder().getI64Type();
  FailureOr<Value> t = b.cast(getTarget(), i64);
  if (failed(t))
    return failure();
  SmallVector<int64_t> expanded(
      cast<RankedTensorType>(getTarget().getType()).getShape());
  expanded.insert(expanded.begin() + 1, 1);
  FailureOr<Value> column = b.reshape(*t, expanded);
  if (failed(column))
    return failure();
  FailureOr<Value> hot =
      b.compare(ComparePredicate::eq, *column, b.iota(classes, i64, 1, rank));
  if (failed(hot))
    return failure();
  Value weight;
  if (Value w = getWeight()) {
    SmallVector<int64_t> wShape(rank, 1);
    wShape[1] = classes;
    FailureOr<Value> wide = b.reshape(w, wShape);
    if (failed(wide))
      return failure();
    FailureOr<Value> picked = b.select(*hot, *wide, b.scalar(et, 0));
    if (failed(picked))
      return failure();
    FailureOr<Value> sum = b.reduce<ReduceSumOp>(*picked, {1}, false);
    if (failed(sum))
      return failure();
    weight = *sum;
  }
  if (std::optional<int64_t> ignore = getIgnoreIndex()) {
    FailureOr<Value> valid =
        b.compare(ComparePredicate::ne, *t, b.scalar(i64, double(*ignore)));
    if (failed(valid))
      return failure();
    FailureOr<Value> counted = b.cast(*valid, et);
    if (failed(counted))
      return failure();
    if (weight)
      counted = b.binary<MulOp>(weight, *counted);
    if (failed(counted))
      return failure();
    weight = *counted;
  }
  return std::make_pair(*hot, weight);
}

LogicalResult NllLossOp::verify() {
  if (Value w = getWeight();
      w && getElementTypeOrSelf(w) != getElementTypeOrSelf(getInput()))
    return emitOpError() << "weight element type " << getElementTypeOrSelf(w)
                         << " differs from the input's "
                         << getElementTypeOrSelf(getInput());
  return verifyInferredType(*this);
}

LogicalResult ReshapeOp::verify() {
  int64_t in = shapes::numElements(shapeOf(getInput()));
  int64_t out = shapes::numElements(getType().getShape());
  if (!ShapedType::isDynamic(in) && !ShapedType::isDynamic(out) && in != out)
    return emitOpError() << "cannot reshape " << in << " elements ("
                         << shapes::str(shapeOf(getInput())) << ") into " << out
                         << " (" << shapes::str(getType().getShape()) << ")";
  return success();
}

LogicalResult TransposeOp::verify() { return verifyInferredType(*this); }

LogicalResult BroadcastToOp::verify() {
  if (!shapes::broadcastsTo(shapeOf(getInput()), getType().getShape()))
    return emitOpError() << "input shape " << shapes::str(shapeOf(getInput()))
                         << " does not broadcast to "
                         << shapes::str(getType().getShape());
  return success();
}

LogicalResult IotaOp::verify() {
  RankedTensorType type = getType();
  int64_t d = getDimension();
  if (d < 0 || d >= type.getRank())
    return emitOpError() << "dimension " << d << " is out of range for rank "
                         << type.getRank();
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (i != d && type.getDimSize(i) != 1)
      return emitOpError() << "dimension " << i << " must be 1 (the "
                           << "positions run along dimension " << d
                           << " only); got " << shapes::str(type.getShape());
  return success();
}

LogicalResult TrimOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  RankedTensorType out = getType();
  int64_t d = getDimension();
  if (cast<RankedTensorType>(getSize().getType()).getRank() != 0)
    return emitOpError() << "size must be a tensor<i64> of rank 0";
  if (in.getRank() != out.getRank() || d < 0 || d >= in.getRank())
    return emitOpError() << "dimension " << d << " must be one of the rank-"
                         << in.getRank() << " input's, and the result of "
                         << "the same rank";
  // (Other dimensions may be trimmed already: a Pad's sizes, one per
  // dimension.)
  if (in.isDynamicDim(d))
    return emitOpError() << "input must have a static size in dimension " << d
                         << " (the upper bound)";
  for (int64_t i = 0; i < in.getRank(); ++i) {
    if (i == d ? !out.isDynamicDim(i) : out.getDimSize(i) != in.getDimSize(i))
      return emitOpError() << "result " << shapes::str(out.getShape())
                           << " must be the input's "
                           << shapes::str(in.getShape()) << " with dimension "
                           << d << " dynamic";
  }
  return success();
}

LogicalResult ConcatOp::verify() {
  for (Value v : getInputs())
    if (getElementTypeOrSelf(v) != getType().getElementType())
      return emitOpError() << "input element type " << getElementTypeOrSelf(v)
                           << " differs from the result's "
                           << getType().getElementType();
  return verifyInferredType(*this);
}

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  ArrayRef<int64_t> result = getType().getShape();
  size_t rank = input.size();
  if (getOffsets().size() != rank || getSteps().size() != rank ||
      result.size() != rank)
    return emitOpError() << "needs one offset and one step per dimension of "
                         << "the rank-" << rank << " input and a result of "
                         << "the same rank";
  for (size_t i = 0; i < rank; ++i) {
    int64_t start = getOffsets()[i], step = getSteps()[i], n = result[i];
    if (step == 0)
      return emitOpError() << "step of dimension " << i << " is zero";
    if (ShapedType::isDynamic(input[i]) || ShapedType::isDynamic(n) || n == 0)
      continue;
    int64_t last = start + (n - 1) * step;
    if (start < 0 || start >= input[i] || last < 0 || last >= input[i])
      return emitOpError() << "dimension " << i << " reads indices " << start
                           << " to " << last << ", outside [0, " << input[i]
                           << ")";
  }
  return success();
}

LogicalResult SplitOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  int64_t axis = getAxis();
  if (failed(checkAxis(*this, axis, input.size())))
    return failure();
  if (getResults().empty())
    return emitOpError() << "needs at least one result";
  int64_t total = 0;
  for (Value r : getResults()) {
    ArrayRef<int64_t> s = shapeOf(r);
    if (getElementTypeOrSelf(r) != getElementTypeOrSelf(getInput()))
      return emitOpError() << "result element types must match the input's";
    shapes::Shape expected(input);
    expected[axis] = s.size() == input.size() ? s[axis] : 0;
    if (failed(checkResultShape(*this, r.getType(), expected)))
      return failure();
    total = (ShapedType::isDynamic(total) || ShapedType::isDynamic(s[axis]))
                ? ShapedType::kDynamic
                : total + s[axis];
  }
  if (!ShapedType::isDynamic(total) && !ShapedType::isDynamic(input[axis]) &&
      total != input[axis])
    return emitOpError() << "pieces add up to " << total << " along axis "
                         << axis << " but the input has " << input[axis];
  return success();
}

LogicalResult GatherOp::verify() { return verifyInferredType(*this); }
LogicalResult PadOp::verify() { return verifyInferredType(*this); }

LogicalResult FusedOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size() ||
      !llvm::equal(body.getArgumentTypes(), getInputs().getTypes()))
    return emitOpError() << "body arguments must match the inputs in number "
                         << "and type";
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError() << "body must end with tcc.yield";
  if (!llvm::equal(yield.getValues().getTypes(), getResultTypes()))
    return emitOpError() << "yielded types must match the result types";
  return success();
}

//===----------------------------------------------------------------------===//
// Bit casts, scans, selection, scatter
//===----------------------------------------------------------------------===//

/// Bits per element as tcc stores them (a bool takes a byte).
static unsigned storageBits(Type t) {
  return t.isInteger(1) ? 8 : t.getIntOrFloatBitWidth();
}

LogicalResult BitcastOp::verify() {
  Type from = getElementTypeOrSelf(getInput()),
       to = getElementTypeOrSelf(getType());
  if (storageBits(from) != storageBits(to))
    return emitOpError() << "cannot reinterpret " << storageBits(from)
                         << "-bit " << from << " as " << storageBits(to)
                         << "-bit " << to;
  return success();
}

LogicalResult CumsumOp::verify() {
  return checkAxis(*this, getAxis(), getType().getRank());
}
LogicalResult CumprodOp::verify() {
  return checkAxis(*this, getAxis(), getType().getRank());
}

LogicalResult TopKOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  int64_t axis = getAxis();
  if (failed(checkAxis(*this, axis, input.size())))
    return failure();
  if (shapeOf(getValues()) != shapeOf(getIndices()))
    return emitOpError() << "values " << shapes::str(shapeOf(getValues()))
                         << " and indices "
                         << shapes::str(shapeOf(getIndices()))
                         << " differ in shape";
  shapes::Shape expected(input);
  int64_t k = shapeOf(getValues()).size() == input.size()
                  ? shapeOf(getValues())[axis]
                  : 0;
  expected[axis] = k;
  if (failed(checkResultShape(*this, getValues().getType(), expected)))
    return failure();
  if (!ShapedType::isDynamic(k) && !ShapedType::isDynamic(input[axis]) &&
      k > input[axis])
    return emitOpError() << "k = " << k << " exceeds the " << input[axis]
                         << " elements along axis " << axis;
  return success();
}

LogicalResult ScatterOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData()), indices = shapeOf(getIndices()),
                    updates = shapeOf(getUpdates());
  int64_t axis = getAxis();
  if (failed(checkAxis(*this, axis, data.size())))
    return failure();
  if (indices != updates)
    return emitOpError() << "indices " << shapes::str(indices)
                         << " and updates " << shapes::str(updates)
                         << " differ in shape";
  if (indices.size() != data.size())
    return emitOpError() << "indices must have the rank of data ("
                         << data.size() << "); got " << shapes::str(indices);
  for (size_t i = 0; i < data.size(); ++i)
    if ((int64_t)i != axis && !ShapedType::isDynamic(indices[i]) &&
        !ShapedType::isDynamic(data[i]) && indices[i] > data[i])
      return emitOpError() << "updates " << shapes::str(updates)
                           << " exceed data " << shapes::str(data)
                           << " in dimension " << i;
  return success();
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

/// The single-element check of a condition tensor.
static LogicalResult checkCondition(Operation *op, Value cond) {
  int64_t n = shapes::numElements(shapeOf(cond));
  if (!ShapedType::isDynamic(n) && n != 1)
    return op->emitOpError() << "condition must hold one element; it has "
                             << shapes::str(shapeOf(cond));
  return success();
}

static YieldOp terminatorOf(Region &region) {
  Block &block = region.front();
  return block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
}

LogicalResult IfOp::verifyRegions() {
  if (failed(checkCondition(*this, getCondition())))
    return failure();
  for (Region *region : {&getThenRegion(), &getElseRegion()}) {
    YieldOp yield = terminatorOf(*region);
    if (!yield)
      return emitOpError() << "each region must end with tcc.yield";
    if (!llvm::equal(yield.getValues().getTypes(), getResultTypes()))
      return emitOpError() << "the "
                           << (region == &getThenRegion() ? "then" : "else")
                           << " region yields types other than the results'";
  }
  return success();
}

LogicalResult LoopOp::verifyRegions() {
  if (failed(checkCondition(*this, getCondition())))
    return failure();
  if (shapes::numElements(shapeOf(getTripCount())) != 1)
    return emitOpError() << "trip count must hold one element";
  Block &body = getBody().front();
  size_t n = getInits().size();
  auto i64 = RankedTensorType::get({}, IntegerType::get(getContext(), 64));
  auto i1 = RankedTensorType::get({}, IntegerType::get(getContext(), 1));
  SmallVector<Type> args = {i64, i1};
  llvm::append_range(args, getInits().getTypes());
  if (!llvm::equal(body.getArgumentTypes(), args))
    return emitOpError() << "body arguments must be the iteration number "
                         << "(tensor<i64>), the condition (tensor<i1>) and "
                         << "the carried values";
  if (getNumResults() < n ||
      !llvm::equal(TypeRange(getResultTypes()).take_front(n),
                   getInits().getTypes()))
    return emitOpError() << "the first results must have the types of the "
                         << "carried values";
  YieldOp yield = terminatorOf(getBody());
  if (!yield)
    return emitOpError() << "body must end with tcc.yield";
  size_t scans = getNumResults() - n;
  TypeRange yielded = yield.getValues().getTypes();
  if (yielded.size() != 1 + n + scans || yielded[0] != i1 ||
      !llvm::equal(yielded.slice(1, n), getInits().getTypes()))
    return emitOpError() << "body must yield the condition (tensor<i1>), "
                         << "the carried values and one value per scan "
                         << "output";
  for (size_t i = 0; i < scans; ++i) {
    auto result = cast<RankedTensorType>(getResult(n + i).getType());
    auto each = cast<RankedTensorType>(yielded[1 + n + i]);
    if (result.getRank() != each.getRank() + 1 || result.isDynamicDim(0) ||
        result.getShape().drop_front() != each.getShape() ||
        result.getElementType() != each.getElementType())
      return emitOpError() << "scan output " << i << " of type " << result
                           << " must stack " << each
                           << " along a new leading dimension of static size";
  }
  return success();
}

LogicalResult UkernelOp::verify() {
  bool tensors = llvm::all_of(getOperandTypes(),
                              [](Type t) { return isa<RankedTensorType>(t); });
  bool memrefs = llvm::all_of(getOperandTypes(),
                              [](Type t) { return isa<MemRefType>(t); });
  if (!tensors && !memrefs)
    return emitOpError() << "operands must be all tensors or all memrefs";
  if (memrefs && getNumResults() != 0)
    return emitOpError() << "on memrefs has no results";
  if (tensors && !llvm::equal(getResultTypes(), getOutputs().getTypes()))
    return emitOpError() << "on tensors returns one value per output, of "
                            "the same type";
  return success();
}

void UkernelOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (getNumResults() != 0)
    return; // Tensor form: value semantics.
  for (OpOperand &in : getInputsMutable())
    effects.emplace_back(MemoryEffects::Read::get(), &in,
                         SideEffects::DefaultResource::get());
  for (OpOperand &out : getOutputsMutable()) {
    effects.emplace_back(MemoryEffects::Read::get(), &out,
                         SideEffects::DefaultResource::get());
    effects.emplace_back(MemoryEffects::Write::get(), &out,
                         SideEffects::DefaultResource::get());
  }
}
