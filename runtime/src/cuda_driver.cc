// cuda_driver.cc - loading libcuda.so.1 and cuBLAS at run time.
#include "cuda_driver.h"
#include "status.h"

#include <cstdlib>
#include <dlfcn.h>
#include <initializer_list>
#include <utility>

namespace {
template <typename T> bool load(void *library, const char *symbol, T *out) {
  *out = reinterpret_cast<T>(dlsym(library, symbol));
  return *out != nullptr;
}
} // namespace

tcc::CudaDriver::~CudaDriver() {
  if (library)
    dlclose(library);
}

std::string tcc::CudaDriver::error(CUresult r) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(r, &name);
  if (cuGetErrorString)
    cuGetErrorString(r, &text);
  // The toolkit's stub library answers every call with 34 and names no
  // error.
  if (!name && r == 34)
    name = "CUDA_ERROR_STUB_LIBRARY (the CUDA toolkit's stub, not a driver)";
  return std::string(name ? name : "CUDA error " + std::to_string(r)) +
         (text ? std::string(": ") + text : "");
}

tcc_status_t tcc::openCudaDriver(CudaDriver &cu) {
  const char *path = std::getenv("TCC_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  cu.library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!cu.library)
    return makeStatus(TCC_STATUS_NOT_FOUND,
                      "CUDA is not available: cannot load the driver library "
                      "%s (%s); is an NVIDIA driver installed?",
                      path, dlerror());
#define TCC_LOAD(fn)                                                           \
  if (!load(cu.library, #fn, &cu.fn))                                          \
    return makeStatus(TCC_STATUS_NOT_FOUND,                                    \
                      "CUDA is not available: %s does not export %s", path,    \
                      #fn);
  TCC_LOAD(cuInit)
  TCC_LOAD(cuDeviceGetCount)
  TCC_LOAD(cuDeviceGet)
  TCC_LOAD(cuDevicePrimaryCtxRetain)
  TCC_LOAD(cuDevicePrimaryCtxRelease_v2)
  TCC_LOAD(cuCtxPushCurrent_v2)
  TCC_LOAD(cuCtxPopCurrent_v2)
  TCC_LOAD(cuMemAlloc_v2)
  TCC_LOAD(cuMemFree_v2)
  TCC_LOAD(cuMemcpyHtoDAsync_v2)
  TCC_LOAD(cuMemcpyDtoHAsync_v2)
  TCC_LOAD(cuMemcpyDtoDAsync_v2)
  TCC_LOAD(cuStreamCreate)
  TCC_LOAD(cuStreamSynchronize)
  TCC_LOAD(cuStreamDestroy_v2)
  TCC_LOAD(cuModuleLoadData)
  TCC_LOAD(cuModuleUnload)
  TCC_LOAD(cuModuleGetFunction)
  TCC_LOAD(cuLaunchKernel)
  TCC_LOAD(cuEventCreate)
  TCC_LOAD(cuEventRecord)
  TCC_LOAD(cuEventQuery)
  TCC_LOAD(cuEventSynchronize)
  TCC_LOAD(cuEventDestroy_v2)
  TCC_LOAD(cuGetErrorName)
  TCC_LOAD(cuGetErrorString)
#undef TCC_LOAD
  for (auto [symbol, slot] :
       std::initializer_list<std::pair<const char *, void **>>{
           {"cuStreamBeginCapture_v2",
            reinterpret_cast<void **>(&cu.cuStreamBeginCapture_v2)},
           {"cuStreamEndCapture",
            reinterpret_cast<void **>(&cu.cuStreamEndCapture)},
           {"cuGraphInstantiateWithFlags",
            reinterpret_cast<void **>(&cu.cuGraphInstantiateWithFlags)},
           {"cuGraphLaunch", reinterpret_cast<void **>(&cu.cuGraphLaunch)},
           {"cuGraphExecDestroy",
            reinterpret_cast<void **>(&cu.cuGraphExecDestroy)},
           {"cuGraphDestroy", reinterpret_cast<void **>(&cu.cuGraphDestroy)},
           {"cuMemHostAlloc", reinterpret_cast<void **>(&cu.cuMemHostAlloc)},
           {"cuMemFreeHost", reinterpret_cast<void **>(&cu.cuMemFreeHost)}})
    *slot = dlsym(cu.library, symbol);
  // cuInit fails when there is no device, or only the toolkit's stub
  // library: CUDA is unavailable either way.
  if (CUresult r = cu.cuInit(0))
    return makeStatus(TCC_STATUS_NOT_FOUND,
                      "CUDA is not available: cuInit failed with %s",
                      cu.error(r).c_str());
  return nullptr;
}

tcc::Cublas::~Cublas() {
  if (library)
    dlclose(library);
}

tcc_status_t tcc::openCublas(Cublas &b) {
  const char *env = std::getenv("TCC_CUBLAS");
  const char *candidates[] = {env && *env ? env : "libcublas.so.13",
                              "libcublas.so.12", "libcublas.so"};
  std::string tried;
  for (const char *path : candidates) {
    if ((b.library = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
      break;
    tried += std::string(tried.empty() ? "" : ", ") + path;
  }
  if (!b.library)
    return makeStatus(TCC_STATUS_NOT_FOUND,
                      "cuBLAS is not available: cannot load %s (%s)",
                      tried.c_str(), dlerror());
#define TCC_LOAD(fn)                                                           \
  if (!load(b.library, #fn, &b.fn))                                            \
    return makeStatus(TCC_STATUS_NOT_FOUND,                                    \
                      "cuBLAS is not available: it does not export %s", #fn);
  TCC_LOAD(cublasCreate_v2)
  TCC_LOAD(cublasDestroy_v2)
  TCC_LOAD(cublasSetStream_v2)
  TCC_LOAD(cublasSgemmStridedBatched)
#undef TCC_LOAD
  return nullptr;
}
