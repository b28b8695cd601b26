/* The same model through the C API, built with
 * `cc main.c $(pkg-config --cflags --libs tccrt)`. */
#include "tcc/runtime.h"

#include <stdio.h>

static int fail(tcc_status_t s) {
  printf("main.c: %s\n", tcc_status_message(s));
  tcc_status_free(s);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  tcc_model_t *model;
  tcc_status_t s = tcc_model_load(argv[1], &model);
  if (s)
    return fail(s);
  tcc_context_t *context;
  if ((s = tcc_context_create(model, NULL, &context)))
    return fail(s);
  float a[6], b[6], sum[6];
  for (int i = 0; i < 6; ++i) {
    a[i] = (float)i;
    b[i] = (float)(10 + i);
  }
  int64_t shape[2] = {2, 3};
  tcc_tensor_t *ta, *tb, *tsum;
  if ((s = tcc_tensor_wrap(TCC_DTYPE_F32, 2, shape, a, sizeof a, &ta)) ||
      (s = tcc_tensor_wrap(TCC_DTYPE_F32, 2, shape, b, sizeof b, &tb)) ||
      (s = tcc_tensor_wrap(TCC_DTYPE_F32, 2, shape, sum, sizeof sum, &tsum)))
    return fail(s);
  const tcc_tensor_t *in[2] = {ta, tb};
  tcc_tensor_t *out[1] = {tsum};
  if ((s = tcc_context_run(context, in, 2, out, 1)))
    return fail(s);
  for (int i = 0; i < 6; ++i)
    if (sum[i] != a[i] * b[i] + b[i]) {
      printf("main.c: sum[%d] = %g\n", i, sum[i]);
      return 1;
    }
  printf("main.c: ok, runtime %s\n", tcc_runtime_version());
  tcc_tensor_free(ta);
  tcc_tensor_free(tb);
  tcc_tensor_free(tsum);
  tcc_context_free(context);
  tcc_model_free(model);
  return 0;
}
