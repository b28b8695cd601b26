//===- BufferizableOpInterfaceImpl.cpp - bufferizing tcc ops --------------===//

#include "dialects/Tcc/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"

#include "dialects/Tcc/IR/TccOps.h"

using namespace mlir;
using namespace mlir::bufferization;

bool mlir::tcc::isContiguousRowMajor(MemRefType type) {
  if (!type.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return false;
  int64_t expected = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    int64_t size = type.getDimSize(d);
    if (size != 1 && strides[d] != expected)
      return false;
    expected *= size;
  }
  return true;
}

namespace {
/// A micro-kernel call reads its inputs and writes its outputs in place;
/// it never reads what the outputs held before (kernels that accumulate
/// get an initialised output through a separate op).
struct UkernelOpInterface
    : DstBufferizableOpInterfaceExternalModel<UkernelOpInterface,
                                              tcc::UkernelOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return !cast<DestinationStyleOpInterface>(op).isDpsInit(&operand);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options) const {
    auto ukernel = cast<tcc::UkernelOp>(op);
    auto buffersOf = [&](OperandRange values,
                         SmallVectorImpl<Value> &out) -> LogicalResult {
      for (Value v : values) {
        FailureOr<Value> buffer = getBuffer(rewriter, v, options);
        if (failed(buffer))
          return failure();
        out.push_back(*buffer);
      }
      return success();
    };
    SmallVector<Value> inputs, outputs;
    if (failed(buffersOf(ukernel.getInputs(), inputs)) ||
        failed(buffersOf(ukernel.getOutputs(), outputs)))
      return failure();
    // The kernels address dense row-major buffers. A strided one (a slice
    // of a buffer inside a loop, say) is staged through a dense copy: inputs
    // are copied in before the call, outputs copied out after it.
    Location loc = op->getLoc();
    rewriter.setInsertionPoint(op);
    auto dense = [&](Value buffer) -> Value {
      auto type = cast<MemRefType>(buffer.getType());
      if (tcc::isContiguousRowMajor(type))
        return buffer;
      auto denseType =
          MemRefType::get(type.getShape(), type.getElementType(),
                          MemRefLayoutAttrInterface(), type.getMemorySpace());
      return rewriter.create<memref::AllocOp>(loc, denseType);
    };
    SmallVector<Value> callInputs, callOutputs;
    for (Value in : inputs) {
      Value d = dense(in);
      if (d != in)
        rewriter.create<memref::CopyOp>(loc, in, d);
      callInputs.push_back(d);
    }
    for (Value out : outputs)
      callOutputs.push_back(dense(out));
    rewriter.create<tcc::UkernelOp>(
        loc, TypeRange{}, ukernel.getName(), callInputs, callOutputs,
        ukernel.getParams(), ukernel.getAccumulateParamsAttr());
    // The staging buffers are placed (or freed) with every other buffer by
    // the memory plan and the deallocation pipeline that follow.
    for (auto [out, d] : llvm::zip(outputs, callOutputs))
      if (d != out)
        rewriter.create<memref::CopyOp>(loc, d, out);
    replaceOpWithBufferizedValues(rewriter, op, outputs);
    return success();
  }
};
} // namespace

void mlir::tcc::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TccDialect *) {
    UkernelOp::attachInterface<UkernelOpInterface>(*ctx);
  });
}
