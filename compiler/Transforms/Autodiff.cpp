//===- Autodiff.cpp - the gradient function of a tcc function -------------===//

#include "compiler/Transforms/Autodiff.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include "dialects/Tcc/IR/TccOps.h"
#include "dialects/Tcc/IR/TccShapes.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_TCCAUTODIFF
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

bool tcc::isDifferentiableType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

LogicalResult tcc::applyVjp(OpBuilder &builder, Operation *op,
                            ArrayRef<Value> resultCotangents,
                            SmallVectorImpl<Value> &operandCotangents) {
  auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
  if (!differentiable)
    return op->emitOpError()
           << "is not differentiable (it has no VJP rule), but the gradient "
              "flows through it";
  assert(resultCotangents.size() == op->getNumResults());
  for (auto [result, ct] : llvm::zip(op->getResults(), resultCotangents))
    if (ct && ct.getType() != result.getType())
      return op->emitOpError() << "result cotangent has type " << ct.getType()
                               << " but the result has " << result.getType();
  if (failed(differentiable.buildVjp(builder, resultCotangents,
                                     operandCotangents)))
    return failure();
  if (operandCotangents.size() != op->getNumOperands())
    return op->emitOpError()
           << "VJP rule gave " << operandCotangents.size() << " cotangents for "
           << op->getNumOperands() << " operands";
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    Value &ct = operandCotangents[i];
    if (!ct)
      continue;
    if (!differentiable.isDifferentiableOperand(i)) {
      ct = Value();
      continue;
    }
    if (ct.getType() != op->getOperand(i).getType())
      return op->emitOpError()
             << "VJP rule gave operand " << i << " a cotangent of type "
             << ct.getType() << " instead of " << op->getOperand(i).getType();
  }
  return success();
}

Value tcc::accumulateCotangent(OpBuilder &builder, Location loc, Value sum,
                               Value addend) {
  if (!sum)
    return addend;
  if (!addend)
    return sum;
  return builder.create<AddOp>(loc, sum.getType(), sum, addend);
}

LogicalResult tcc::backpropagate(OpBuilder &builder, ArrayRef<Operation *> ops,
                                 DenseMap<Value, Value> &cotangents,
                                 function_ref<bool(Value)> isActive) {
  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> resultCts;
    bool any = false;
    for (Value r : op->getResults()) {
      resultCts.push_back(cotangents.lookup(r));
      any |= resultCts.back() != nullptr;
    }
    if (!any || llvm::none_of(op->getOperands(), isActive))
      continue;
    SmallVector<Value> operandCts;
    if (failed(applyVjp(builder, op, resultCts, operandCts)))
      return failure();
    for (auto [operand, ct] : llvm::zip(op->getOperands(), operandCts))
      if (ct && isActive(operand))
        cotangents[operand] =
            accumulateCotangent(builder, op->getLoc(), cotangents[operand], ct);
  }
  return success();
}

namespace {
struct TccAutodiffPass : tcc::impl::TccAutodiffBase<TccAutodiffPass> {
  using TccAutodiffBase::TccAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(function);
    if (!forward) {
      module.emitError() << "tcc-autodiff: no function named '" << function
                         << "'";
      return signalPassFailure();
    }
    if (failed(differentiate(forward)))
      signalPassFailure();
  }

  LogicalResult differentiate(func::FuncOp forward) {
    if (!forward.getBody().hasOneBlock())
      return forward.emitError() << "tcc-autodiff: @" << forward.getName()
                                 << " must have a body of one block";
    FunctionType type = forward.getFunctionType();
    if (type.getNumResults() == 0)
      return forward.emitError() << "tcc-autodiff: @" << forward.getName()
                                 << " returns nothing to differentiate";
    auto lossType = dyn_cast<RankedTensorType>(type.getResult(0));
    if (!lossType || !isDifferentiableType(lossType) ||
        !lossType.hasStaticShape() || lossType.getNumElements() != 1)
      return forward.emitError()
             << "tcc-autodiff: the loss (result 0 of @" << forward.getName()
             << ") must be a floating-point tensor with one element, not "
             << type.getResult(0);

    SmallVector<unsigned> args;
    if (wrt.empty()) {
      for (unsigned i = 0; i < type.getNumInputs(); ++i)
        if (isDifferentiableType(type.getInput(i)))
          args.push_back(i);
    } else {
      for (int64_t i : wrt) {
        if (i < 0 || i >= int64_t(type.getNumInputs()))
          return forward.emitError()
                 << "tcc-autodiff: wrt index " << i << " is out of range: @"
                 << forward.getName() << " has " << type.getNumInputs()
                 << " arguments";
        if (!isDifferentiableType(type.getInput(i)))
          return forward.emitError()
                 << "tcc-autodiff: argument " << i << " of @"
                 << forward.getName() << " has type " << type.getInput(i)
                 << ", which carries no gradient";
        args.push_back(i);
      }
    }

    std::string name = gradFunction.empty()
                           ? (forward.getName() + "_grad").str()
                           : std::string(gradFunction);
    ModuleOp module = getOperation();
    if (module.lookupSymbol(name))
      return forward.emitError()
             << "tcc-autodiff: a symbol named '" << name << "' exists already";
    OpBuilder moduleBuilder(forward);
    moduleBuilder.setInsertionPointAfter(forward);
    auto grad = cast<func::FuncOp>(moduleBuilder.clone(*forward));
    grad.setName(name);

    Block &body = grad.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value loss = ret.getOperand(0);

    // Forward activity: what depends on a differentiated argument.
    DenseSet<Value> active;
    for (unsigned i : args)
      active.insert(body.getArgument(i));
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator()) {
      ops.push_back(&op);
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return active.contains(v); }))
        for (Value r : op.getResults())
          if (isDifferentiableType(r.getType()))
            active.insert(r);
    }

    OpBuilder b(ret);
    Location loc = grad.getLoc();
    DenseMap<Value, Value> cotangents;
    auto zerosOf = [&](Type t) -> Value {
      auto tensor = cast<RankedTensorType>(t);
      auto e = cast<FloatType>(tensor.getElementType());
      return b.create<ConstantOp>(
          loc, DenseElementsAttr::get(tensor,
                                      APFloat::getZero(e.getFloatSemantics())));
    };
    if (active.contains(loss)) {
      auto e = cast<FloatType>(lossType.getElementType());
      cotangents[loss] = b.create<ConstantOp>(
          loc, DenseElementsAttr::get(lossType,
                                      APFloat::getOne(e.getFloatSemantics())));
      if (failed(backpropagate(b, ops, cotangents,
                               [&](Value v) { return active.contains(v); })))
        return failure();
    }

    SmallVector<Value> results(ret.getOperands());
    SmallVector<Attribute> resultAttrs;
    for (unsigned i = 0; i < results.size(); ++i)
      resultAttrs.push_back(grad.getResultAttrDict(i)
                                ? Attribute(grad.getResultAttrDict(i))
                                : b.getDictionaryAttr({}));
    for (unsigned i : args) {
      Value arg = body.getArgument(i);
      Value ct = cotangents.lookup(arg);
      results.push_back(ct ? ct : zerosOf(arg.getType()));
      auto argName = grad.getArgAttrOfType<StringAttr>(i, "tcc.name");
      std::string gradName =
          "grad_" + (argName ? argName.str() : "arg" + std::to_string(i));
      resultAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr("tcc.name", b.getStringAttr(gradName))));
    }
    b.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();
    grad.setFunctionType(FunctionType::get(grad.getContext(), type.getInputs(),
                                           ValueRange(results).getTypes()));
    grad.setAllResultAttrs(resultAttrs);
    return success();
  }
};
} // namespace
