//===- Link.h - linking objects into libraries and executables -*- C++ -*-===//
//
// Machine code is made in process; linking it uses the system's C compiler
// driver (cc), which knows the platform's crt files and libraries.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_TARGET_LINK_H
#define TCC_COMPILER_TARGET_LINK_H

#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::tcc {

/// Links `object` into a shared library at `output`.
LogicalResult linkSharedLibrary(StringRef object, StringRef output,
                                std::string &error);

/// Links `object` with the given static libraries (and the C/C++ runtime)
/// into an executable at `output`.
LogicalResult linkExecutable(StringRef object, ArrayRef<std::string> libraries,
                             StringRef output, std::string &error);

} // namespace mlir::tcc

#endif // TCC_COMPILER_TARGET_LINK_H
