// cuda_backend.cc - the device backend of CUDA device memory, through the
// driver API of libcuda.so.1 loaded at run time, so that libtccrt needs no
// CUDA to build or to run on machines without a GPU.
#include "caching_allocator.h"
#include "status.h"

#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <memory>
#include <string>

namespace {

// The few driver API types and values used here (cuda.h).
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUdeviceptr = unsigned long long;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease_v2)(CUdevice);
  CUresult (*cuCtxPushCurrent_v2)(CUcontext);
  CUresult (*cuCtxPopCurrent_v2)(CUcontext *);
  CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventQuery)(CUevent);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventDestroy_v2)(CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
};

struct CudaBackend {
  void *library = nullptr;
  Driver cu{};
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string name;

  ~CudaBackend() {
    if (context)
      cu.cuDevicePrimaryCtxRelease_v2(device);
    if (library)
      dlclose(library);
  }

  std::string error(CUresult r) const {
    const char *name = nullptr, *text = nullptr;
    if (cu.cuGetErrorName)
      cu.cuGetErrorName(r, &name);
    if (cu.cuGetErrorString)
      cu.cuGetErrorString(r, &text);
    return std::string(name ? name : "CUDA error " + std::to_string(r)) +
           (text ? std::string(": ") + text : "");
  }

  /// Runs `call` with the device's primary context current on this thread.
  template <typename Fn> CUresult inContext(Fn &&call) const {
    if (CUresult r = cu.cuCtxPushCurrent_v2(context))
      return r;
    CUresult r = call();
    CUcontext popped;
    cu.cuCtxPopCurrent_v2(&popped);
    return r;
  }
};

CudaBackend *self(void *p) { return static_cast<CudaBackend *>(p); }
CUstream stream(tcc_stream_t s) {
  return reinterpret_cast<CUstream>(static_cast<uintptr_t>(s));
}

tcc_status_t cudaAllocate(void *p, uint64_t bytes, tcc_stream_t,
                          void **outPtr) {
  CudaBackend *b = self(p);
  CUdeviceptr ptr = 0;
  CUresult r = b->inContext([&] { return b->cu.cuMemAlloc_v2(&ptr, bytes); });
  if (r)
    return tcc::makeStatus(
        r == CUDA_ERROR_OUT_OF_MEMORY ? TCC_STATUS_RESOURCE_EXHAUSTED
                                      : TCC_STATUS_INTERNAL,
        "%s: cuMemAlloc of %llu bytes: %s", b->name.c_str(),
        static_cast<unsigned long long>(bytes), b->error(r).c_str());
  *outPtr = reinterpret_cast<void *>(static_cast<uintptr_t>(ptr));
  return nullptr;
}

void cudaDeallocate(void *p, void *ptr, uint64_t) {
  CudaBackend *b = self(p);
  b->inContext(
      [&] { return b->cu.cuMemFree_v2(reinterpret_cast<uintptr_t>(ptr)); });
}

tcc_status_t cudaRecordEvent(void *p, tcc_stream_t s, void **outEvent) {
  CudaBackend *b = self(p);
  CUevent event = nullptr;
  CUresult r = b->inContext([&] {
    CUresult r = b->cu.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING);
    if (!r && (r = b->cu.cuEventRecord(event, stream(s))))
      b->cu.cuEventDestroy_v2(event);
    return r;
  });
  if (r)
    return tcc::makeStatus(TCC_STATUS_INTERNAL, "%s: cuEventRecord: %s",
                           b->name.c_str(), b->error(r).c_str());
  *outEvent = event;
  return nullptr;
}

// An error other than "not ready" will not go away by waiting: the event
// counts as complete.
int32_t cudaQueryEvent(void *p, void *event) {
  constexpr CUresult kNotReady = 600;
  CudaBackend *b = self(p);
  return b->inContext([&] {
    return b->cu.cuEventQuery(static_cast<CUevent>(event));
  }) != kNotReady;
}

void cudaSynchronizeEvent(void *p, void *event) {
  CudaBackend *b = self(p);
  b->inContext(
      [&] { return b->cu.cuEventSynchronize(static_cast<CUevent>(event)); });
}

void cudaDestroyEvent(void *p, void *event) {
  CudaBackend *b = self(p);
  b->inContext(
      [&] { return b->cu.cuEventDestroy_v2(static_cast<CUevent>(event)); });
}

void cudaDestroy(void *p) { delete self(p); }

template <typename T> bool load(void *library, const char *symbol, T *out) {
  *out = reinterpret_cast<T>(dlsym(library, symbol));
  return *out != nullptr;
}

} // namespace

tcc_status_t tcc::createCudaBackend(int32_t device, tcc_device_backend_t *out) {
  if (device < 0)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "CUDA device %d: the index must be >= 0", device);
  const char *path = std::getenv("TCC_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  auto b = std::make_unique<CudaBackend>();
  b->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!b->library)
    return makeStatus(TCC_STATUS_NOT_FOUND,
                      "CUDA is not available: cannot load the driver library "
                      "%s (%s); is an NVIDIA driver installed?",
                      path, dlerror());
  Driver &cu = b->cu;
#define TCC_LOAD(fn)                                                           \
  if (!load(b->library, #fn, &cu.fn))                                          \
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
  TCC_LOAD(cuEventCreate)
  TCC_LOAD(cuEventRecord)
  TCC_LOAD(cuEventQuery)
  TCC_LOAD(cuEventSynchronize)
  TCC_LOAD(cuEventDestroy_v2)
  TCC_LOAD(cuGetErrorName)
  TCC_LOAD(cuGetErrorString)
#undef TCC_LOAD

  // cuInit fails when there is no device, or only the toolkit's stub
  // library: CUDA is unavailable either way.
  if (CUresult r = cu.cuInit(0))
    return makeStatus(TCC_STATUS_NOT_FOUND,
                      "CUDA is not available: cuInit failed with %s",
                      b->error(r).c_str());
  int count = 0;
  if (CUresult r = cu.cuDeviceGetCount(&count))
    return makeStatus(TCC_STATUS_INTERNAL, "cuDeviceGetCount: %s",
                      b->error(r).c_str());
  if (device >= count)
    return makeStatus(TCC_STATUS_NOT_FOUND,
                      "CUDA device %d does not exist: there %s %d", device,
                      count == 1 ? "is" : "are", count);
  if (CUresult r = cu.cuDeviceGet(&b->device, device))
    return makeStatus(TCC_STATUS_INTERNAL, "cuDeviceGet(%d): %s", device,
                      b->error(r).c_str());
  if (CUresult r = cu.cuDevicePrimaryCtxRetain(&b->context, b->device))
    return makeStatus(TCC_STATUS_INTERNAL, "cuDevicePrimaryCtxRetain(%d): %s",
                      device, b->error(r).c_str());
  b->name = "cuda:" + std::to_string(device);

  *out = tcc_device_backend_t{};
  out->name = b->name.c_str();
  out->allocate = cudaAllocate;
  out->deallocate = cudaDeallocate;
  out->record_event = cudaRecordEvent;
  out->query_event = cudaQueryEvent;
  out->synchronize_event = cudaSynchronizeEvent;
  out->destroy_event = cudaDestroyEvent;
  out->destroy = cudaDestroy;
  out->self = b.release();
  return nullptr;
}
