/* Links an artifact object through its generated header, without libtccrt. */
#include "affine_net.h"

#include <stdio.h>
#include <stdlib.h>

int main(void) {
  const tcc_artifact_desc_t *desc = affine_net_artifact_get();
  printf("abi %u inputs %u outputs %u model %s\n", desc->abi_version,
         desc->num_inputs, desc->num_outputs, desc->model_name);
  float *x = aligned_alloc(64, 64), *y = aligned_alloc(64, 64),
        *total = aligned_alloc(64, 64);
  for (int i = 0; i < 6; ++i)
    x[i] = (float)i;
  if (affine_net_run(x, y, total, NULL) != 0)
    return 1;
  for (int i = 0; i < 6; ++i)
    printf("%g ", y[i]);
  printf("| %g\n", *total);
  return 0;
}
