//===- TccConstants.cpp - reading and making f32 weight constants ---------===//

#include "dialects/Tcc/IR/TccConstants.h"

#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

#include <cstring>

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
  // Equal contents share one blob, named after a hash of them: a graph
  // compiled at several sizes (slabs of a batch, padded buckets) packs or
  // folds the same weights once per copy, and each copy must not become a
  // global of its own.
  ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>(values.data()),
                          values.size() * sizeof(float));
  std::string key =
      (name + "_" +
       llvm::utohexstr(llvm::xxh3_64bits(bytes), /*LowerCase=*/true))
          .str();
  auto &manager =
      DenseResourceElementsHandle::getManagerInterface(type.getContext());
  if (auto *entry = manager.getBlobManager().lookup(key)) {
    AsmResourceBlob *blob = entry->getBlob();
    if (blob && blob->getData().size() == bytes.size() &&
        std::memcmp(blob->getData().data(), bytes.data(), bytes.size()) == 0)
      return DenseResourceElementsAttr::get(
          type, DenseResourceElementsHandle(
                    entry, cast<BuiltinDialect>(manager.getDialect())));
  }
  return DenseResourceElementsAttr::get(
      type, key, HeapAsmResourceBlob::allocateAndCopyInferAlign(values));
}
