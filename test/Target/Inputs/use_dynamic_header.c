/* Runs a dynamic-batch artifact object through its generated header, at a
 * batch inside its bounds and one outside them. */
#include "rows.h"

#include <stdio.h>
#include <stdlib.h>

int main(void) {
  float *x = aligned_alloc(64, 256), *y = aligned_alloc(64, 256),
        *wb = aligned_alloc(64, 64);
  void *workspace =
      ROWS_WORKSPACE_BYTES
          ? aligned_alloc(64, (ROWS_WORKSPACE_BYTES + 63) / 64 * 64)
          : NULL;
  for (int i = 0; i < 21; ++i)
    x[i] = (float)i;
  printf("rc %d\n", rows_run(x, y, wb, 7, workspace));
  for (int r = 0; r < 7; ++r)
    printf("%s%g %g %g", r ? " | " : "", y[3 * r], y[3 * r + 1], y[3 * r + 2]);
  printf("\nwb %g %g %g\n", wb[0], wb[1], wb[2]);
  printf("rc %d\n", rows_run(x, y, wb, 8, workspace));
  return 0;
}
