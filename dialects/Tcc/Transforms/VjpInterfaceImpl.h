//===- VjpInterfaceImpl.h - the VJP rules of tcc ops ------------*- C++ -*-===//

#ifndef TCC_DIALECT_TCC_TRANSFORMS_VJPINTERFACEIMPL_H
#define TCC_DIALECT_TCC_TRANSFORMS_VJPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace tcc {
/// Attaches DifferentiableOpInterface to every differentiable tcc op. The
/// rules live outside TccOps.td (as external models) and are written in tcc
/// ops; tcc-autodiff and the tracer's backward() both call them.
void registerDifferentiableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace tcc
} // namespace mlir

#endif // TCC_DIALECT_TCC_TRANSFORMS_VJPINTERFACEIMPL_H
