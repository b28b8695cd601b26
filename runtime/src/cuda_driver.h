// cuda_driver.h - the CUDA driver API (libcuda.so.1) and cuBLAS, loaded at
// run time, so that libtccrt needs no CUDA to build or to run on machines
// without a GPU. Only the few declarations of cuda.h / cublas_api.h used.
#ifndef TCC_RUNTIME_CUDA_DRIVER_H
#define TCC_RUNTIME_CUDA_DRIVER_H

#include "tcc/runtime.h"

#include <cstddef>
#include <string>

namespace tcc {

using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;
constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
using CUdeviceptr = unsigned long long;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;

struct CudaDriver {
  void *library = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease_v2)(CUdevice);
  CUresult (*cuCtxPushCurrent_v2)(CUcontext);
  CUresult (*cuCtxPopCurrent_v2)(CUcontext *);
  CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuMemcpyHtoDAsync_v2)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync_v2)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync_v2)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamDestroy_v2)(CUstream);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventQuery)(CUevent);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventDestroy_v2)(CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  // CUDA graphs: optional (null where the driver lacks them).
  CUresult (*cuStreamBeginCapture_v2)(CUstream, int);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph,
                                          unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
  // Page-locked host memory: optional (copies from pageable memory where
  // the driver lacks it or refuses).
  CUresult (*cuMemHostAlloc)(void **, size_t, unsigned);
  CUresult (*cuMemFreeHost)(void *);

  /// Whether the driver offers page-locked host memory.
  bool hasPinnedMemory() const { return cuMemHostAlloc && cuMemFreeHost; }

  /// Whether the driver offers stream capture into CUDA graphs.
  bool hasGraphs() const {
    return cuStreamBeginCapture_v2 && cuStreamEndCapture &&
           cuGraphInstantiateWithFlags && cuGraphLaunch && cuGraphExecDestroy &&
           cuGraphDestroy;
  }

  CudaDriver() = default;
  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;
  ~CudaDriver();

  /// "CUDA_ERROR_X: text" for a driver result.
  std::string error(CUresult r) const;
};

/// Loads the driver ($TCC_CUDA_DRIVER, else libcuda.so.1) and runs cuInit.
/// NOT_FOUND, saying why, where CUDA is unavailable (no library, the
/// toolkit's stub, no device).
tcc_status_t openCudaDriver(CudaDriver &driver);

/// cuBLAS (cublas_api.h), loaded from $TCC_CUBLAS, else libcublas.so.13,
/// .12 or libcublas.so.
using cublasHandle_t = struct cublasContext *;
struct Cublas {
  void *library = nullptr;
  int (*cublasCreate_v2)(cublasHandle_t *);
  int (*cublasDestroy_v2)(cublasHandle_t);
  int (*cublasSetStream_v2)(cublasHandle_t, CUstream);
  int (*cublasSgemmStridedBatched)(cublasHandle_t, int, int, int, int, int,
                                   const float *, const float *, int, long long,
                                   const float *, int, long long, const float *,
                                   float *, int, long long, int);

  Cublas() = default;
  Cublas(const Cublas &) = delete;
  Cublas &operator=(const Cublas &) = delete;
  ~Cublas();
};

tcc_status_t openCublas(Cublas &cublas);

} // namespace tcc

#endif // TCC_RUNTIME_CUDA_DRIVER_H
