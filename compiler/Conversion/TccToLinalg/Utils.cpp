//===- Utils.cpp - helpers shared by the tcc -> linalg patterns -----------===//

#include "compiler/Conversion/TccToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/BuiltinTypes.h"

#include "dialects/Tcc/IR/TccOps.h"

using namespace mlir;
using namespace mlir::tcc;

AffineMap mlir::tcc::broadcastMap(MLIRContext *ctx,
                                  ArrayRef<int64_t> operandShape,
                                  ArrayRef<int64_t> resultShape) {
  size_t lead = resultShape.size() - operandShape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, d] : llvm::enumerate(operandShape)) {
    bool stretched = d == 1 && resultShape[lead + i] != 1;
    exprs.push_back(stretched ? getAffineConstantExpr(0, ctx)
                              : getAffineDimExpr(lead + i, ctx));
  }
  return AffineMap::get(resultShape.size(), 0, exprs, ctx);
}

Value mlir::tcc::emptyTensor(OpBuilder &b, Location loc,
                             RankedTensorType type) {
  return b.create<tensor::EmptyOp>(loc, type.getShape(),
                                   signlessType(type.getElementType()));
}

Type mlir::tcc::signlessType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return signlessTensor(tensor);
  if (auto i = dyn_cast<IntegerType>(type); i && !i.isSignless())
    return IntegerType::get(type.getContext(), i.getWidth());
  return type;
}

RankedTensorType mlir::tcc::signlessTensor(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.clone(signlessType(tensor.getElementType()));
}

bool mlir::tcc::isUnsignedInt(Type type) {
  return getElementTypeOrSelf(type).isUnsignedInteger();
}

const TypeConverter &mlir::tcc::signlessConverter() {
  static const TypeConverter *converter = [] {
    auto *c = new TypeConverter();
    c->addConversion([](Type t) { return signlessType(t); });
    auto cast = [](OpBuilder &b, Type type, ValueRange inputs,
                   Location loc) -> std::optional<Value> {
      return b.create<UnrealizedConversionCastOp>(loc, type, inputs)
          .getResult(0);
    };
    c->addSourceMaterialization(cast);
    c->addTargetMaterialization(cast);
    c->addArgumentMaterialization(cast);
    return c;
  }();
  return *converter;
}

Value mlir::tcc::filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                              Value value) {
  return b
      .create<linalg::FillOp>(loc, ValueRange{value},
                              ValueRange{emptyTensor(b, loc, type)})
      .getResult(0);
}

Value mlir::tcc::scalarConstant(OpBuilder &b, Location loc, Type type,
                                double value) {
  if (auto f = dyn_cast<FloatType>(type))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(f, value));
  // Through int64 so that values up to 2^63 convert; unsigned ones wrap.
  int64_t v = value >= 0x1p63
                  ? static_cast<int64_t>(static_cast<uint64_t>(value))
                  : static_cast<int64_t>(value);
  return b.create<arith::ConstantOp>(loc,
                                     b.getIntegerAttr(signlessType(type), v));
}

static Value extremeValue(OpBuilder &b, Location loc, Type type, bool lowest) {
  if (auto f = dyn_cast<FloatType>(type))
    return b.create<arith::ConstantOp>(
        loc, b.getFloatAttr(f, APFloat::getInf(f.getFloatSemantics(),
                                               /*Negative=*/lowest)));
  unsigned width = type.getIntOrFloatBitWidth();
  APInt v =
      width == 1 || type.isUnsignedInteger()
          ? (lowest ? APInt::getMinValue(width) : APInt::getMaxValue(width))
          : (lowest ? APInt::getSignedMinValue(width)
                    : APInt::getSignedMaxValue(width));
  return b.create<arith::ConstantOp>(loc,
                                     b.getIntegerAttr(signlessType(type), v));
}

Value mlir::tcc::lowestValue(OpBuilder &b, Location loc, Type type) {
  return extremeValue(b, loc, type, /*lowest=*/true);
}

Value mlir::tcc::highestValue(OpBuilder &b, Location loc, Type type) {
  return extremeValue(b, loc, type, /*lowest=*/false);
}

Value mlir::tcc::reshapeTensor(OpBuilder &b, Location loc, Value value,
                               RankedTensorType type) {
  type = signlessTensor(type);
  auto from = cast<RankedTensorType>(value.getType());
  if (from == type)
    return value;
  // One collapse or expand when dimensions only merge or only split.
  if (from.getRank() != type.getRank() && from.getRank() > 0 &&
      type.getRank() > 0) {
    bool collapse = from.getRank() > type.getRank();
    if (std::optional<SmallVector<ReassociationIndices>> groups =
            getReassociationIndicesForReshape(collapse ? from : type,
                                              collapse ? type : from)) {
      if (collapse)
        return b.create<tensor::CollapseShapeOp>(loc, type, value, *groups);
      return b.create<tensor::ExpandShapeOp>(loc, type, value, *groups);
    }
  }
  // Otherwise through rank 1: collapse everything, then expand to the target.
  // Rank 0 sides use the empty reassociation.
  auto flatType =
      RankedTensorType::get({from.getNumElements()}, from.getElementType());
  auto allDims = [](int64_t rank) {
    ReassociationIndices dims;
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(i);
    return rank == 0 ? SmallVector<ReassociationIndices>{}
                     : SmallVector<ReassociationIndices>{dims};
  };
  Value flat = value;
  if (from.getRank() == 0)
    flat = b.create<tensor::ExpandShapeOp>(loc, flatType, value, allDims(0));
  else if (from.getRank() > 1)
    flat = b.create<tensor::CollapseShapeOp>(loc, flatType, value,
                                             allDims(from.getRank()));
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, type, flat, allDims(0));
  return b.create<tensor::ExpandShapeOp>(loc, type, flat,
                                         allDims(type.getRank()));
}

Value mlir::tcc::padTensor(OpBuilder &b, Location loc, Value value,
                           ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                           Value padValue) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> lowOfr, highOfr;
  for (auto [d, l, h] : llvm::zip_equal(type.getShape(), low, high)) {
    shape.push_back(d + l + h);
    lowOfr.push_back(b.getIndexAttr(l));
    highOfr.push_back(b.getIndexAttr(h));
  }
  auto padded = RankedTensorType::get(shape, type.getElementType());
  return b.create<tensor::PadOp>(loc, padded, value, lowOfr, highOfr, padValue);
}

LogicalResult mlir::tcc::checkLowerable(Operation *op) {
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type t : types) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type)
      continue;
    if (!type.hasStaticShape())
      return op->emitOpError()
             << "has a dynamic shape (" << type
             << "), which the CPU lowering does not support yet; fix the "
                "input shapes (--input-shape)";
    // The contractions' and the control flow's lowerings keep element types
    // as they are, and linalg takes only signless integers.
    if (type.getElementType().isUnsignedInteger() &&
        isa<MatmulOp, ConvOp, IfOp, LoopOp>(op))
      return op->emitOpError() << "on unsigned integers (" << type
                               << ") is not supported by the CPU lowering yet";
  }
  return success();
}

SmallVector<utils::IteratorType> mlir::tcc::parallelIterators(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

Value mlir::tcc::gatherThroughMap(OpBuilder &b, Location loc, Value input,
                                  RankedTensorType type, AffineMap inputMap) {
  SmallVector<AffineMap> maps = {inputMap,
                                 b.getMultiDimIdentityMap(type.getRank())};
  return b
      .create<linalg::GenericOp>(
          loc, type, input, emptyTensor(b, loc, type), maps,
          parallelIterators(type.getRank()),
          [](OpBuilder &nb, Location l, ValueRange args) {
            nb.create<linalg::YieldOp>(l, args[0]);
          })
      .getResult(0);
}

void mlir::tcc::padEmptyInterface(func::FuncOp func) {
  if (func.isExternal())
    return;
  auto isEmpty = [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return tensor && tensor.hasStaticShape() && tensor.getNumElements() == 0;
  };
  auto unit = [](Type t) {
    return RankedTensorType::get(
        {1}, signlessType(cast<RankedTensorType>(t).getElementType()));
  };
  Block &entry = func.getBody().front();
  OpBuilder b(func.getContext());
  b.setInsertionPointToStart(&entry);
  SmallVector<Type> inputs(func.getArgumentTypes());
  for (BlockArgument arg : entry.getArguments()) {
    if (!isEmpty(arg.getType()))
      continue;
    // Nothing is ever read from it: an empty tensor stands in.
    auto type = cast<RankedTensorType>(arg.getType());
    arg.replaceAllUsesWith(emptyTensor(b, func.getLoc(), type));
    arg.setType(unit(type));
    inputs[arg.getArgNumber()] = arg.getType();
  }
  SmallVector<Type> results(func.getResultTypes());
  func.walk([&](func::ReturnOp ret) {
    b.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      if (!isEmpty(operand.get().getType()))
        continue;
      // Nothing is written: a fresh, never-written buffer of one element
      // becomes the caller's output buffer.
      Type t = unit(operand.get().getType());
      operand.set(b.create<bufferization::AllocTensorOp>(
          ret.getLoc(), cast<RankedTensorType>(t), ValueRange()));
      results[operand.getOperandNumber()] = t;
    }
  });
  func.setFunctionType(b.getFunctionType(inputs, results));
}
