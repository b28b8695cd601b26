//===- UkernelIsa.h - which micro-kernels a CPU artifact calls --*- C++ -*-===//

#ifndef TCC_COMPILER_CONVERSION_UKERNELISA_H
#define TCC_COMPILER_CONVERSION_UKERNELISA_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir::tcc {

/// The ISA level of the micro-kernels (runtime/ukernels) contractions call;
/// the values are the kernels' own (tcc_uk_isa). `none` lowers contractions
/// to generated loops instead.
enum class UkernelIsa : int32_t {
  none = -1,
  generic = 0,
  avx2 = 1,
  avx512 = 2
};

/// "none", "generic", "avx2" or "avx512" (also the kernel objects' names,
/// lib/tcc_ukernels_<name>.o).
inline llvm::StringRef ukernelIsaName(UkernelIsa isa) {
  switch (isa) {
  case UkernelIsa::none:
    return "none";
  case UkernelIsa::generic:
    return "generic";
  case UkernelIsa::avx2:
    return "avx2";
  case UkernelIsa::avx512:
    return "avx512";
  }
  return "none";
}

/// The level a name gives, or nullopt for an unknown name.
inline std::optional<UkernelIsa> parseUkernelIsa(llvm::StringRef name) {
  for (UkernelIsa isa : {UkernelIsa::none, UkernelIsa::generic,
                         UkernelIsa::avx2, UkernelIsa::avx512})
    if (name == ukernelIsaName(isa))
      return isa;
  return std::nullopt;
}

} // namespace mlir::tcc

#endif // TCC_COMPILER_CONVERSION_UKERNELISA_H
