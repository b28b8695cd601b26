/* fake_cuda.c - a test double of the CUDA driver API (libcuda.so.1) and of
 * cuBLAS, on host memory, for checking what the runtime asks of them
 * without a GPU: device memory is malloc'd, copies are memcpy, cuBLAS's
 * SGEMM is computed, and kernels are not run (there is no PTX machine) but
 * each launch is logged with its parameters. Every call goes to the file
 * $TCC_FAKE_CUDA_LOG, one line each; addresses are logged as
 * "buffer K + OFFSET" (K counting allocations) and out-of-bounds accesses
 * as errors. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long CUdeviceptr;

static FILE *logFile(void) {
  static FILE *f;
  if (!f) {
    const char *path = getenv("TCC_FAKE_CUDA_LOG");
    f = path ? fopen(path, "w") : stderr;
    if (!f)
      f = stderr;
  }
  return f;
}
#define LOG(...)                                                               \
  do {                                                                         \
    fprintf(logFile(), __VA_ARGS__);                                           \
    fputc('\n', logFile());                                                    \
    fflush(logFile());                                                         \
  } while (0)

/* Device buffers (cuMemAlloc) and page-locked host blocks (cuMemHostAlloc),
 * each numbered in allocation order. */
enum { kMaxBuffers = 256 };
struct Block {
  char *base;
  size_t bytes;
};
static struct Block buffers[kMaxBuffers], pinned[kMaxBuffers];
static int numBuffers, numPinned;

/* A new block of `bytes` in `table`, logged as "alloc WHAT K"; NULL when
 * the table is full. */
static void *addBlock(struct Block *table, int *count, size_t bytes,
                      const char *what) {
  if (*count == kMaxBuffers)
    return NULL;
  size_t rounded = (bytes + 255) / 256 * 256;
  table[*count].base = aligned_alloc(256, rounded ? rounded : 256);
  table[*count].bytes = bytes;
  LOG("alloc %s %d: %zu bytes", what, *count, bytes);
  return table[(*count)++].base;
}

/* Frees the block of `table` at `p`: 0, or 1 (logged as an error) for an
 * address that is none. */
static int freeBlock(struct Block *table, int count, const void *p,
                     const char *what) {
  for (int i = 0; i < count; ++i)
    if (table[i].base && table[i].base == p) {
      LOG("free %s %d", what, i);
      free(table[i].base);
      table[i].base = NULL;
      return 0;
    }
  LOG("error: free of an unknown address");
  return 1;
}

/* "WHAT K + OFFSET" into `t` for an address inside block K of `table` (and
 * `bytes` after it inside too); 0 when in none. */
static int findBlock(const struct Block *table, int count, uint64_t address,
                     size_t bytes, const char *what, char *t) {
  for (int i = count - 1; i >= 0; --i) {
    uint64_t b = (uint64_t)(uintptr_t)table[i].base;
    if (table[i].base && address >= b &&
        address + bytes <= b + table[i].bytes) {
      snprintf(t, 64, "%s %d + %llu", what, i,
               (unsigned long long)(address - b));
      return 1;
    }
  }
  return 0;
}

/* "buffer K + OFFSET" for an address inside device buffer K (and `bytes`
 * after it inside too), "pinned K + OFFSET" inside page-locked host block
 * K, else "out of bounds". */
static const char *where(uint64_t address, size_t bytes) {
  static char text[8][64];
  static int next;
  char *t = text[next++ % 8];
  if (!findBlock(pinned, numPinned, address, bytes, "pinned", t) &&
      !findBlock(buffers, numBuffers, address, bytes, "buffer", t))
    snprintf(t, 64, "out of bounds");
  return t;
}

int cuInit(unsigned flags) {
  LOG("cuInit");
  return 0;
}
int cuDeviceGetCount(int *n) {
  *n = 1;
  return 0;
}
int cuDeviceGet(int *d, int i) {
  *d = i;
  return 0;
}
int cuDevicePrimaryCtxRetain(void **c, int d) {
  *c = (void *)1;
  return 0;
}
int cuDevicePrimaryCtxRelease_v2(int d) {
  LOG("release context");
  return 0;
}
/* The context stack: a pop without its push is a runtime bug. */
static int contextDepth;
int cuCtxPushCurrent_v2(void *c) {
  ++contextDepth;
  return 0;
}
int cuCtxPopCurrent_v2(void **c) {
  if (contextDepth == 0)
    LOG("error: pop of an empty context stack");
  else
    --contextDepth;
  *c = (void *)1;
  return 0;
}
int cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  void *block = addBlock(buffers, &numBuffers, bytes, "buffer");
  *p = (CUdeviceptr)(uintptr_t)block;
  return block ? 0 : 2;
}
int cuMemFree_v2(CUdeviceptr p) {
  return freeBlock(buffers, numBuffers, (const void *)(uintptr_t)p, "buffer");
}
int cuMemHostAlloc(void **p, size_t bytes, unsigned flags) {
  *p = addBlock(pinned, &numPinned, bytes, "pinned");
  return *p ? 0 : 2;
}
int cuMemFreeHost(void *p) { return freeBlock(pinned, numPinned, p, "pinned"); }
static int capturing;
static void recordCopy(int kind, void *dst, const void *src, size_t bytes);
/* Host addresses show where they lie when page-locked ("pinned K"); any
 * other host memory is the caller's ("pageable"). */
static const char *hostWhere(const void *p, size_t bytes) {
  const char *w = where((uint64_t)(uintptr_t)p, bytes);
  return strncmp(w, "pinned", 6) ? "pageable" : w;
}
int cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes,
                         void *stream) {
  LOG("%scopy to device: %zu bytes to %s from %s", capturing ? "captured " : "",
      bytes, where(dst, bytes), hostWhere(src, bytes));
  if (capturing)
    recordCopy(2, (void *)(uintptr_t)dst, src, bytes);
  else
    memcpy((void *)(uintptr_t)dst, src, bytes);
  return 0;
}
int cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes,
                         void *stream) {
  LOG("%scopy to host: %zu bytes from %s to %s", capturing ? "captured " : "",
      bytes, where(src, bytes), hostWhere(dst, bytes));
  if (capturing)
    recordCopy(3, dst, (const void *)(uintptr_t)src, bytes);
  else
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return 0;
}
int cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                         void *stream) {
  LOG("copy on device: %zu bytes from %s to %s", bytes, where(src, bytes),
      where(dst, bytes));
  memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return 0;
}
int cuStreamCreate(void **s, unsigned flags) {
  *s = (void *)2;
  return 0;
}
int cuStreamSynchronize(void *s) {
  LOG("synchronize");
  return 0;
}
int cuStreamDestroy_v2(void *s) { return 0; }

static char *ptx;
static char *cubin;
static uint64_t cubinBytes;
int cuModuleLoadData(void **module, const void *image) {
  static const unsigned char fatMagic[4] = {0x50, 0xed, 0x55, 0xba};
  if (!memcmp(image, fatMagic, 4)) {
    /* A fat binary (the toolkit's fatbinary): its parts listed; the cubin
     * for this fake GPU's architecture (TCC_FAKE_CUDA_ARCH, default 90)
     * loaded as below, else refused (the runtime then loads the PTX). */
    const unsigned char *fat = image;
    const char *want = getenv("TCC_FAKE_CUDA_ARCH");
    unsigned arch = want ? (unsigned)atoi(want) : 90;
    uint16_t headerBytes;
    uint64_t fatBytes;
    memcpy(&headerBytes, fat + 6, 2);
    memcpy(&fatBytes, fat + 8, 8);
    char parts[512] = "";
    const unsigned char *mine = NULL;
    for (uint64_t at = headerBytes; at < headerBytes + fatBytes;) {
      uint16_t kind;
      uint32_t entryBytes, entryArch;
      uint64_t size;
      memcpy(&kind, fat + at, 2);
      memcpy(&entryBytes, fat + at + 4, 4);
      memcpy(&size, fat + at + 8, 8);
      memcpy(&entryArch, fat + at + 0x1c, 4);
      size_t used = strlen(parts);
      snprintf(parts + used, sizeof parts - used, "%s%s sm_%u",
               used ? ", " : "", kind == 2 ? "elf" : "ptx", entryArch);
      if (kind == 2 && entryArch == arch)
        mine = fat + at + entryBytes;
      at += entryBytes + size;
    }
    LOG("load module: fat binary of %s", parts);
    if (!mine) {
      LOG("load module: no cubin for sm_%u", arch);
      return 209; /* CUDA_ERROR_NO_BINARY_FOR_GPU */
    }
    return cuModuleLoadData(module, mine);
  }
  if (!memcmp(image, "\177ELF", 4)) {
    /* A cubin: refused as one for another GPU would be when
     * TCC_FAKE_CUDA_REFUSE_CUBIN is set (the runtime then loads the PTX),
     * else taken, its entry points found in the PTX loaded last. */
    if (getenv("TCC_FAKE_CUDA_REFUSE_CUBIN")) {
      LOG("load module: cubin refused");
      return 209; /* CUDA_ERROR_NO_BINARY_FOR_GPU */
    }
    /* Its size from the ELF64 header: the section headers come last. */
    const unsigned char *elf = image;
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, elf + 0x28, 8);
    memcpy(&shentsize, elf + 0x3a, 2);
    memcpy(&shnum, elf + 0x3c, 2);
    cubinBytes = shoff + (uint64_t)shentsize * shnum;
    free(cubin);
    cubin = malloc(cubinBytes);
    memcpy(cubin, image, cubinBytes);
    free(ptx);
    ptx = NULL;
    LOG("load module: cubin of %llu bytes", (unsigned long long)cubinBytes);
    *module = (void *)3;
    return 0;
  }
  free(ptx);
  ptx = strdup((const char *)image);
  const char *target = strstr(ptx, ".target ");
  int n = 0;
  while (target && target[8 + n] && target[8 + n] != '\n')
    ++n;
  LOG("load module: %.*s", n + 8, target ? target : "(no .target)");
  *module = (void *)3;
  return 0;
}
int cuModuleUnload(void *module) {
  LOG("unload module");
  return 0;
}

enum { kMaxFunctions = 4096 };
static struct {
  char name[128];
  int params;
} functions[kMaxFunctions];
static int numFunctions;
int cuModuleGetFunction(void **f, void *module, const char *name) {
  char entry[160];
  snprintf(entry, sizeof entry, ".entry %s(", name);
  if (!ptx && cubin && numFunctions < kMaxFunctions) {
    /* In a cubin, the name among its strings; its parameters unknown. */
    size_t n = strlen(name);
    for (uint64_t i = 0; i + n < cubinBytes; ++i)
      if (!memcmp(cubin + i, name, n + 1)) {
        snprintf(functions[numFunctions].name, 128, "%s", name);
        functions[numFunctions].params = 0;
        *f = (void *)(uintptr_t)(numFunctions + 1);
        ++numFunctions;
        return 0;
      }
    LOG("error: no entry point %s in the cubin", name);
    return 500;
  }
  const char *at = ptx ? strstr(ptx, entry) : NULL;
  if (!at || numFunctions == kMaxFunctions) {
    LOG("error: no entry point %s", name);
    return 500; /* CUDA_ERROR_NOT_FOUND */
  }
  const char *end = strchr(at, ')');
  int params = 0;
  for (const char *p = at; p && p < end; p = strstr(p + 1, ".param"))
    if (p != at && p < end)
      ++params;
  snprintf(functions[numFunctions].name, 128, "%s", name);
  functions[numFunctions].params = params;
  *f = (void *)(uintptr_t)(numFunctions + 1);
  ++numFunctions;
  return 0;
}
/* Stream capture (CUDA graphs): while capturing, launches, GEMMs and
 * copies are recorded, not run; a graph (captured, then instantiated: each
 * a list of its own) replays its operations when launched. */
enum { kMaxOps = 4096 };
struct Op {
  int kind; /* 0 launch, 1 sgemm, 2 copy to device, 3 copy to host */
  void *dst;
  const void *src;
  size_t bytes;
  int function;
  unsigned grid[3], block[3];
  uint64_t params[64];
  int ta, tb, m, n, k, lda, ldb, ldc, batch;
  long long sa, sb, sc;
  const float *a, *b;
  float *c;
  float alpha, beta;
};
struct Graph {
  int numOps;
  struct Op ops[kMaxOps];
};
static struct Graph *captured; /* while capturing */

/* Adds `op` to the graph being captured. */
static void record(const struct Op *op) {
  if (captured->numOps < kMaxOps)
    captured->ops[captured->numOps++] = *op;
}

static void logLaunch(const char *prefix, const struct Op *op) {
  char line[4096];
  int n = snprintf(line, sizeof line,
                   "%slaunch %s grid %u,%u,%u block %u,%u,%u:", prefix,
                   functions[op->function].name, op->grid[0], op->grid[1],
                   op->grid[2], op->block[0], op->block[1], op->block[2]);
  for (int k = 0; k < functions[op->function].params && n < 4000; ++k) {
    const char *w = where(op->params[k], 0);
    if (strcmp(w, "out of bounds"))
      n += snprintf(line + n, sizeof line - n, " [%s]", w);
    else
      n += snprintf(line + n, sizeof line - n, " %llu",
                    (unsigned long long)op->params[k]);
  }
  LOG("%s", line);
}

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                   unsigned by, unsigned bz, unsigned shared, void *stream,
                   void **params, void **extra) {
  struct Op op = {0};
  op.function = (int)(uintptr_t)f - 1;
  op.grid[0] = gx, op.grid[1] = gy, op.grid[2] = gz;
  op.block[0] = bx, op.block[1] = by, op.block[2] = bz;
  for (int k = 0; k < functions[op.function].params && k < 64; ++k)
    op.params[k] = *(const uint64_t *)params[k];
  logLaunch(capturing ? "captured " : "", &op);
  if (capturing)
    record(&op);
  return 0;
}

int cuStreamBeginCapture_v2(void *stream, int mode) {
  LOG("begin capture");
  capturing = 1;
  captured = calloc(1, sizeof *captured);
  return captured ? 0 : 2;
}
int cuStreamEndCapture(void *stream, void **graph) {
  LOG("end capture: %d operations", captured->numOps);
  capturing = 0;
  *graph = captured;
  captured = NULL;
  return 0;
}
int cuGraphInstantiateWithFlags(void **exec, void *graph,
                                unsigned long long flags) {
  LOG("instantiate graph");
  *exec = malloc(sizeof(struct Graph));
  if (!*exec)
    return 2;
  memcpy(*exec, graph, sizeof(struct Graph));
  return 0;
}
int cuGraphDestroy(void *graph) {
  free(graph);
  return 0;
}
int cuGraphExecDestroy(void *exec) {
  LOG("destroy graph");
  free(exec);
  return 0;
}

static void sgemm(const char *prefix, const struct Op *op);
static void recordCopy(int kind, void *dst, const void *src, size_t bytes) {
  struct Op op = {kind};
  op.dst = dst, op.src = src, op.bytes = bytes;
  record(&op);
}
int cuGraphLaunch(void *exec, void *stream) {
  const struct Graph *graph = exec;
  const struct Op *ops = graph->ops;
  LOG("graph launch: %d operations", graph->numOps);
  for (int i = 0; i < graph->numOps; ++i)
    if (ops[i].kind == 0)
      logLaunch("replayed ", &ops[i]);
    else if (ops[i].kind == 1)
      sgemm("replayed ", &ops[i]);
    else {
      LOG("replayed copy to %s: %zu bytes",
          ops[i].kind == 2 ? "device" : "host", ops[i].bytes);
      memcpy(ops[i].dst, ops[i].src, ops[i].bytes);
    }
  return 0;
}
int cuEventCreate(void **e, unsigned flags) {
  *e = (void *)4;
  return 0;
}
int cuEventRecord(void *e, void *s) { return 0; }
int cuEventQuery(void *e) { return 0; }
int cuEventSynchronize(void *e) { return 0; }
int cuEventDestroy_v2(void *e) { return 0; }
int cuGetErrorName(int r, const char **name) {
  *name = r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_FAKE";
  return 0;
}
int cuGetErrorString(int r, const char **text) {
  *text = "from the fake driver";
  return 0;
}

/* cuBLAS */
int cublasCreate_v2(void **h) {
  *h = (void *)5;
  LOG("cublasCreate");
  return 0;
}
int cublasDestroy_v2(void *h) {
  LOG("cublasDestroy");
  return 0;
}
int cublasSetStream_v2(void *h, void *s) { return 0; }
static void sgemm(const char *prefix, const struct Op *op) {
  LOG("%ssgemm %c%c m %d n %d k %d alpha %g beta %g lda %d ldb %d ldc %d "
      "strides %lld %lld %lld batch %d: A [%s] B [%s] C [%s]",
      prefix, op->ta ? 'T' : 'N', op->tb ? 'T' : 'N', op->m, op->n, op->k,
      op->alpha, op->beta, op->lda, op->ldb, op->ldc, op->sa, op->sb, op->sc,
      op->batch, where((uint64_t)(uintptr_t)op->a, 4),
      where((uint64_t)(uintptr_t)op->b, 4),
      where((uint64_t)(uintptr_t)op->c, 4));
  if (!strcmp(prefix, "captured "))
    return;
  for (int q = 0; q < op->batch; ++q)
    for (int j = 0; j < op->n; ++j)
      for (int i = 0; i < op->m; ++i) {
        float sum = 0;
        for (int p = 0; p < op->k; ++p)
          sum += (op->ta ? op->a[q * op->sa + p + i * op->lda]
                         : op->a[q * op->sa + i + p * op->lda]) *
                 (op->tb ? op->b[q * op->sb + j + p * op->ldb]
                         : op->b[q * op->sb + p + j * op->ldb]);
        float *out = &op->c[q * op->sc + i + j * op->ldc];
        *out = op->alpha * sum + (op->beta == 0 ? 0 : op->beta * *out);
      }
  /* What the copies brought: the product's first and last elements. */
  LOG("sgemm result: first %.4f last %.4f", op->c[0],
      op->c[(op->batch - 1) * op->sc + (op->m - 1) + (op->n - 1) * op->ldc]);
}

int cublasSgemmStridedBatched(void *h, int ta, int tb, int m, int n, int k,
                              const float *alpha, const float *a, int lda,
                              long long sa, const float *b, int ldb,
                              long long sb, const float *beta, float *c,
                              int ldc, long long sc, int batch) {
  struct Op op = {1};
  op.ta = ta, op.tb = tb, op.m = m, op.n = n, op.k = k;
  op.lda = lda, op.ldb = ldb, op.ldc = ldc, op.batch = batch;
  op.sa = sa, op.sb = sb, op.sc = sc;
  op.a = a, op.b = b, op.c = c, op.alpha = *alpha, op.beta = *beta;
  sgemm(capturing ? "captured " : "", &op);
  if (capturing)
    record(&op);
  return 0;
}
