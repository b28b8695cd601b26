/* fake_artifact.c - a hand-written stand-in for a compiled tcc artifact, so
 * that the runtime's tests need no compiler: sum = a + b over f32[2x3].
 *
 * Built several times: FAKE_ABI_VERSION makes an artifact from another ABI,
 * FAKE_RUN_RESULT one whose run fails, FAKE_ROWS one over f32[ROWSx3],
 * FAKE_WEIGHT_FLOATS one with that many read-only floats of "weights"
 * (fake_weights: 1, then zeros, then 2), which its run reads. */
#include "tcc/abi.h"

#include <stddef.h>

#ifndef FAKE_ABI_VERSION
#define FAKE_ABI_VERSION TCC_ABI_VERSION
#endif
#ifndef FAKE_RUN_RESULT
#define FAKE_RUN_RESULT 0
#endif
#ifndef FAKE_ROWS
#define FAKE_ROWS 2
#endif

enum { kElements = FAKE_ROWS * 3, kWorkspaceAlign = 128 };

static const int64_t shape[2] = {FAKE_ROWS, 3};

#ifdef FAKE_WEIGHT_FLOATS
const float fake_weights[FAKE_WEIGHT_FLOATS] = {1.0f, [FAKE_WEIGHT_FLOATS - 1] =
                                                          2.0f};
/* 0 while the weights' first and last floats are as written (read through
 * volatile, so that the compiler does not fold them). */
static float weights_error(void) {
  const volatile float *w = fake_weights;
  return (w[0] - 1.0f) + (w[FAKE_WEIGHT_FLOATS - 1] - 2.0f);
}
#else
static float weights_error(void) { return 0.0f; }
#endif
static const tcc_tensor_desc_t inputs[2] = {
    {"a", TCC_DTYPE_F32, 2, shape},
    {"b", TCC_DTYPE_F32, 2, shape},
};
static const tcc_tensor_desc_t outputs[1] = {{"sum", TCC_DTYPE_F32, 2, shape}};

typedef struct add_ctx_t {
  const float *a, *b;
  float *scratch, *sum;
} add_ctx_t;

/* Goes through the workspace so that two runs sharing one would corrupt
 * each other's results. */
static void add_range(void *opaque, int64_t begin, int64_t end) {
  add_ctx_t *ctx = (add_ctx_t *)opaque;
  const float error = weights_error();
  for (int64_t i = begin; i < end; ++i) {
    ctx->scratch[i] = ctx->a[i] + ctx->b[i] + error;
    ctx->sum[i] = ctx->scratch[i];
  }
}

static int is_aligned(const void *p, size_t alignment) {
  return (size_t)p % alignment == 0;
}

/* Distinct failure codes tell a test which promise of the ABI was broken. */
static int32_t run(const tcc_run_args_t *args) {
  if (FAKE_RUN_RESULT)
    return FAKE_RUN_RESULT;
  if (!is_aligned(args->inputs[0], 64) || !is_aligned(args->inputs[1], 64) ||
      !is_aligned(args->outputs[0], 64))
    return 100;
  if (!args->workspace || !is_aligned(args->workspace, kWorkspaceAlign))
    return 101;
  add_ctx_t ctx = {(const float *)args->inputs[0],
                   (const float *)args->inputs[1], (float *)args->workspace,
                   (float *)args->outputs[0]};
  if (args->host && args->host->parallel_for)
    args->host->parallel_for(args->host->self, kElements, 1, add_range, &ctx);
  else
    add_range(&ctx, 0, kElements);
  return 0;
}

static const tcc_artifact_desc_t desc = {
    .abi_version = FAKE_ABI_VERSION,
    .tcc_version = "0.0.0-fake",
    .target = "x86_64-fake",
    .model_name = "fake_add",
    .num_inputs = 2,
    .num_outputs = 1,
    .inputs = inputs,
    .outputs = outputs,
    .workspace_bytes = kElements * sizeof(float),
    .workspace_align = kWorkspaceAlign,
    .run = run,
};

const tcc_artifact_desc_t *tcc_artifact_get(void) { return &desc; }
