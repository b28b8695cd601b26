/* tcc/allocator.h - the caching allocator of libtccrt and the device-backend
 * interface it allocates through.
 *
 * A tcc_allocator_t hands out blocks carved from large segments that it
 * obtains from a device backend (host memory, CUDA device memory, or one the
 * caller writes) and keeps freed blocks for reuse instead of giving them
 * back, as PyTorch's CUDA caching allocator does:
 *
 * - Requests are rounded up to a multiple of 512 bytes. Blocks of at most
 *   1 MiB come from the small pool, whose segments are 2 MiB; larger blocks
 *   from the large pool, whose segments are 20 MiB for requests under
 *   10 MiB and the request rounded up to 2 MiB otherwise.
 * - A request takes the smallest cached block of its pool and stream that
 *   fits and splits off the rest (small pool: when 512 bytes or more remain;
 *   large pool: when more than 1 MiB remains). A freed block merges with
 *   free neighbours of its segment.
 * - Streams are opaque ids (0 is the default). A block is reused only by
 *   requests on the stream it was allocated on. A block that was used on
 *   other streams too (tcc_allocator_record_stream) is reused only once the
 *   work those streams had queued when it was freed is done.
 * - When a request would exceed the memory limit, or the device is out of
 *   memory, the allocator returns every cached segment it can to the device
 *   and tries again; if that fails too, the error (RESOURCE_EXHAUSTED) gives
 *   the requested, allocated and reserved bytes and the limit.
 *
 * docs/runtime.md describes it in prose.
 *
 * Thread-safety: every function may be called from any thread at any time.
 * The allocator's lock is never held while it calls its backend.
 */
#ifndef TCC_ALLOCATOR_H
#define TCC_ALLOCATOR_H

#include "tcc/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An opaque stream id: a CUstream for CUDA, any value for host memory. */
typedef uint64_t tcc_stream_t;

/* Bytes every request is rounded up to a multiple of. */
#define TCC_ALLOCATOR_ROUNDING 512u

/*===------------------------------------------------------------------===*
 * Device backends
 *===------------------------------------------------------------------===*/

/* The backend's memory can be read and written by the host (tensors may be
 * made from it). */
#define TCC_DEVICE_BACKEND_HOST_ACCESSIBLE 1u

/* Where an allocator gets memory from. The allocator calls these functions
 * without holding its lock, possibly from several threads at once: they
 * must be thread-safe. The struct is copied by tcc_allocator_create;
 * `self` must stay valid until `destroy` is called. */
typedef struct tcc_device_backend_t {
  const char *name; /* for messages and summaries, e.g. "host", "cuda:0" */
  uint32_t flags;   /* TCC_DEVICE_BACKEND_* */
  void *self;
  /* Required. `bytes` of memory for use on `stream`, aligned to at least
   * 64 bytes (blocks start at multiples of TCC_ALLOCATOR_ROUNDING bytes
   * into it, so they share its alignment up to that). Out of memory is
   * RESOURCE_EXHAUSTED (the allocator then frees its cache and retries);
   * any other error is passed on to the caller. */
  tcc_status_t (*allocate)(void *self, uint64_t bytes, tcc_stream_t stream,
                           void **out_ptr);
  /* Required. Returns memory from `allocate`, with its size. */
  void (*deallocate)(void *self, void *ptr, uint64_t bytes);
  /* Optional, all four or none: events mark the work queued on a stream so
   * far. Without them the device is taken to be synchronous with the host
   * (memory is free for any stream as soon as it is freed). */
  tcc_status_t (*record_event)(void *self, tcc_stream_t stream,
                               void **out_event);
  /* Non-zero once the work the event marks is done. */
  int32_t (*query_event)(void *self, void *event);
  void (*synchronize_event)(void *self, void *event);
  void (*destroy_event)(void *self, void *event);
  /* Optional. Called once, when the allocator is destroyed, after every
   * segment has been deallocated. */
  void (*destroy)(void *self);
} tcc_device_backend_t;

/*===------------------------------------------------------------------===*
 * Allocators
 *===------------------------------------------------------------------===*/

/* Nothing is cached: every request is a device allocation of its rounded
 * size and every free a device deallocation, for debugging and comparison
 * (PyTorch's PYTORCH_NO_CUDA_MEMORY_CACHING). */
#define TCC_ALLOCATOR_NO_CACHE 1u

typedef struct tcc_allocator_options_t {
  /* The most bytes the allocator may hold from its device at once (cached
   * or in use); 0: no limit. */
  uint64_t memory_limit;
  uint32_t flags; /* TCC_ALLOCATOR_* */
} tcc_allocator_options_t;

/* tcc_allocator_t is declared in runtime.h. */

/* A caching allocator over `backend`. `options` may be NULL. On error the
 * backend's destroy is not called. */
TCC_API tcc_status_t tcc_allocator_create(
    const tcc_device_backend_t *backend, const tcc_allocator_options_t *options,
    tcc_allocator_t **out_allocator);
/* A caching allocator of host memory (aligned_alloc). */
TCC_API tcc_status_t tcc_allocator_create_host(
    const tcc_allocator_options_t *options, tcc_allocator_t **out_allocator);
/* A caching allocator of the memory of CUDA device `device`, through the
 * driver API of libcuda.so.1 (dlopen'ed; the TCC_CUDA_DRIVER environment
 * variable names another file). Without the driver library, or without
 * such a device, NOT_FOUND with the reason; a driver error is INTERNAL. */
TCC_API tcc_status_t tcc_allocator_create_cuda(
    int32_t device, const tcc_allocator_options_t *options,
    tcc_allocator_t **out_allocator);

/* The process's caching allocator of CUDA device `device` (0..15), made on
 * first use and never destroyed: CUDA artifacts' contexts take their
 * weights, workspace, inputs and outputs from it (its statistics are what
 * torch.cuda.memory_stats would show). Errors as tcc_allocator_create_cuda;
 * a failed call makes nothing, so a later one tries again. */
TCC_API tcc_status_t
tcc_allocator_cuda_default(int32_t device, tcc_allocator_t **out_allocator);

/* The process's host allocator, made on first use and never destroyed:
 * tensors and contexts made without an allocator use it.
 * tcc_allocator_free leaves it alone. */
TCC_API tcc_allocator_t *tcc_allocator_default(void);

/* Allocators are reference counted: tensors and contexts made from one keep
 * it alive. Retain adds a reference; free drops one, and the last returns
 * every segment to the backend and destroys the backend. Blocks still
 * allocated then are returned too (and must no longer be used). */
TCC_API void tcc_allocator_retain(tcc_allocator_t *allocator);
TCC_API void tcc_allocator_free(tcc_allocator_t *allocator);

/* The backend's name, e.g. "host". */
TCC_API const char *tcc_allocator_name(const tcc_allocator_t *allocator);
/* Whether tensors can be made from it (TCC_DEVICE_BACKEND_HOST_ACCESSIBLE). */
TCC_API int32_t tcc_allocator_host_accessible(const tcc_allocator_t *allocator);

/* At least `bytes` (0 counts as 1) for use on `stream`, with unspecified
 * contents, aligned to TCC_ALLOCATOR_ROUNDING bytes or the backend's
 * alignment if that is less (host memory: 512 bytes). Out of memory,
 * after freeing the cache and retrying, is RESOURCE_EXHAUSTED with the
 * numbers. */
TCC_API tcc_status_t tcc_allocator_allocate(tcc_allocator_t *allocator,
                                            uint64_t bytes, tcc_stream_t stream,
                                            void **out_ptr);
/* Returns a block to the cache. NULL is a no-op; a pointer that this
 * allocator did not hand out, or that was freed already, is
 * INVALID_ARGUMENT. */
TCC_API tcc_status_t tcc_allocator_deallocate(tcc_allocator_t *allocator,
                                              void *ptr);
/* Notes that the block at `ptr` is used on `stream` as well as on the one
 * it was allocated on: when freed, it is reused only after the work queued
 * on `stream` by then is done. */
TCC_API tcc_status_t tcc_allocator_record_stream(tcc_allocator_t *allocator,
                                                 void *ptr,
                                                 tcc_stream_t stream);

/* Returns every cached segment that holds no allocated block to the device
 * (PyTorch's empty_cache), after waiting for the streams of blocks freed
 * with pending work. */
TCC_API void tcc_allocator_trim(tcc_allocator_t *allocator);

/* 0: no limit. A limit below what is reserved now takes effect as memory is
 * freed and trimmed; nothing allocated is taken back. */
TCC_API void tcc_allocator_set_memory_limit(tcc_allocator_t *allocator,
                                            uint64_t bytes);
TCC_API uint64_t tcc_allocator_memory_limit(const tcc_allocator_t *allocator);

/*===------------------------------------------------------------------===*
 * Statistics
 *===------------------------------------------------------------------===*/

/* One quantity over the allocator's life: its value now, its peak (since
 * creation or tcc_allocator_reset_peak), and the totals ever added to it
 * and taken from it. */
typedef struct tcc_allocator_stat_t {
  uint64_t current;
  uint64_t peak;
  uint64_t allocated;
  uint64_t freed;
} tcc_allocator_stat_t;

/* Indices of the per-pool arrays below. */
typedef enum tcc_allocator_pool_e {
  TCC_POOL_ALL = 0,
  TCC_POOL_SMALL = 1, /* blocks of at most 1 MiB */
  TCC_POOL_LARGE = 2,
  TCC_POOL_COUNT = 3,
} tcc_allocator_pool_t;

typedef struct tcc_allocator_stats_t {
  /* Bytes of blocks handed out and not yet freed (rounded sizes). */
  tcc_allocator_stat_t allocated_bytes[TCC_POOL_COUNT];
  /* Bytes the callers asked for, of those blocks. */
  tcc_allocator_stat_t requested_bytes[TCC_POOL_COUNT];
  /* Bytes held from the device: allocated, cached, or awaiting streams. */
  tcc_allocator_stat_t reserved_bytes[TCC_POOL_COUNT];
  /* Cached bytes in segments that are partly allocated, which trim cannot
   * return. */
  tcc_allocator_stat_t inactive_split_bytes[TCC_POOL_COUNT];
  /* Blocks handed out and not yet freed. */
  tcc_allocator_stat_t active_blocks[TCC_POOL_COUNT];
  /* Device allocations held. */
  tcc_allocator_stat_t segments[TCC_POOL_COUNT];

  uint64_t num_allocs;        /* successful tcc_allocator_allocate calls */
  uint64_t num_frees;         /* successful tcc_allocator_deallocate calls */
  uint64_t num_cache_hits;    /* allocations served from the cache */
  uint64_t num_device_allocs; /* segments obtained from the backend */
  uint64_t num_device_frees;  /* segments returned to the backend */
  uint64_t num_alloc_retries; /* times the cache was freed to fit a request */
  uint64_t num_ooms;          /* requests refused for lack of memory */
  uint64_t cached_bytes;      /* reserved and free for reuse now */
  uint64_t largest_cached_block;
  uint64_t memory_limit; /* 0: none */
  /* External fragmentation of the cache: 1 - largest_cached_block /
   * cached_bytes (0 when nothing is cached). */
  double fragmentation;
} tcc_allocator_stats_t;

TCC_API void tcc_allocator_stats(tcc_allocator_t *allocator,
                                 tcc_allocator_stats_t *out_stats);
/* Sets every peak to its current value. */
TCC_API void tcc_allocator_reset_peak(tcc_allocator_t *allocator);

/* A table of the statistics, as PyTorch's memory_summary prints it, into
 * `buffer` (NUL-terminated, cut to `capacity`; `buffer` may be NULL when
 * `capacity` is 0). Returns the length of the whole text, so that a caller
 * can size its buffer as with snprintf. */
TCC_API size_t tcc_allocator_summary(tcc_allocator_t *allocator, char *buffer,
                                     size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* TCC_ALLOCATOR_H */
