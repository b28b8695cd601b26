//===- Locations.h - model nodes named by op locations ----------*- C++ -*-===//

#ifndef TCC_COMPILER_TRANSFORMS_LOCATIONS_H
#define TCC_COMPILER_TRANSFORMS_LOCATIONS_H

#include "mlir/IR/Location.h"

#include <string>

namespace mlir::tcc {

/// The model nodes a location names (the importers' NameLocs: "node (Op)"),
/// the first `shown` of them joined by ", " and then "+N more"; empty when
/// it names none. Names the memory report's writers and the profile's
/// kernels.
std::string describeNodes(Location loc, size_t shown = 3);

} // namespace mlir::tcc

#endif // TCC_COMPILER_TRANSFORMS_LOCATIONS_H
