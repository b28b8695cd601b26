// cuda_backend.cc - the device backend of CUDA device memory, through the
// driver API of libcuda.so.1 loaded at run time, so that libtccrt needs no
// CUDA to build or to run on machines without a GPU.
#include "caching_allocator.h"
#include "cuda_driver.h"
#include "status.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace {
using namespace tcc;

struct CudaBackend {
  CudaDriver cu;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string name;

  ~CudaBackend() {
    if (context)
      cu.cuDevicePrimaryCtxRelease_v2(device);
  }

  std::string error(CUresult r) const { return cu.error(r); }

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

} // namespace

tcc_status_t tcc::createCudaBackend(int32_t device, tcc_device_backend_t *out) {
  if (device < 0)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "CUDA device %d: the index must be >= 0", device);
  auto b = std::make_unique<CudaBackend>();
  CudaDriver &cu = b->cu;
  if (tcc_status_t s = openCudaDriver(cu))
    return s;
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
