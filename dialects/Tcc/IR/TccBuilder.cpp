//===- TccBuilder.cpp - the one builder of tcc ops ------------------------===//

#include "dialects/Tcc/IR/TccBuilder.h"

#include "dialects/Tcc/IR/TccShapes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/APSInt.h"

#include <cstring>
#include <memory>

using namespace mlir;
using namespace mlir::tcc;

namespace {
/// The properties of an op about to be made, for its type inference.
class PropertiesStorage {
public:
  explicit PropertiesStorage(OperationName name) : name(name) {
    if (int size = name.getOpPropertyByteSize()) {
      storage = std::make_unique<char[]>(size);
      name.initOpProperties(get(), /*init=*/nullptr);
    }
  }
  ~PropertiesStorage() {
    if (storage)
      name.destroyOpProperties(get());
  }
  PropertiesStorage(const PropertiesStorage &) = delete;
  PropertiesStorage &operator=(const PropertiesStorage &) = delete;
  OpaqueProperties get() { return OpaqueProperties(storage.get()); }

private:
  OperationName name;
  std::unique_ptr<char[]> storage;
};

/// Keeps the first error reported while it lives instead of printing it, so
/// that the builder can report it through its own error function.
class FirstError {
public:
  explicit FirstError(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error &&
              message.empty())
            message = diag.str();
          return success();
        }) {}
  std::string message;

private:
  ScopedDiagnosticHandler handler;
};
} // namespace

TccBuilder::TccBuilder(OpBuilder &builder, Location loc)
    : b(builder), loc(loc) {}

InFlightDiagnostic TccBuilder::emitError() const {
  return errorFn ? errorFn() : mlir::emitError(loc);
}

LogicalResult TccBuilder::checkResultType(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return success(); // The op's own constraints say what it accepts.
  return typeCheck ? typeCheck(ranked) : success();
}

LogicalResult TccBuilder::checkSameElementType(Value lhs, Value rhs) {
  if (!lhs || !rhs || getElementTypeOrSelf(lhs) == getElementTypeOrSelf(rhs))
    return success(); // A missing operand is create()'s to report.
  return emitError() << "operand element types differ: " << lhs.getType()
                     << " and " << rhs.getType();
}

FailureOr<SmallVector<Value>>
TccBuilder::create(StringRef name, ValueRange operands,
                   ArrayRef<NamedAttribute> attributes, TypeRange resultTypes) {
  MLIRContext *context = getContext();
  std::optional<RegisteredOperationName> info =
      RegisteredOperationName::lookup(name, context);
  if (!info)
    return emitError() << "'" << name << "' is not an op of a loaded dialect",
           failure();
  for (auto [i, v] : llvm::enumerate(operands))
    if (!v)
      return emitError() << "'" << name << "' is missing operand " << i,
             failure();

  // Inherent attributes are the op's properties; the rest stay attributes.
  SmallVector<NamedAttribute> inherent, discardable;
  for (NamedAttribute a : attributes)
    (llvm::is_contained(info->getAttributeNames(), a.getName()) ? inherent
                                                                : discardable)
        .push_back(a);
  DictionaryAttr inherentDict = DictionaryAttr::get(context, inherent);
  // (Each FirstError ends before the builder reports: what is reported
  // while one lives is only kept.)
  PropertiesStorage properties(*info);
  if (info->getOpPropertyByteSize()) {
    std::optional<std::string> message;
    {
      FirstError error(context);
      if (failed(info->setOpPropertiesFromAttribute(
              *info, properties.get(), inherentDict,
              [&] { return mlir::emitError(loc); })))
        message = error.message;
    }
    if (message)
      return emitError() << "'" << name << "': " << *message, failure();
  }

  SmallVector<Type> types(resultTypes.begin(), resultTypes.end());
  if (types.empty()) {
    if (auto *infer = info->getInterface<InferTypeOpInterface>()) {
      std::optional<std::string> message;
      {
        FirstError error(context);
        if (failed(infer->inferReturnTypes(
                context, loc, operands,
                DictionaryAttr::get(context, attributes), properties.get(),
                RegionRange(), types)))
          message = error.message;
      }
      if (message) {
        // Inference words its errors as the op's verifier does; the
        // caller's context names what failed instead of the op.
        StringRef reason = *message;
        std::string opPrefix = ("'" + name + "' op ").str();
        reason.consume_front(opPrefix);
        if (reason.empty())
          return emitError()
                     << "cannot infer the result type of '" << name << "'",
                 failure();
        return emitError() << reason, failure();
      }
    } else if (info->hasTrait<mlir::OpTrait::SameOperandsAndResultType>() &&
               !operands.empty()) {
      types.push_back(operands.front().getType());
    } else {
      return emitError() << "'" << name << "' needs its result types",
             failure();
    }
  }
  for (Type t : types)
    if (failed(checkResultType(t)))
      return failure();

  OperationState state(loc, *info);
  state.addOperands(operands);
  state.addTypes(types);
  state.addAttributes(discardable);
  if (info->getOpPropertyByteSize())
    state.propertiesAttr = inherentDict;
  else
    state.addAttributes(inherent);
  Operation *op = Operation::create(state);
  std::optional<std::string> message;
  {
    FirstError error(context);
    if (failed(mlir::verify(op)))
      message = error.message;
  }
  if (message) {
    op->destroy();
    return emitError() << *message, failure();
  }

  // As OpBuilder::createOrFold: in place, folded, then announced.
  Block *block = b.getInsertionBlock();
  if (block)
    block->getOperations().insert(b.getInsertionPoint(), op);
  SmallVector<Value> results;
  if (folding && succeeded(b.tryFold(op, results)) && !results.empty()) {
    op->erase();
    return results;
  }
  if (block && b.getListener())
    b.getListener()->notifyOperationInserted(op, /*previous=*/{});
  return SmallVector<Value>(op->getResults());
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

SmallVector<char> tcc::rawElements(Type elementType, int64_t count,
                                   ArrayRef<double> values) {
  assert((values.size() == 1 || (int64_t)values.size() == count) &&
         "one value, or one per element");
  unsigned bytes =
      elementType.isInteger(1) ? 1 : elementType.getIntOrFloatBitWidth() / 8;
  SmallVector<char> raw(count * bytes);
  for (int64_t i = 0; i < count; ++i) {
    double v = values[values.size() == 1 ? 0 : i];
    APInt bits;
    if (auto ft = dyn_cast<FloatType>(elementType)) {
      APFloat f(v);
      bool lost;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      bits = f.bitcastToAPInt();
    } else if (elementType.isInteger(1)) {
      bits = APInt(8, v != 0);
    } else {
      // Saturating, and NaN to 0, as numpy's casts do on this machine.
      APSInt s(bytes * 8, elementType.isUnsignedInteger());
      bool exact;
      (void)APFloat(v).convertToInteger(s, APFloat::rmTowardZero, &exact);
      bits = s;
    }
    uint64_t word = bits.getZExtValue();
    std::memcpy(raw.data() + i * bytes, &word, bytes); // little-endian host
  }
  return raw;
}

Value TccBuilder::constant(ElementsAttr value) {
  return b.create<ConstantOp>(loc, value);
}

Value TccBuilder::constant(ArrayRef<int64_t> shape, Type elementType,
                           ArrayRef<double> values) {
  auto type = RankedTensorType::get(shape, elementType);
  SmallVector<char> raw =
      rawElements(elementType, type.getNumElements(), values);
  if (elementType.isInteger(1))
    return constant(DenseElementsAttr::get(
        type, SmallVector<bool>(raw.begin(), raw.end())));
  return constant(DenseElementsAttr::getFromRawBuffer(type, raw));
}

Value TccBuilder::scalarLike(Value like, double value) {
  return scalar(getElementTypeOrSelf(like), value);
}

Value TccBuilder::zerosLike(Value v) {
  return splat(llvm::cast<RankedTensorType>(v.getType()), 0.0);
}

Value TccBuilder::iota(int64_t n, Type elementType, int64_t axis,
                       int64_t rank) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = n;
  SmallVector<double> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(i);
  return constant(shape, elementType,
                  n == 1 ? ArrayRef<double>{0.0} : ArrayRef<double>(values));
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

FailureOr<Value> TccBuilder::compare(ComparePredicate predicate, Value lhs,
                                     Value rhs) {
  if (failed(checkSameElementType(lhs, rhs)))
    return failure();
  return build<CompareOp>(
      {lhs, rhs},
      {attr("predicate", ComparePredicateAttr::get(getContext(), predicate))});
}

FailureOr<Value> TccBuilder::clamp(Value v, std::optional<double> min,
                                   std::optional<double> max) {
  SmallVector<NamedAttribute, 2> attrs;
  if (min)
    attrs.push_back(attr("min", b.getF64FloatAttr(*min)));
  if (max)
    attrs.push_back(attr("max", b.getF64FloatAttr(*max)));
  return build<ClampOp>({v}, attrs);
}

FailureOr<Value> TccBuilder::select(Value condition, Value onTrue,
                                    Value onFalse) {
  if (failed(checkSameElementType(onTrue, onFalse)))
    return failure();
  return build<SelectOp>({condition, onTrue, onFalse});
}

FailureOr<Value> TccBuilder::cast(Value v, Type elementType) {
  auto type = v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr;
  if (type && type.getElementType() == elementType)
    return v;
  if (!type)
    return build<CastOp>({v}); // reports what is wrong with the operand
  Type result = type.clone(elementType);
  return build<CastOp>({v}, {}, result);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// The shape of `v`, or null when it is no ranked tensor (create() reports).
static std::optional<ArrayRef<int64_t>> shapeIfRanked(Value v) {
  if (auto type = v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr)
    return type.getShape();
  return std::nullopt;
}

FailureOr<Value> TccBuilder::reshape(Value v, ArrayRef<int64_t> shape) {
  std::optional<ArrayRef<int64_t>> from = shapeIfRanked(v);
  if (!from)
    return build<ReshapeOp>({v});
  if (*from == shape)
    return v;
  for (int64_t d : shape)
    if (d < 0 && !ShapedType::isDynamic(d))
      return emitError() << "cannot reshape " << shapes::str(*from) << " into "
                         << shapes::str(shape),
             failure();
  int64_t in = shapes::numElements(*from), out = shapes::numElements(shape);
  if (!ShapedType::isDynamic(in) && !ShapedType::isDynamic(out) && in != out)
    return emitError() << "cannot reshape " << shapes::str(*from) << " (" << in
                       << " elements) into " << shapes::str(shape) << " ("
                       << out << " elements)",
           failure();
  Type type = llvm::cast<RankedTensorType>(v.getType()).clone(shape);
  return build<ReshapeOp>({v}, {}, type);
}

FailureOr<Value> TccBuilder::transpose(Value v, ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())) &&
      shapeIfRanked(v) && shapeIfRanked(v)->size() == perm.size())
    return v;
  return build<TransposeOp>({v}, {attr("perm", b.getDenseI64ArrayAttr(perm))});
}

FailureOr<Value> TccBuilder::broadcastTo(Value v, ArrayRef<int64_t> shape) {
  std::optional<ArrayRef<int64_t>> from = shapeIfRanked(v);
  if (!from)
    return build<BroadcastToOp>({v});
  if (*from == shape)
    return v;
  if (!shapes::broadcastsTo(*from, shape))
    return emitError() << "shape " << shapes::str(*from)
                       << " does not broadcast to " << shapes::str(shape),
           failure();
  Type type = llvm::cast<RankedTensorType>(v.getType()).clone(shape);
  return build<BroadcastToOp>({v}, {}, type);
}

FailureOr<Value> TccBuilder::concat(ValueRange values, int64_t axis) {
  if (values.size() == 1 && values.front())
    return values.front();
  return build<ConcatOp>(values, {attr("axis", b.getI64IntegerAttr(axis))});
}

FailureOr<Value> TccBuilder::slice(Value v, ArrayRef<int64_t> offsets,
                                   ArrayRef<int64_t> steps,
                                   ArrayRef<int64_t> sizes) {
  std::optional<ArrayRef<int64_t>> from = shapeIfRanked(v);
  if (!from)
    return build<SliceOp>({v});
  bool identity = *from == sizes;
  for (auto [o, s] : llvm::zip(offsets, steps))
    identity &= o == 0 && s == 1;
  if (identity && offsets.size() == sizes.size() &&
      steps.size() == sizes.size())
    return v;
  for (int64_t d : sizes)
    if (d < 0 && !ShapedType::isDynamic(d))
      return emitError() << "a slice of " << shapes::str(*from)
                         << " cannot have the shape " << shapes::str(sizes),
             failure();
  Type type = llvm::cast<RankedTensorType>(v.getType()).clone(sizes);
  return build<SliceOp>({v},
                        {attr("offsets", b.getDenseI64ArrayAttr(offsets)),
                         attr("steps", b.getDenseI64ArrayAttr(steps))},
                        type);
}

FailureOr<Value> TccBuilder::sliceAxis(Value v, int64_t axis, int64_t start,
                                       int64_t size, int64_t step) {
  std::optional<ArrayRef<int64_t>> from = shapeIfRanked(v);
  if (!from)
    return build<SliceOp>({v});
  if (axis < 0 || axis >= (int64_t)from->size())
    return emitError() << "axis " << axis << " is out of range for rank "
                       << from->size(),
           failure();
  SmallVector<int64_t> offsets(from->size(), 0), steps(from->size(), 1),
      sizes(*from);
  offsets[axis] = size ? start : 0;
  steps[axis] = step;
  sizes[axis] = size;
  return slice(v, offsets, steps, sizes);
}

FailureOr<Value> TccBuilder::gather(Value data, Value indices, int64_t axis) {
  return build<GatherOp>({data, indices},
                         {attr("axis", b.getI64IntegerAttr(axis))});
}

FailureOr<Value> TccBuilder::pad(Value v, ArrayRef<int64_t> low,
                                 ArrayRef<int64_t> high, double value,
                                 PadMode mode) {
  std::optional<ArrayRef<int64_t>> from = shapeIfRanked(v);
  if (from && low.size() == from->size() && high.size() == from->size() &&
      llvm::all_of(low, [](int64_t x) { return x == 0; }) &&
      llvm::all_of(high, [](int64_t x) { return x == 0; }))
    return v;
  return build<PadOp>({v}, {attr("low", b.getDenseI64ArrayAttr(low)),
                            attr("high", b.getDenseI64ArrayAttr(high)),
                            attr("mode", PadModeAttr::get(getContext(), mode)),
                            attr("value", b.getF64FloatAttr(value))});
}

//===----------------------------------------------------------------------===//
// Reductions, contractions, normalizations
//===----------------------------------------------------------------------===//

FailureOr<Value> TccBuilder::sumToShape(Value g, ArrayRef<int64_t> target) {
  std::optional<ArrayRef<int64_t>> shape = shapeIfRanked(g);
  if (!shape)
    return build<ReduceSumOp>({g});
  if (*shape == target)
    return g;
  if (!shapes::broadcastsTo(target, *shape))
    return emitError() << "shape " << shapes::str(target)
                       << " does not broadcast to " << shapes::str(*shape),
           failure();
  int64_t lead = shape->size() - target.size();
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < (int64_t)shape->size(); ++i)
    if (i < lead || (target[i - lead] == 1 && (*shape)[i] != 1))
      axes.push_back(i);
  FailureOr<Value> sum = reduce<ReduceSumOp>(g, axes, /*keepdims=*/true);
  if (failed(sum))
    return failure();
  return reshape(*sum, target);
}

FailureOr<Value> TccBuilder::matmul(Value lhs, Value rhs) {
  if (failed(checkSameElementType(lhs, rhs)))
    return failure();
  return build<MatmulOp>({lhs, rhs});
}

FailureOr<Value> TccBuilder::conv(Value input, Value weight, Value bias,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> padding,
                                  ArrayRef<int64_t> dilations, int64_t groups) {
  SmallVector<Value, 3> operands = {input, weight};
  if (bias)
    operands.push_back(bias);
  return build<ConvOp>(operands,
                       {attr("strides", b.getDenseI64ArrayAttr(strides)),
                        attr("padding", b.getDenseI64ArrayAttr(padding)),
                        attr("dilations", b.getDenseI64ArrayAttr(dilations)),
                        attr("groups", b.getI64IntegerAttr(groups))});
}

FailureOr<Value> TccBuilder::nllLoss(Value input, Value target, Value weight,
                                     LossReduction reduction,
                                     std::optional<int64_t> ignoreIndex) {
  SmallVector<Value, 3> operands = {input, target};
  if (weight)
    operands.push_back(weight);
  SmallVector<NamedAttribute, 2> attrs = {
      attr("reduction", LossReductionAttr::get(getContext(), reduction))};
  if (ignoreIndex)
    attrs.push_back(attr("ignore_index", b.getI64IntegerAttr(*ignoreIndex)));
  return build<NllLossOp>(operands, attrs);
}
