// model.h - the model object, shared by the loader and contexts.
#ifndef TCC_RUNTIME_SRC_MODEL_H
#define TCC_RUNTIME_SRC_MODEL_H

#include "tcc/runtime.h"

#include <atomic>
#include <string>

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
} // namespace tcc

#endif // TCC_RUNTIME_SRC_MODEL_H
