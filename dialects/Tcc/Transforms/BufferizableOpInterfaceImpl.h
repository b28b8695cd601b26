//===- BufferizableOpInterfaceImpl.h - bufferizing tcc ops ------*- C++ -*-===//

#ifndef TCC_DIALECT_TCC_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define TCC_DIALECT_TCC_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
class MemRefType;
namespace tcc {
/// Whether a buffer of `type` is dense and row-major (static strides equal
/// to the suffix products of the shape, size-1 dimensions aside); its offset
/// may be dynamic. Micro-kernels address their buffers this way.
bool isContiguousRowMajor(MemRefType type);

/// Lets one-shot bufferization handle tcc.ukernel (the only tcc op that
/// survives until bufferization).
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace tcc
} // namespace mlir

#endif // TCC_DIALECT_TCC_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
