/* tcc/runtime.h - the C API of libtccrt: load a compiled tcc artifact, make
 * tensors, run the artifact, and read/write tensor files (.pb, .npy). It
 * includes tcc/allocator.h, the caching allocator that tensors and contexts
 * take their memory from.
 *
 * Conventions
 * - Every fallible function returns a tcc_status_t: NULL means success,
 *   anything else is an error the caller owns and frees with
 *   tcc_status_free. Results come back through `out_` parameters, which are
 *   left untouched on error.
 * - Objects are opaque and freed by their own tcc_<object>_free, which
 *   accepts NULL. Accessors (functions that return no status) given NULL
 *   return 0, NULL or "" rather than crash; a pointer to a freed object
 *   cannot be detected.
 * - Parameter structs are valid when zero-initialised.
 *
 * Thread-safety
 * - A tcc_model_t is immutable after load: any number of threads may query
 *   it and create contexts from it at once.
 * - A tcc_context_t holds the scratch memory and the thread pool of one run
 *   at a time. Use a context from one thread at a time; to run one model
 *   from several threads at once, give each thread its own context.
 *   Overlapping calls on one context are refused (FAILED_PRECONDITION).
 * - A tcc_tensor_t may be read from several threads at once; writes to it
 *   (as a run's output, or through tcc_tensor_data) need the usual care.
 * - Status, dtype and tensor-file functions are thread-safe, and so is
 *   every allocator function (see tcc/allocator.h).
 *
 * The runtime links nothing of MLIR or LLVM and needs no GPU.
 */
#ifndef TCC_RUNTIME_H
#define TCC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "tcc/abi.h"

/* libtccrt is built with hidden visibility; this marks its API. */
#define TCC_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/*===------------------------------------------------------------------===*
 * Status
 *===------------------------------------------------------------------===*/

typedef enum tcc_status_code_e {
  TCC_STATUS_OK = 0,
  TCC_STATUS_INVALID_ARGUMENT = 1,
  TCC_STATUS_NOT_FOUND = 2,
  TCC_STATUS_FAILED_PRECONDITION = 3, /* e.g. an ABI version mismatch */
  TCC_STATUS_RESOURCE_EXHAUSTED = 4,
  TCC_STATUS_INTERNAL = 5, /* e.g. the artifact's run reported failure */
  TCC_STATUS_UNIMPLEMENTED = 6,
} tcc_status_code_t;

/* NULL is success. */
typedef struct tcc_status_s *tcc_status_t;

/* TCC_STATUS_OK for NULL. */
TCC_API tcc_status_code_t tcc_status_code(tcc_status_t status);
/* "" for NULL; valid until the status is freed. */
TCC_API const char *tcc_status_message(tcc_status_t status);
/* "OK", "INVALID_ARGUMENT", ...; "UNKNOWN" for other values. */
TCC_API const char *tcc_status_code_name(tcc_status_code_t code);
TCC_API void tcc_status_free(tcc_status_t status);
/* A new status, for code outside libtccrt that reports errors through it
 * (a device backend, say). NULL for TCC_STATUS_OK; a NULL message is "". */
TCC_API tcc_status_t tcc_status_create(tcc_status_code_t code,
                                       const char *message);

/*===------------------------------------------------------------------===*
 * Dtypes (tcc_dtype_t, numbered as ONNX's TensorProto.DataType)
 *===------------------------------------------------------------------===*/

/* Bytes per element; 0 for an unknown dtype. */
TCC_API size_t tcc_dtype_size(int32_t dtype);
/* "f32", "i64", "bool", "bf16", ...; "invalid" for an unknown dtype. */
TCC_API const char *tcc_dtype_name(int32_t dtype);

/*===------------------------------------------------------------------===*
 * Tensors: dense, row-major host buffers
 *===------------------------------------------------------------------===*/

typedef struct tcc_tensor_t tcc_tensor_t;
/* A caching allocator (tcc/allocator.h). */
typedef struct tcc_allocator_t tcc_allocator_t;

/* A new zero-filled tensor whose data is 64-byte aligned, from the default
 * allocator (tcc_allocator_default). `shape` holds `rank` entries, all >= 0
 * (it may be NULL when rank is 0). */
TCC_API tcc_status_t tcc_tensor_create(int32_t dtype, int32_t rank,
                                       const int64_t *shape,
                                       tcc_tensor_t **out_tensor);
/* As tcc_tensor_create, from `allocator` (NULL: the default), which the
 * tensor keeps alive. The allocator's memory must be host accessible
 * (INVALID_ARGUMENT otherwise). */
TCC_API tcc_status_t tcc_tensor_create_in(tcc_allocator_t *allocator,
                                          int32_t dtype, int32_t rank,
                                          const int64_t *shape,
                                          tcc_tensor_t **out_tensor);
/* A tensor over caller memory, which must outlive it and is not freed with
 * it. `byte_size` must equal the size the dtype and shape describe. Any
 * alignment is accepted (tcc_context_run copies misaligned buffers). */
TCC_API tcc_status_t tcc_tensor_wrap(int32_t dtype, int32_t rank,
                                     const int64_t *shape, void *data,
                                     size_t byte_size,
                                     tcc_tensor_t **out_tensor);
TCC_API void tcc_tensor_free(tcc_tensor_t *tensor);

TCC_API int32_t tcc_tensor_dtype(const tcc_tensor_t *tensor);
TCC_API int32_t tcc_tensor_rank(const tcc_tensor_t *tensor);
/* `rank` entries; may be NULL for rank 0. */
TCC_API const int64_t *tcc_tensor_shape(const tcc_tensor_t *tensor);
TCC_API void *tcc_tensor_data(const tcc_tensor_t *tensor);
TCC_API size_t tcc_tensor_byte_size(const tcc_tensor_t *tensor);
TCC_API int64_t tcc_tensor_element_count(const tcc_tensor_t *tensor);
/* The name read from a .pb file or set with tcc_tensor_set_name; "" when
 * there is none. Saved into .pb files. */
TCC_API const char *tcc_tensor_name(const tcc_tensor_t *tensor);
TCC_API tcc_status_t tcc_tensor_set_name(tcc_tensor_t *tensor,
                                         const char *name);

/*===------------------------------------------------------------------===*
 * Tensor files
 *===------------------------------------------------------------------===*/

/* Reads an ONNX TensorProto (.pb) or NumPy (.npy) file, chosen by the
 * extension and otherwise by the "\x93NUMPY" magic. A missing file is
 * NOT_FOUND; a malformed one INVALID_ARGUMENT; string, complex, float8 and
 * externally stored tensors, Fortran-order arrays and big-endian data are
 * UNIMPLEMENTED. Never reads past the file nor allocates more than the
 * file's contents justify. */
TCC_API tcc_status_t tcc_tensor_load_file(const char *path,
                                          tcc_tensor_t **out_tensor);

/* The default cap of tcc_tensor_load_file on a file's size: 4 GiB. */
#define TCC_TENSOR_FILE_MAX_BYTES (UINT64_C(1) << 32)

typedef struct tcc_tensor_load_options_t {
  /* The largest file accepted, in bytes; 0: TCC_TENSOR_FILE_MAX_BYTES.
   * A bigger file is RESOURCE_EXHAUSTED (naming the file and the cap)
   * before anything is read or allocated. */
  uint64_t max_file_bytes;
} tcc_tensor_load_options_t;

/* tcc_tensor_load_file with options; `options` may be NULL. */
TCC_API tcc_status_t tcc_tensor_load_file_with_options(
    const char *path, const tcc_tensor_load_options_t *options,
    tcc_tensor_t **out_tensor);
/* Writes a .pb (dims, data_type, name, raw_data) or .npy (format 1.0)
 * file, by the path's extension, through a temporary file in the same
 * directory renamed into place: readers never see a partial file. bf16 has
 * no NumPy dtype and can only be saved as .pb. */
TCC_API tcc_status_t tcc_tensor_save_file(const tcc_tensor_t *tensor,
                                          const char *path);

/*===------------------------------------------------------------------===*
 * Models: a loaded artifact
 *===------------------------------------------------------------------===*/

typedef struct tcc_model_t tcc_model_t;

/* Loads an artifact .so (dlopen RTLD_NOW | RTLD_LOCAL), takes its
 * descriptor from `tcc_artifact_get` and validates it. A missing file is
 * NOT_FOUND; an abi_version other than TCC_ABI_VERSION is
 * FAILED_PRECONDITION; a malformed descriptor INVALID_ARGUMENT. */
TCC_API tcc_status_t tcc_model_load(const char *path, tcc_model_t **out_model);
/* Wraps the descriptor of an artifact linked into the program; it must stay
 * valid while the model is used. Validated as by tcc_model_load. */
TCC_API tcc_status_t tcc_model_wrap(const tcc_artifact_desc_t *desc,
                                    tcc_model_t **out_model);
/* May be called while contexts made from the model are alive: the artifact
 * stays loaded until the last of them is freed. */
TCC_API void tcc_model_free(tcc_model_t *model);

TCC_API const tcc_artifact_desc_t *tcc_model_desc(const tcc_model_t *model);
TCC_API uint32_t tcc_model_num_inputs(const tcc_model_t *model);
TCC_API uint32_t tcc_model_num_outputs(const tcc_model_t *model);
/* NULL when the index is out of range. */
TCC_API const tcc_tensor_desc_t *tcc_model_input(const tcc_model_t *model,
                                                 uint32_t index);
TCC_API const tcc_tensor_desc_t *tcc_model_output(const tcc_model_t *model,
                                                  uint32_t index);
/* The descriptor's strings; "" where the artifact gives none. */
TCC_API const char *tcc_model_name(const tcc_model_t *model);
TCC_API const char *tcc_model_target(const tcc_model_t *model);
TCC_API const char *tcc_model_version(const tcc_model_t *model);
TCC_API uint64_t tcc_model_workspace_bytes(const tcc_model_t *model);

/* Symbolic dimensions (e.g. a dynamic batch): sizes each run gives through
 * its inputs' shapes. An input or output descriptor marks such a dimension
 * with -1 in `shape` and its symbol's index in `symbols`. */
TCC_API uint32_t tcc_model_num_symbols(const tcc_model_t *model);
/* NULL when the index is out of range. */
TCC_API const tcc_symbol_desc_t *tcc_model_symbol(const tcc_model_t *model,
                                                  uint32_t index);
/* The symbols' sizes that these inputs give, into `values` (num_symbols
 * entries). INVALID_ARGUMENT, naming the input, the dimension and the
 * symbol, when an input's rank or a fixed dimension differs from the
 * model's, when inputs give one symbol two sizes, or when a size lies
 * outside the symbol's bounds. Dtypes are checked by tcc_context_run. A
 * size the run computes (TCC_SYMBOL_COMPUTED) is set to its bound, for
 * allocating outputs; tcc_context_run then gives those outputs the run's
 * size. */
TCC_API tcc_status_t tcc_model_bind_inputs(const tcc_model_t *model,
                                           const tcc_tensor_t *const *inputs,
                                           size_t num_inputs, int64_t *values);
/* Output `index`'s shape (rank entries) for the symbols' sizes `values`
 * (from tcc_model_bind_inputs; may be NULL for a model without symbols). */
TCC_API tcc_status_t tcc_model_output_shape(const tcc_model_t *model,
                                            uint32_t index,
                                            const int64_t *values,
                                            int64_t *shape);

/*===------------------------------------------------------------------===*
 * Contexts: what one run needs besides its tensors
 *===------------------------------------------------------------------===*/

typedef struct tcc_context_t tcc_context_t;

typedef struct tcc_context_options_t {
  /* Threads a run may use, the calling thread included. 0: the number of
   * online CPUs. 1: everything runs on the calling thread. */
  int32_t num_threads;
  /* Where the workspace and any aligned copies of misaligned tensors come
   * from; it must be host accessible. NULL: tcc_allocator_default(). */
  tcc_allocator_t *allocator;
} tcc_context_options_t;

/* Allocates the model's workspace from the context's allocator and starts
 * the thread pool. `options` may be NULL. The context keeps the model's
 * artifact and the allocator alive. */
TCC_API tcc_status_t tcc_context_create(tcc_model_t *model,
                                        const tcc_context_options_t *options,
                                        tcc_context_t **out_context);
/* Like tcc_context_create, but the context runs on the thread pool of
 * `threads_of` (a context of any model), which it keeps alive: contexts a
 * program runs one after another then share one set of workers instead of
 * each keeping its own spinning between runs. options->num_threads must be
 * 0 or the pool's count. A pool runs one parallel loop at a time: a context
 * running while another on the same pool is, runs its loops on the calling
 * thread alone (results are the same, not the speed). */
TCC_API tcc_status_t tcc_context_create_sharing_threads(
    tcc_model_t *model, const tcc_context_options_t *options,
    const tcc_context_t *threads_of, tcc_context_t **out_context);
TCC_API void tcc_context_free(tcc_context_t *context);
TCC_API const tcc_model_t *tcc_context_model(const tcc_context_t *context);
TCC_API int32_t tcc_context_num_threads(const tcc_context_t *context);
/* The allocator the context's memory comes from. */
TCC_API tcc_allocator_t *tcc_context_allocator(const tcc_context_t *context);
/* Sets the function (NULL: none) that artifacts compiled with
 * `tcc --profile` call before (end = 0) and after (end = 1) each kernel of
 * a run, on the thread calling tcc_context_run; `name` lives as long as the
 * model. Not to be called while the context runs. */
typedef void (*tcc_profiler_fn_t)(void *user, int64_t kernel, const char *name,
                                  int32_t end);
TCC_API void tcc_context_set_profiler(tcc_context_t *context,
                                      tcc_profiler_fn_t fn, void *user);

/* What the context's threads did in its parallel loops since a profiler
 * was last set (setting one turns this accounting on and clears it,
 * NULL turns it off: it reads the clock twice a loop). Between two
 * points of a run, a kernel of `wall` ns kept (wall - caller_wait_ns +
 * worker_busy_ns) / wall threads busy on average. The sums are the
 * pool's, so contexts sharing one (tcc_context_create_sharing_threads)
 * see each other's loops; zero under tcc_context_set_parallel_for. */
typedef struct tcc_thread_usage_t {
  int64_t worker_busy_ns; /* the workers running parts of loops */
  int64_t caller_wait_ns; /* the calling thread waiting at a loop's end
                             for the workers to finish their parts */
  int64_t loops;          /* loops split across threads */
} tcc_thread_usage_t;
TCC_API void tcc_context_thread_usage(const tcc_context_t *context,
                                      tcc_thread_usage_t *out);

/* The version of this runtime, "MAJOR.MINOR.PATCH", as the tcc that
 * built it (`tcc --version`) and its package say. */
TCC_API const char *tcc_runtime_version(void);

/* How long the pool's idle workers may spin after a run of this context
 * before they sleep: -1 (the default) keeps the pool's own time
 * (TCC_POOL_SPIN_US, else 1 ms), which suits runs that follow each other;
 * 0 puts them to sleep at once, for callers that do other work between
 * runs (a framework's own operators between compiled graphs) on the CPUs
 * the workers would spin on. Inside a run they spin as always. Not to be
 * called while the context runs. */
TCC_API void tcc_context_set_idle_spin(tcc_context_t *context, int32_t micros);

/* A host program's parallel loop: calls fn(ctx, b, e) over disjoint
 * [b, e) ranges covering [0, n), each at least `grain` long (but the
 * last), and returns when all are done (tcc_host_api_t.parallel_for). */
typedef void (*tcc_parallel_for_fn_t)(void *self, int64_t n, int64_t grain,
                                      tcc_parallel_fn_t fn, void *ctx);

/* Runs the context's parallel loops through `parallel_for` (called with
 * `self`), which spreads them over `num_threads` threads, instead of on the
 * context's own pool: a program with a thread pool of its own (an OpenMP
 * runtime, a framework's intra-op pool) then shares its CPUs with tcc
 * rather than the two pools' idle threads spinning against each other's
 * work. Kernels split their work for `num_threads`. NULL goes back to the
 * context's pool (and its thread count). INVALID_ARGUMENT for a NULL
 * context or num_threads < 1. Not to be called while the context runs. */
TCC_API tcc_status_t
tcc_context_set_parallel_for(tcc_context_t *context, int32_t num_threads,
                             tcc_parallel_for_fn_t parallel_for, void *self);

/* Runs the model once. The tensors must match the model's inputs and
 * outputs in count, dtype and shape (INVALID_ARGUMENT naming the tensor
 * otherwise) and outputs must not overlap inputs or each other. Misaligned
 * buffers are copied through aligned temporaries. An output sized by a
 * computed symbol takes any size of it within a buffer that holds its
 * bound, and after the run has the size the run computed (shape, element
 * count and byte size; the buffer is kept); a computed size outside its
 * bounds is INVALID_ARGUMENT naming it. A failure reported by the
 * artifact is INTERNAL; outputs are then unspecified. */
TCC_API tcc_status_t tcc_context_run(tcc_context_t *context,
                                     const tcc_tensor_t *const *inputs,
                                     size_t num_inputs,
                                     tcc_tensor_t *const *outputs,
                                     size_t num_outputs);

/* Runs a model without symbolic dimensions on bare buffers: inputs[i] and
 * outputs[i] hold its i-th input and output, row-major, in the dtype and
 * shape tcc_model_input / tcc_model_output give. For a caller that keeps
 * its own tensors (a framework's binding): no tensor objects to make, and
 * nothing allocated when the buffers are 64-byte aligned. A buffer may be
 * NULL only for a tensor of no elements. INVALID_ARGUMENT for a model with
 * symbolic dimensions (their sizes come from tensors: tcc_context_run),
 * wrong counts or overlapping outputs; otherwise as tcc_context_run. */
TCC_API tcc_status_t tcc_context_run_buffers(tcc_context_t *context,
                                             const void *const *inputs,
                                             size_t num_inputs,
                                             void *const *outputs,
                                             size_t num_outputs);

/* As tcc_context_run_buffers, for a CUDA artifact (tcc --target=cuda) on
 * buffers in the memory of the GPU it runs on (a framework's CUDA tensors,
 * or blocks of tcc_allocator_cuda_default): the artifact reads the inputs
 * and writes the outputs where they lie when each is 256-byte aligned and
 * no output overlaps an input or another output; otherwise they are copied
 * on the device through the context's buffers. Nothing passes through the
 * host; the inputs are not written. The caller's work that writes the
 * inputs must be complete (synchronize its stream first); the outputs are
 * complete when the call returns. INVALID_ARGUMENT for a CPU artifact. */
TCC_API tcc_status_t tcc_context_run_device(tcc_context_t *context,
                                            const void *const *inputs,
                                            size_t num_inputs,
                                            void *const *outputs,
                                            size_t num_outputs);

#ifdef __cplusplus
}
#endif

#include "tcc/allocator.h"

#endif /* TCC_RUNTIME_H */
