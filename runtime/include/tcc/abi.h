/* tcc/abi.h - the binary interface between a compiled tcc artifact and
 * whoever runs it (libtccrt, or a program linking the artifact directly).
 *
 * An artifact (.so, .o or executable) exports one function,
 *   const tcc_artifact_desc_t *<prefix>_artifact_get(void);
 * whose result describes the model and points at its entry function. A .so
 * always uses the prefix "tcc", so a loader can dlsym("tcc_artifact_get").
 *
 * This header is plain C99 and depends on nothing; docs/abi.md is its
 * narrative form. Everything here is read-only after load and may be used
 * from any thread.
 */
#ifndef TCC_ABI_H
#define TCC_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change to the structs below. A loader refuses
 * an artifact whose abi_version differs from the one it was built with. */
#define TCC_ABI_VERSION 4u

/* Element types, numbered as ONNX's TensorProto.DataType. */
typedef enum tcc_dtype_e {
  TCC_DTYPE_INVALID = 0,
  TCC_DTYPE_F32 = 1,
  TCC_DTYPE_U8 = 2,
  TCC_DTYPE_I8 = 3,
  TCC_DTYPE_U16 = 4,
  TCC_DTYPE_I16 = 5,
  TCC_DTYPE_I32 = 6,
  TCC_DTYPE_I64 = 7,
  TCC_DTYPE_BOOL = 9, /* one byte per element, 0 or 1 */
  TCC_DTYPE_F16 = 10,
  TCC_DTYPE_F64 = 11,
  TCC_DTYPE_U32 = 12,
  TCC_DTYPE_U64 = 13,
  TCC_DTYPE_BF16 = 16,
} tcc_dtype_t;

/* One input or output: dense, row-major, no padding between elements. */
typedef struct tcc_tensor_desc_t {
  const char *name;
  int32_t dtype; /* a tcc_dtype_t */
  int32_t rank;
  /* rank entries: a size >= 0, or -1 where a symbol sizes the dimension */
  const int64_t *shape;
  /* NULL when every dimension is fixed; else rank entries: the index of the
   * dimension's symbol in the artifact's `symbols`, or -1 for a fixed one */
  const int32_t *symbols;
} tcc_tensor_desc_t;

/* A symbolic dimension (e.g. the batch): each run gives its size, the same
 * wherever the symbol occurs, within [min, max]. A computed one
 * (TCC_SYMBOL_COMPUTED: a size that depends on the data, e.g. NonZero's
 * count) sizes outputs only: the caller passes buffers for its `max`, and
 * the run writes its size into tcc_run_args_t.symbols, the outputs holding
 * their tensors at that size. */
#define TCC_SYMBOL_COMPUTED 1
typedef struct tcc_symbol_desc_t {
  const char *name;
  int64_t min;
  int64_t max;
  int32_t flags; /* TCC_SYMBOL_COMPUTED, or 0 */
} tcc_symbol_desc_t;

typedef void (*tcc_parallel_fn_t)(void *ctx, int64_t begin, int64_t end);

/* The device services a CUDA artifact (tcc --target=cuda) runs on; the
 * runtime implements them over the CUDA driver and cuBLAS. All pointers
 * named device are device addresses. The calls are asynchronous on the
 * caller's one stream; each returns 0 or a nonzero code that the runtime
 * also keeps, so a run reports the first failure when it ends. */
typedef struct tcc_cuda_api_t {
  uint32_t struct_size; /* sizeof(tcc_cuda_api_t) as the caller knows it */
  void *self;
  /* The device buffer of weights_bytes that upload_weights filled. */
  void *weights;
  /* Launches kernel `kernel` (an index into the image's kernel_names) on
   * grid x block threads. slots[0..count) hold the kernel's parameters in
   * order, 8 bytes each (an address, an integer zero-extended, a float's
   * bits zero-extended): the i-th parameter is read from &slots[i]. */
  int32_t (*launch)(void *self, uint32_t kernel, uint32_t grid_x,
                    uint32_t grid_y, uint32_t grid_z, uint32_t block_x,
                    uint32_t block_y, uint32_t block_z, const uint64_t *slots,
                    uint32_t count);
  /* C = op(A) * op(B) + beta * C for `batch` column-major f32 matrices,
   * as cublasSgemmStridedBatched (alpha 1; transpose flags 0 or 1; m x n
   * results, k the inner size; lda/ldb/ldc and the batch strides in
   * elements; addresses on the device). */
  int32_t (*gemm)(void *self, int32_t trans_a, int32_t trans_b, int64_t m,
                  int64_t n, int64_t k, uint64_t a, int64_t lda,
                  int64_t stride_a, uint64_t b, int64_t ldb, int64_t stride_b,
                  uint64_t c, int64_t ldc, int64_t stride_c, int64_t batch,
                  float beta);
  /* Copies bytes from host memory to the device. */
  int32_t (*copy_h2d)(void *self, void *device_dst, const void *host_src,
                      uint64_t bytes);
} tcc_cuda_api_t;

/* Services the caller offers the generated code. Every field may be zero:
 * the artifact then runs on the calling thread alone. */
typedef struct tcc_host_api_t {
  uint32_t struct_size; /* sizeof(tcc_host_api_t) as the caller knows it */
  int32_t num_threads;
  void *self;
  /* Calls fn(ctx, b, e) over disjoint [b, e) ranges covering [0, n), each
   * at least `grain` long (but the last), and returns when all are done. */
  void (*parallel_for)(void *self, int64_t n, int64_t grain,
                       tcc_parallel_fn_t fn, void *ctx);
  /* Optional, and only read when struct_size covers it: an artifact compiled
   * with `tcc --profile` calls it on the running thread before (end = 0)
   * and after (end = 1) each kernel of a run, with the kernel's index and a
   * name (the model nodes it computes) that lives as long as the artifact
   * is loaded. */
  void (*profile)(void *self, int64_t kernel, const char *name, int32_t end);
  /* Required by CUDA artifacts, ignored by CPU ones (read only when
   * struct_size covers it): the device services. */
  const tcc_cuda_api_t *cuda;
} tcc_host_api_t;

/* What a CUDA artifact carries for the device: its kernels as PTX (which
 * the driver compiles for the GPU it runs on) and the size of the device
 * buffer its weights live in. */
typedef struct tcc_cuda_image_t {
  /* the architecture(s) it was compiled for: "sm_90", "sm_80,sm_90" */
  const char *arch;
  const char *ptx; /* NUL-terminated PTX text */
  uint64_t ptx_bytes;
  uint32_t num_kernels;
  const char *const *kernel_names; /* entry points of the PTX module */
  uint64_t weights_bytes;          /* 256-byte aligned places */
  /* Copies the weights into a device buffer of weights_bytes (through
   * host->cuda->copy_h2d); called once after loading. Returns 0, or 3 when
   * host has no CUDA services. */
  int32_t (*upload_weights)(const tcc_host_api_t *host, void *device_weights);
  /* The kernels assembled for `arch` by ptxas when the compiling machine
   * had it (NULL, 0 otherwise; for a list of architectures, a fat binary
   * of a cubin for each and the PTX): loaded instead of the PTX where the
   * GPU runs it, so the driver compiles nothing. */
  const void *cubin;
  uint64_t cubin_bytes;
} tcc_cuda_image_t;

/* Arguments of one run. Pointers are owned by the caller; each input and
 * output buffer holds exactly the described tensor and is aligned to at
 * least 64 bytes; `workspace` holds workspace_bytes aligned to
 * workspace_align (it may be NULL when workspace_bytes is 0). */
typedef struct tcc_run_args_t {
  void *const *inputs;
  void *const *outputs;
  void *workspace;
  const tcc_host_api_t *host; /* may be NULL */
  /* num_symbols sizes, in the order of the artifact's `symbols`; may be
   * NULL when it has none. The run writes the computed ones. */
  int64_t *symbols;
} tcc_run_args_t;

typedef struct tcc_artifact_desc_t {
  uint32_t abi_version; /* TCC_ABI_VERSION of the compiler that made it */
  uint32_t flags;       /* reserved, 0 */
  const char *tcc_version;
  const char *target; /* e.g. "x86_64-unknown-linux-gnu:znver4" */
  const char *model_name;
  uint32_t num_inputs;
  uint32_t num_outputs;
  const tcc_tensor_desc_t *inputs;
  const tcc_tensor_desc_t *outputs;
  uint64_t workspace_bytes;
  uint64_t workspace_align;
  /* Runs the model once. Returns 0 on success, 2 when a symbol's size is
   * missing or outside its bounds, 3 when a CUDA artifact gets no CUDA
   * services or a size the run computed is outside its symbol's bounds
   * (each computed symbol's slot then holds what was computed; the
   * outputs are not written). Reentrant: concurrent calls are safe as
   * long as each has its own outputs and workspace. */
  int32_t (*run)(const tcc_run_args_t *args);
  uint32_t num_symbols;
  const tcc_symbol_desc_t *symbols;
  /* NULL for a CPU artifact. For a CUDA one, inputs, outputs and the
   * workspace passed to run are device buffers, and run needs
   * host->cuda (it returns 3 without). */
  const tcc_cuda_image_t *cuda;
} tcc_artifact_desc_t;

typedef const tcc_artifact_desc_t *(*tcc_artifact_get_fn_t)(void);

#ifdef __cplusplus
}
#endif

#endif /* TCC_ABI_H */
