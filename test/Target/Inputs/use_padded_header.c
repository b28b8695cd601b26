/* Runs a padded-sequence artifact object through its generated header at
 * sizes below a bucket (padded), at a bucket's size (the caller's buffers)
 * and above the bound. */
#include "seqs.h"

#include <stdio.h>
#include <stdlib.h>

static void run(int64_t n, float *x, float *p, float *m, void *workspace) {
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t i = 0; i < n; ++i)
      x[r * n + i] = (float)(i % 4) + (float)r;
  int32_t rc = seqs_run(x, p, m, n, workspace);
  printf("n %lld rc %d:", (long long)n, rc);
  if (rc == 0) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i)
      sum += p[n + i];
    printf(" p %.4f %.4f %.4f sum %.4f m %.4f %.4f", p[0], p[1], p[n - 1], sum,
           m[0], m[1]);
  }
  printf("\n");
}

int main(void) {
  float *x = aligned_alloc(64, 256), *p = aligned_alloc(64, 256),
        *m = aligned_alloc(64, 64);
  void *workspace = aligned_alloc(64, (SEQS_WORKSPACE_BYTES + 63) / 64 * 64);
  run(3, x, p, m, workspace);
  run(16, x, p, m, workspace);
  run(21, x, p, m, workspace);
  run(25, x, p, m, workspace);
  return 0;
}
