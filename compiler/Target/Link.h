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

/// Links `objects` into a shared library at `output`.
LogicalResult linkSharedLibrary(ArrayRef<std::string> objects, StringRef output,
                                std::string &error);

/// Links `objects` with the given static libraries (and the C/C++ runtime)
/// into an executable at `output`.
LogicalResult linkExecutable(ArrayRef<std::string> objects,
                             ArrayRef<std::string> libraries, StringRef output,
                             std::string &error);

/// Merges `objects` into one relocatable object at `output` (`ld -r`).
LogicalResult linkRelocatable(ArrayRef<std::string> objects, StringRef output,
                              std::string &error);

/// Assembles `ptx` for `arch` (sm_90, ...) with the CUDA toolkit's ptxas
/// ($PATH, $CUDA_HOME/bin or /usr/local/cuda/bin) into `cubin`. Leaves
/// `cubin` empty and succeeds when there is no ptxas (the driver then
/// compiles the PTX when the artifact loads); fails with ptxas's messages
/// when it refuses the PTX.
LogicalResult assemblePtx(StringRef ptx, StringRef arch, std::string &cubin,
                          std::string &error);

/// The device code of `ptx` for each of `archs` (oldest first; the PTX is
/// for the first): for one, assemblePtx's cubin; for several, a fat binary
/// (the toolkit's fatbinary) of a cubin for each and the PTX, from which
/// the driver loads the cubin of the GPU at hand. Empty, and success,
/// where ptxas or fatbinary is missing (the driver compiles the PTX).
LogicalResult assembleDeviceCode(StringRef ptx, ArrayRef<std::string> archs,
                                 std::string &image, std::string &error);

} // namespace mlir::tcc

#endif // TCC_COMPILER_TARGET_LINK_H
