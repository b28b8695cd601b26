// model.h - the model object, shared by the loader and contexts.
#ifndef TCC_RUNTIME_SRC_MODEL_H
#define TCC_RUNTIME_SRC_MODEL_H

#include "tcc/runtime.h"

#include <atomic>
#include <string>
#include <vector>

struct tcc_model_t {
  // One reference for the tcc_model_t handle, one per context: the artifact
  // must stay mapped while any context may call into it.
  std::atomic<int> refs{1};
  void *library = nullptr; // dlopen handle; NULL for a wrapped descriptor
  const tcc_artifact_desc_t *desc = nullptr;
  std::string origin; // the path, or a name for a linked artifact, for errors
};

namespace tcc {
void retainModel(tcc_model_t *model);
void releaseModel(tcc_model_t *model);

/// A tensor's type as a run gives it.
struct ShapeRef {
  int32_t dtype;
  int32_t rank;
  const int64_t *shape;
};
/// The sizes of the model's symbols that inputs of these shapes give
/// (values: num_symbols entries); an error naming the input, dimension and
/// symbol for a rank or fixed size that differs, a symbol given two sizes,
/// or a size outside its bounds.
tcc_status_t bindSymbols(const tcc_model_t *model,
                         const std::vector<ShapeRef> &inputs, int64_t *values);
/// Whether dimension `k` of `d` is sized by a symbol the run computes
/// (TCC_SYMBOL_COMPUTED); with k = -1, whether any of its dimensions is.
bool sizedByRun(const tcc_artifact_desc_t &desc, const tcc_tensor_desc_t &d,
                int32_t k = -1);
/// `d`'s shape with its symbols' sizes.
std::vector<int64_t> concreteShape(const tcc_tensor_desc_t &d,
                                   const int64_t *values);
/// "float32[batchx4]": a described tensor's type, symbols by name.
std::string describeDesc(const tcc_artifact_desc_t &desc,
                         const tcc_tensor_desc_t &d);
} // namespace tcc

#endif // TCC_RUNTIME_SRC_MODEL_H
