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
#define TCC_ABI_VERSION 2u

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
 * wherever the symbol occurs, within [min, max]. */
typedef struct tcc_symbol_desc_t {
  const char *name;
  int64_t min;
  int64_t max;
} tcc_symbol_desc_t;

typedef void (*tcc_parallel_fn_t)(void *ctx, int64_t begin, int64_t end);

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
} tcc_host_api_t;

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
   * NULL when it has none. */
  const int64_t *symbols;
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
   * missing or outside its bounds. Reentrant: concurrent calls are safe as
   * long as each has its own outputs and workspace. */
  int32_t (*run)(const tcc_run_args_t *args);
  uint32_t num_symbols;
  const tcc_symbol_desc_t *symbols;
} tcc_artifact_desc_t;

typedef const tcc_artifact_desc_t *(*tcc_artifact_get_fn_t)(void);

#ifdef __cplusplus
}
#endif

#endif /* TCC_ABI_H */
