// cuda_device.h - running a CUDA artifact (tcc --target=cuda) on device 0:
// its PTX loaded by the driver, its weights and workspace in device memory,
// one stream, one cuBLAS handle.
#ifndef TCC_RUNTIME_CUDA_DEVICE_H
#define TCC_RUNTIME_CUDA_DEVICE_H

#include "tcc/abi.h"
#include "tcc/runtime.h"

#include <cstddef>

namespace tcc {

struct CudaExecutor;

/// Opens the GPU for `desc` (a CUDA artifact): NOT_FOUND saying why when
/// CUDA or cuBLAS is unavailable, never a crash.
tcc_status_t createCudaExecutor(const tcc_artifact_desc_t *desc,
                                const char *origin, CudaExecutor **out);
void destroyCudaExecutor(CudaExecutor *executor);

/// One run on host buffers: inputs copied to the device, the artifact's
/// launches and GEMMs queued on the stream, outputs copied back; returns
/// when they are done, with the first CUDA or cuBLAS failure if any.
tcc_status_t runCuda(CudaExecutor *executor, const tcc_artifact_desc_t *desc,
                     const char *origin, const void *const *inputs,
                     const size_t *inputBytes, void *const *outputs,
                     const size_t *outputBytes, int64_t *symbols);

/// As runCuda, on buffers in device memory: copies on the device in and
/// out of the executor's buffers.
tcc_status_t runCudaOnDevice(CudaExecutor *executor,
                             const tcc_artifact_desc_t *desc,
                             const char *origin, const void *const *inputs,
                             void *const *outputs);

} // namespace tcc

#endif // TCC_RUNTIME_CUDA_DEVICE_H
