//===- TccConstants.cpp - reading and making f32 weight constants ---------===//

#include "dialects/Tcc/IR/TccConstants.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

std::optional<std::vector<float>> tcc::constantFloats(Value v) {
  ElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.getElementType().isF32())
    return std::nullopt;
  int64_t n = attr.getNumElements();
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    auto values = dense.getValues<float>();
    return std::vector<float>(values.begin(), values.end());
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != size_t(n) * sizeof(float))
      return std::nullopt;
    const float *data = reinterpret_cast<const float *>(blob->getData().data());
    return std::vector<float>(data, data + n);
  }
  return std::nullopt;
}

ElementsAttr tcc::floatBlob(RankedTensorType type, ArrayRef<float> values,
                            StringRef name) {
  return DenseResourceElementsAttr::get(
      type, name, HeapAsmResourceBlob::allocateAndCopyInferAlign(values));
}
