//===- Locations.cpp - model nodes named by op locations ------------------===//

#include "compiler/Transforms/Locations.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

std::string mlir::tcc::describeNodes(Location loc, size_t shown) {
  llvm::SmallVector<std::string> names;
  loc->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l)) {
      std::string s = name.getName().str();
      if (!llvm::is_contained(names, s))
        names.push_back(s);
    }
    return WalkResult::advance();
  });
  std::string what;
  for (size_t i = 0; i < std::min(names.size(), shown); ++i)
    what += (i ? ", " : "") + names[i];
  if (names.size() > shown)
    what += ", +" + std::to_string(names.size() - shown) + " more";
  return what;
}
