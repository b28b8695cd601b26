//===- TccOps.cpp - tcc op verifiers --------------------------------------===//
//
// Verifiers check each op's types against the shape rules in TccShapes.cpp,
// so a frontend that infers types with those rules always verifies.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

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
    return op->emitOpError() << "result shape " << shapes::str(actual)
                             << " does not match the expected shape "
                             << shapes::str(*expected);
  return success();
}

static LogicalResult checkAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError() << "axis " << axis
                             << " is out of range for rank " << rank;
  return success();
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
  if (getMin() && getMax() && getMin()->convertToDouble() >
                                  getMax()->convertToDouble())
    return emitOpError() << "min (" << getMin()->convertToDouble()
                         << ") is greater than max ("
                         << getMax()->convertToDouble() << ")";
  return success();
}

template <typename Op>
static LogicalResult verifyReduce(Op op) {
  return checkResultShape(op, op.getType(),
                          shapes::reduce(shapeOf(op.getInput()), op.getAxes(),
                                         op.getKeepdims(),
                                         [&] { return op.emitOpError(); }));
}
LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMeanOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMinOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceProdOp::verify() { return verifyReduce(*this); }

template <typename Op>
static LogicalResult verifyArgReduce(Op op) {
  int64_t axis = op.getAxis();
  if (failed(checkAxis(op, axis, shapeOf(op.getInput()).size())))
    return failure();
  return checkResultShape(op, op.getType(),
                          shapes::reduce(shapeOf(op.getInput()), {axis},
                                         op.getKeepdims(),
                                         [&] { return op.emitOpError(); }));
}
LogicalResult ArgMaxOp::verify() { return verifyArgReduce(*this); }
LogicalResult ArgMinOp::verify() { return verifyArgReduce(*this); }

LogicalResult MatmulOp::verify() {
  return checkResultShape(*this, getType(),
                          shapes::matmul(shapeOf(getLhs()), shapeOf(getRhs()),
                                         [&] { return emitOpError(); }));
}

LogicalResult ConvOp::verify() {
  ArrayRef<int64_t> weight = shapeOf(getWeight());
  if (Value bias = getBias()) {
    ArrayRef<int64_t> b = shapeOf(bias);
    if (b.size() != 1 || (b[0] != weight[0] && !ShapedType::isDynamic(b[0]) &&
                          !ShapedType::isDynamic(weight[0])))
      return emitOpError() << "bias shape " << shapes::str(b)
                           << " does not match the " << weight[0]
                           << " filters";
  }
  return checkResultShape(
      *this, getType(),
      shapes::conv(shapeOf(getInput()), weight, getStrides(), getPadding(),
                   getDilations(), getGroups(),
                   [&] { return emitOpError(); }));
}

template <typename Op>
static LogicalResult verifyPool(Op op) {
  return checkResultShape(
      op, op.getType(),
      shapes::pool(shapeOf(op.getInput()), op.getKernel(), op.getStrides(),
                   op.getPadding(), op.getDilations(), op.getCeilMode(),
                   [&] { return op.emitOpError(); }));
}
LogicalResult MaxPoolOp::verify() { return verifyPool(*this); }
LogicalResult AvgPoolOp::verify() { return verifyPool(*this); }

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

LogicalResult ReshapeOp::verify() {
  int64_t in = shapes::numElements(shapeOf(getInput()));
  int64_t out = shapes::numElements(getType().getShape());
  if (!ShapedType::isDynamic(in) && !ShapedType::isDynamic(out) && in != out)
    return emitOpError() << "cannot reshape " << in << " elements ("
                         << shapes::str(shapeOf(getInput())) << ") into "
                         << out << " (" << shapes::str(getType().getShape())
                         << ")";
  return success();
}

LogicalResult TransposeOp::verify() {
  return checkResultShape(*this, getType(),
                          shapes::transpose(shapeOf(getInput()), getPerm(),
                                            [&] { return emitOpError(); }));
}

LogicalResult BroadcastToOp::verify() {
  if (!shapes::broadcastsTo(shapeOf(getInput()), getType().getShape()))
    return emitOpError() << "input shape " << shapes::str(shapeOf(getInput()))
                         << " does not broadcast to "
                         << shapes::str(getType().getShape());
  return success();
}

LogicalResult ConcatOp::verify() {
  SmallVector<ArrayRef<int64_t>> inputs;
  for (Value v : getInputs()) {
    if (getElementTypeOrSelf(v) != getType().getElementType())
      return emitOpError() << "input element type " << getElementTypeOrSelf(v)
                           << " differs from the result's "
                           << getType().getElementType();
    inputs.push_back(shapeOf(v));
  }
  return checkResultShape(*this, getType(),
                          shapes::concat(inputs, getAxis(),
                                         [&] { return emitOpError(); }));
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

LogicalResult GatherOp::verify() {
  return checkResultShape(*this, getType(),
                          shapes::gather(shapeOf(getData()),
                                         shapeOf(getIndices()), getAxis(),
                                         [&] { return emitOpError(); }));
}

LogicalResult PadOp::verify() {
  return checkResultShape(*this, getType(),
                          shapes::pad(shapeOf(getInput()), getLow(), getHigh(),
                                      [&] { return emitOpError(); }));
}

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
