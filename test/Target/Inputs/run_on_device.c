/* Runs a CUDA artifact with tcc_context_run_device on buffers of the
 * process's CUDA allocator; under the test double of the driver
 * (fake_cuda.c) "device" memory is host memory. Prints the status of each
 * run: three on the same buffers, one with another output buffer, one
 * whose output overlaps an input, one with an input off the 256-byte
 * alignment, then the first buffers again, twice the other output, the
 * first buffers once more, and one with a NULL output. */
#include "tcc/runtime.h"

#include <stdio.h>

static int report(const char *what, tcc_status_t s) {
  printf("%s: %s\n", what, s ? tcc_status_message(s) : "ok");
  int failed = s != NULL;
  tcc_status_free(s);
  return failed;
}

int main(int argc, char **argv) {
  tcc_model_t *model;
  tcc_context_t *context;
  tcc_allocator_t *cuda;
  if (argc != 2 || report("load", tcc_model_load(argv[1], &model)) ||
      report("context", tcc_context_create(model, NULL, &context)) ||
      report("allocator", tcc_allocator_cuda_default(0, &cuda)))
    return 1;
  void *x, *w, *y, *y2, *big;
  if (report("x", tcc_allocator_allocate(cuda, 4 * 16 * 4, 0, &x)) ||
      report("w", tcc_allocator_allocate(cuda, 16 * 8 * 4, 0, &w)) ||
      report("y", tcc_allocator_allocate(cuda, 4 * 8 * 4, 0, &y)) ||
      report("y2", tcc_allocator_allocate(cuda, 4 * 8 * 4, 0, &y2)) ||
      report("big", tcc_allocator_allocate(cuda, 1024, 0, &big)))
    return 1;
  const void *inputs[] = {x, w};
  void *outputs[] = {y};
  for (int i = 0; i < 3; ++i)
    report("run", tcc_context_run_device(context, inputs, 2, outputs, 1));
  void *other[] = {y2};
  report("another output",
         tcc_context_run_device(context, inputs, 2, other, 1));
  void *overlapping[] = {x};
  report("output over an input",
         tcc_context_run_device(context, inputs, 2, overlapping, 1));
  const void *unaligned[] = {(const char *)big + 64, w};
  report("unaligned input",
         tcc_context_run_device(context, unaligned, 2, outputs, 1));
  report("first buffers again",
         tcc_context_run_device(context, inputs, 2, outputs, 1));
  for (int i = 0; i < 2; ++i)
    report("another output",
           tcc_context_run_device(context, inputs, 2, other, 1));
  report("first buffers again",
         tcc_context_run_device(context, inputs, 2, outputs, 1));
  void *none[] = {NULL};
  report("null output", tcc_context_run_device(context, inputs, 2, none, 1));
  tcc_context_free(context);
  tcc_model_free(model);
  return 0;
}
