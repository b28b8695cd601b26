// uk_internal.h - what the micro-kernel sources share: the tile geometry of
// each ISA, the ISA this build targets, and the GEMM driver's interfaces.
//
// Every .cc here is compiled once per ISA level (-march=x86-64, -v3, -v4);
// the target macros pick the kernels, so there is no run-time dispatch. The
// code must stay free of anything that needs the C++ runtime: no
// exceptions, RTTI, global constructors, thread_local or operator new, and
// no calls but memcpy/memset/malloc/free.
#ifndef TCC_RUNTIME_UKERNELS_UK_INTERNAL_H
#define TCC_RUNTIME_UKERNELS_UK_INTERNAL_H

#include "ukernels.h"

#include <stddef.h>
#include <stdint.h>

#include <atomic>

#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__) &&  \
    defined(__AVX512DQ__)
#define TCC_UK_NATIVE_ISA 2 // TCC_UK_ISA_AVX512
#define TCC_UK_ISA_NS avx512
#elif defined(__AVX2__) && defined(__FMA__)
#define TCC_UK_NATIVE_ISA 1 // TCC_UK_ISA_AVX2
#define TCC_UK_ISA_NS avx2
#else
#define TCC_UK_NATIVE_ISA 0 // TCC_UK_ISA_GENERIC
#define TCC_UK_ISA_NS generic
#endif

// A build that shares a program with the same ISA's bitcode build (the
// native tcc_ukernels library in the unit tests) renames its internals.
#ifdef TCC_UK_NAMESPACE
#undef TCC_UK_ISA_NS
#define TCC_UK_ISA_NS TCC_UK_NAMESPACE
#endif

#define TCC_UK_INLINE static inline __attribute__((always_inline))
// Full unrolling of the loops over a tile's registers.
#if defined(__clang__)
#define TCC_UK_UNROLL _Pragma("unroll")
#else
#define TCC_UK_UNROLL _Pragma("GCC unroll 16")
#endif

namespace tcc {
namespace uk {

/// `p`, hidden from the optimizer: loads through the result stay where the
/// code makes them instead of being merged with the same loads elsewhere
/// or hoisted out of a loop, where more values than there are registers
/// would be spilled and every multiply-add would reload two operands from
/// the stack. (Volatile, so that two calls are not merged either.)
template <typename T> TCC_UK_INLINE T *opaque(T *p) {
  __asm__ volatile("" : "+r"(p));
  return p;
}

// Each ISA variant's internals get their own names, so that several
// variants can share one program (the unit tests).
inline namespace TCC_UK_ISA_NS {

/// Tile and cache-block sizes of one ISA level. The register tile is MR rows
/// by NR columns of C (NR = a few vectors along a row, so C is stored with
/// whole-vector stores); kc x nc is the block of packed B kept in L2 while
/// MR x kc micro-panels of A sit in L1 (see docs/ukernels.md for why).
struct IsaTiles {
  int mr, nr, vl; // register tile, vector length in floats
  int64_t kc, nc; // K block, N block
  int64_t smallM; // m up to this streams B unpacked (no scratch): below
                  // about 8 rows, packing B costs more than re-reading it
};

/// Indexed by tcc_uk_isa_t. Layout functions take the ISA as an argument
/// and read this table, so any build can pack for any level.
constexpr IsaTiles kIsaTiles[3] = {
    {4, 8, 4, 256, 512, 8},   // generic: 4 rows x 2 SSE vectors
    {6, 16, 8, 256, 1024, 8}, // avx2: 6 rows x 2 ymm (12 accumulators)
    {8, 48, 16, 384, 672, 8}, // avx512: 8 rows x 3 zmm (24 accumulators)
};

inline const IsaTiles &tilesFor(int32_t isa) {
  return kIsaTiles[isa == 1 || isa == 2 ? isa : 0];
}

constexpr IsaTiles kTiles = kIsaTiles[TCC_UK_NATIVE_ISA];
constexpr int kMR = kTiles.mr;
constexpr int kNR = kTiles.nr;
constexpr int kVL = kTiles.vl;
constexpr int kNV = kNR / kVL;

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Floats in a k row of a packed B panel of w <= nr columns: nr for a full
/// panel; a ragged last panel of a matrix packed by tcc_uk_pack_b or
/// packBMatrix ("compact" B) is only as wide as its whole vectors.
constexpr int64_t panelWidth(int64_t w, int64_t nr, int64_t vl) {
  return w >= nr ? nr : (w + vl - 1) / vl * vl;
}
/// Floats of a compact packed k x n B.
constexpr int64_t compactBFloats(int64_t k, int64_t n, int64_t nr, int64_t vl) {
  return (n / nr * nr + (n % nr ? panelWidth(n % nr, nr, vl) : 0)) * k;
}
inline int64_t minI(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t maxI(int64_t a, int64_t b) { return a > b ? a : b; }

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

/// Below about this many multiply-adds a task costs more to hand to another
/// thread than to run (a pool wake-up is a few microseconds).
constexpr int64_t kMinTaskWork = int64_t(1) << 19;

/// Threads `host` offers (1 when it offers no parallel_for).
inline int hostThreads(const tcc_host_api_t *host) {
  if (!host || !host->parallel_for || host->num_threads <= 1 ||
      host->struct_size <
          offsetof(tcc_host_api_t, parallel_for) + sizeof(host->parallel_for))
    return 1;
  return host->num_threads;
}

/// fn(ctx, b, e) over [0, n): through the host when it has threads, else on
/// the caller. Always inlined: an out-of-line copy is a COMDAT, and two
/// artifacts' objects linked into one library keep one copy's group and
/// drop the other's, whose (localized) calls still point into it.
TCC_UK_INLINE void parallelFor(const tcc_host_api_t *host, int64_t n,
                               int64_t grain, tcc_parallel_fn_t fn, void *ctx) {
  if (n <= 0)
    return;
  if (n > 1 && hostThreads(host) > 1)
    host->parallel_for(host->self, n, grain, fn, ctx);
  else
    fn(ctx, 0, n);
}

//===----------------------------------------------------------------------===//
// Packing (pack.cc)
//===----------------------------------------------------------------------===//

/// Writes rows [k0, k0+kc) and columns [j0, j0+nc) of some k x n matrix B
/// as packed panels: panel q (columns j0+q*NR...) starts at dst +
/// q*panelStride and holds kc rows of NR floats, columns past nc zeroed.
/// The GEMM driver calls it per cache block (j0 a multiple of NR, nc at most
/// the ISA's nc), so B can be any source: a matrix, or an image seen
/// through im2col (conv2d.cc).
using PackBFn = void (*)(const void *src, int64_t k0, int64_t kc, int64_t j0,
                         int64_t nc, float *dst, int64_t panelStride);

/// A PackBFn source that is a plain (possibly transposed) matrix. Its
/// packer writes a ragged last panel compact (see panelWidth), the other
/// packers NR floats a row.
struct MatrixB {
  const float *b;
  int64_t ldb;
  bool trans;
};
void packBMatrix(const void *src, int64_t k0, int64_t kc, int64_t j0,
                 int64_t nc, float *dst, int64_t panelStride);

/// A PackBFn source: a row-major matrix whose row p is transformed as it
/// is packed, x * scale[p] + shift[p] (either NULL: 1 and 0), then
/// max(x, 0) where relu: a 1x1 convolution's input channels through a
/// BatchNorm and ReLU (tcc_uk_conv2d_params_t's prologue). Panels NR floats
/// a row, columns past n zero.
struct PrologueB {
  const float *b;
  int64_t ldb;
  const float *scale, *shift;
  bool relu;
};
void packBPrologue(const void *src, int64_t k0, int64_t kc, int64_t j0,
                   int64_t nc, float *dst, int64_t panelStride);

/// Packs rows [i0, i0+mr) x columns [k0, k0+kc) of A (a[i*rs + p*cs]) as
/// one micro-panel: kc groups of kMR floats, rows past mr left unwritten.
void packAPanel(const float *a, int64_t rs, int64_t cs, int64_t i0, int mr,
                int64_t k0, int64_t kc, float *dst);

/// Panels packed together from a transposed A (a[i + p*cs]): a k step of
/// one panel is kMR floats of a row of A^T, so panel by panel each k step
/// reads a fraction of a cache line, cs apart (a power of two in most
/// weight gradients: the few L1 sets such a walk maps to evict the line
/// before the next panel reads the rest of it). kAGroup panels read whole
/// lines of every row at once.
constexpr int kAGroup = kMR >= 8 ? 4 : 8;

/// Packs rows [i0, i0+rows) x columns [k0, k0+kc) of a transposed A as
/// ceil(rows / kMR) micro-panels, panel q at dst + q*kc*kMR; rows past
/// `rows` in the last panel left unwritten.
void packAPanelsTransposed(const float *a, int64_t cs, int64_t i0, int64_t rows,
                           int64_t k0, int64_t kc, float *dst);

//===----------------------------------------------------------------------===//
// Micro-kernels (microkernel.cc)
//===----------------------------------------------------------------------===//

/// What a micro-kernel does besides storing its tile. Pointers are already
/// offset to the tile's first row and column.
struct Tail {
  int loadC;         // add the tile's current C
  const float *bias; // NULL, or bias of the tile's first row / column
  int biasPerRow;
  const float *res; // NULL, or residual of the tile's first element
  int64_t ldr;
  int clamp;
  float lo, hi;
  int act; // TCC_UK_ACT_*, before the clamp
};

/// C[mr x nr] (= or +=, see tail) A-panel[kc x MR] * B-panel[kc x NR]
/// whose k rows are ldbp floats apart (NR, or less for a compact ragged
/// panel); mr and ceil(nr / VL) are baked into each instance. tail == NULL:
/// store.
using MicroKernelFn = void (*)(int64_t kc, const float *a, const float *b,
                               int64_t ldbp, float *c, int64_t ldc, int nr,
                               const Tail *tail);
MicroKernelFn microKernel(int mr, int nr);

/// microKernel(mr, nr) (nr > kNarrow on AVX-512) that also prefetches
/// into L2 the sideLines cache lines from `side` on, one every `every` k
/// steps: the next panel of a prepacked B that streams from memory a panel
/// at a time (runPanelsOuter), spread over the tiles before it is read.
using SideKernelFn = void (*)(int64_t kc, const float *a, const float *b,
                              int64_t ldbp, float *c, int64_t ldc, int nr,
                              const Tail *tail, const char *side,
                              int64_t sideLines, int64_t every);
SideKernelFn sideKernel(int mr, int nr);

/// Columns of a ragged last panel up to which the narrow kernels run
/// (AVX-512): they load no column of B past nr.
constexpr int kNarrow = 4;

/// The narrow tile kernel (a ragged last panel of nr <= 4 columns, AVX-512)
/// for *panels full row panels at once: panel g's A at a + g * aStride, its
/// tile at c + g * MR * ldc, the tail's bias and residual relative to panel
/// 0. The same bits as microKernel(MR, nr) on each panel. NULL (and
/// *panels = 0) where there is none.
using NarrowGroupFn = void (*)(int64_t kc, const float *a, int64_t aStride,
                               const float *b, int64_t ldbp, float *c,
                               int64_t ldc, const Tail *tail);
NarrowGroupFn narrowGroupKernel(int nr, int *panels);

/// A full MR x NR tile and the single column after it (B at b1, rows ldb1
/// apart; C's column NR, the tail's bias and residual relative to the
/// tile): microKernel(MR, NR) and microKernel(MR, 1) in one k loop, the
/// same bits. aNext, if not NULL, is the A panel of the next tile, whose
/// first steps the kernel prefetches during its own last ones. NULL where
/// there is none (AVX-512 only).
using TilePlusColumnFn = void (*)(int64_t kc, const float *a,
                                  const float *aNext, const float *b,
                                  int64_t ldbp, const float *b1, int64_t ldb1,
                                  float *c, int64_t ldc, const Tail *tail);
TilePlusColumnFn tilePlusColumnKernel();

/// Unpacked path for small m: C[m x nc] = A[m x k] * B[k x nc] streaming
/// whole rows of B (b[p*ldb + j]) and then the epilogue (whose pointers are
/// relative to row 0 / column j0 of the full problem).
void smallMGemm(int64_t m, int64_t nc, int64_t k, const float *a, int64_t ars,
                int64_t acs, const float *b, int64_t ldb, float *c, int64_t ldc,
                bool accumulate, const tcc_uk_epilogue_t *ep, int64_t j0);

//===----------------------------------------------------------------------===//
// The GEMM driver (sgemm.cc)
//===----------------------------------------------------------------------===//

struct GemmArgs {
  int64_t m, n, k;
  const float *a; // packed panels (packedA) or a[i*ars + p*acs]
  int64_t ars, acs;
  bool packedA;
  const float *bPacked; // prepacked B (full-k panels), or NULL: use packB
  bool bPackedCompact;  // bPacked's ragged last panel is compact
  PackBFn packB;
  const void *bSrc;
  float *c;
  int64_t ldc;
  bool accumulate;
  const tcc_uk_epilogue_t *ep; // NULL when there is no epilogue
  bool alwaysDirectB; // a matrix B read where it lies whatever the shape
  // Floats of k between the row panels of a packed A (0: k): a GEMM over
  // a range of k of a larger packed A (the pair's halves of k).
  int64_t aPanelK;
  // B prepacked, A packed whole before the tasks: each task takes B a
  // panel at a time through all its row panels (runPanelsOuter).
  bool panelsOuter;
};

/// A GEMM of m x k weights (row-major, or packed panels where packedA) by
/// a k x n B that the caller describes.
inline GemmArgs weightGemm(int64_t m, int64_t n, int64_t k, bool packedA,
                           const float *a) {
  GemmArgs g = {};
  g.m = m;
  g.n = n;
  g.k = k;
  g.packedA = packedA;
  g.a = a;
  g.ars = k;
  g.acs = 1;
  return g;
}

/// Bytes of scratch runGemm needs to pack B for a k x n problem (enough
/// for any packer; `compact`: for packBMatrix only).
int64_t packedBScratchBytes(int32_t isa, int64_t k, int64_t n,
                            bool compact = false);

/// An internal flag of gemmScratchBytes (and GemmArgs::alwaysDirectB):
/// read a matrix B where it lies whatever the shape (the
/// depthwise/pointwise pair, whose B it wrote itself; sgemm.cc says when
/// B is read where it lies otherwise).
constexpr uint32_t kAlwaysDirectB = 1u << 30;

/// Scratch bytes runGemm needs for a matrix B (packBMatrix's source; flags
/// as tcc_uk_sgemm's): its packed copy, the ragged panel alone when it is
/// read where it lies, 0 when prepacked or on the small-m path.
int64_t gemmScratchBytes(int32_t isa, uint32_t flags, int64_t m, int64_t n,
                         int64_t k);

/// Runs the blocked GEMM; scratch must hold packedBScratchBytes (for a
/// matrix B, gemmScratchBytes) unless B is prepacked.
void runGemm(const tcc_host_api_t *host, const GemmArgs &args, void *scratch);

//===----------------------------------------------------------------------===//
// Convolution (conv2d.cc, depthwise.cc)
//===----------------------------------------------------------------------===//

/// tcc_uk_conv2d_params_t with the defaults applied and the derived sizes.
struct ConvShape {
  int64_t n, c, h, w, f, kh, kw;
  int64_t sh, sw, dh, dw, pt, pl, pb, pr, groups;
  int64_t cg, fg, kdim; // channels and filters per group, c/groups*kh*kw
  int64_t oh, ow;
};

/// False when p is not a valid convolution.
bool resolveConv(const tcc_uk_conv2d_params_t *p, ConvShape &s);

/// One image and group of a convolution's input as a PackBFn source:
/// packIm2col packs rows [k0, k0+kc) (channel, ky, kx) and columns [j0,
/// j0+nc) (oy, ox) of im2col(x) into B panels, the packing the GEMM would do
/// anyway, without materialising the im2col matrix.
struct Im2col {
  const ConvShape *s;
  const float *x; // the group's first input channel of the image
  int64_t plane;  // floats from one channel to the next (0: s->h * s->w),
                  // for a shape that is a band of the image's rows
};
void packIm2col(const void *source, int64_t k0, int64_t kc, int64_t j0,
                int64_t nc, float *dst, int64_t panelStride);
/// Whether a convolution is 1x1, stride 1 and unpadded: its B is the image.
bool isPointwise(const ConvShape &s);
/// The direct kernel for groups with one input channel each; parityRows:
/// each input row holds its even columns, then its odd ones (only where
/// readsParityRows, depthwise_internal.h; one thread: host NULL); means:
/// NULL, or where each output plane's mean goes once the plane is done.
void depthwiseConv(const tcc_host_api_t *host, const ConvShape &s,
                   const float *input, const float *weight, float *output,
                   bool accumulate, const tcc_uk_epilogue_t *ep,
                   bool parityRows = false, float *means = nullptr);

/// Direct convolutions with the filters along the vectors (direct.cc):
/// few channels a group, filters a multiple of 16 a group, small images,
/// on AVX-512. A
/// convolution that fits (for `isa`) gets its weights packed in blocks of
/// 32 filters and runs this way whenever they are prepacked.
bool directFits(int32_t isa, const ConvShape &s);
int64_t directWeightBytes(const ConvShape &s);
void directPackWeights(const ConvShape &s, const float *w, float *out);
void directConv(const tcc_host_api_t *host, const ConvShape &s,
                const float *input, const float *weight, float *output,
                bool accumulate, const tcc_uk_epilogue_t *ep);
/// Output rows [oy0, oy1) of one image (s.n is not read) into output, row
/// oy0 first, outPlane floats from one filter's plane to the next, on this
/// thread; the bits are directConv's.
void directConvRows(const ConvShape &s, const float *image, const float *weight,
                    float *output, int64_t outPlane, int64_t oy0, int64_t oy1,
                    const tcc_uk_epilogue_t *ep);

/// Convolutions of at most 9 taps a pixel (a 1-channel 3x3), stride 1,
/// one group, filters a multiple of 8, with the pixels along the vectors
/// (pixels.cc), on AVX-512: the weights as they lie, prepacked or not.
bool pixelsFits(int32_t isa, const ConvShape &s);
/// Whether the pixels kernel also max-pools its output over 2x2 windows of
/// stride 2 (filters a multiple of 4).
bool pixelsPoolFits(int32_t isa, const ConvShape &s);
/// `pool`: the output is the 2x2, stride-2 max pooling of the convolution's
/// (pixelsPoolFits; no accumulation, residual or activation).
void pixelsConv(const tcc_host_api_t *host, const ConvShape &s,
                const float *input, const float *weight, float *output,
                bool accumulate, const tcc_uk_epilogue_t *ep,
                bool pool = false);

/// Convolutions of one group over at most 4 input channels (a network's
/// stem; filters a multiple of 8) or of groups of 2-8 channels and 4 or 8
/// filters, windows up to 7 wide, stride 1 or 2 across, outside
/// pixelsFits, with the pixels along the vectors (stem.cc), on AVX-512. A
/// convolution that fits (for `isa`) gets its weights packed
/// [f / 8][cg kh kw][8] ([f / 4][cg kh kw][4] for groups of 4 filters) and
/// runs this way whenever they are prepacked.
bool stemFits(int32_t isa, const ConvShape &s);
void stemPackWeights(const ConvShape &s, const float *w, float *out);
void stemConv(const tcc_host_api_t *host, const ConvShape &s,
              const float *input, const float *weight, float *output,
              bool accumulate, const tcc_uk_epilogue_t *ep);
/// Output rows [oy0, oy1) of one image (s.n is not read) into output, row
/// oy0 first, outPlane floats from one filter's plane to the next, on this
/// thread, with ep's bias, activation and clamp (no residual); the bits
/// are stemConv's. One group only.
void stemConvRows(const ConvShape &s, const float *image, const float *weight,
                  float *output, int64_t outPlane, int64_t oy0, int64_t oy1,
                  const tcc_uk_epilogue_t *ep);

/// A convolution and the max pooling after it (convpool.cc,
/// tcc_uk_conv2d_nchw's pool == 1): whether it fits, its scratch, and the
/// call (p checked by convPoolFits; epilogue bias and clamp only).
bool convPoolFits(int32_t isa, const tcc_uk_conv2d_params_t *p);
int64_t convPoolScratchBytes(int32_t isa, const tcc_uk_conv2d_params_t *p);
int32_t convPool(const tcc_host_api_t *host, const tcc_uk_conv2d_params_t *p,
                 const float *input, const float *weight, float *output,
                 const tcc_uk_epilogue_t *epilogue);

/// Winograd F(2x2, 3x3) (winograd.cc): 3x3, stride 1, one group, big
/// enough. A convolution that fits gets transformed weights at packing
/// time and runs this way whenever they are prepacked (TCC_UK_PACKED_A).
bool winogradFits(const ConvShape &s);
int64_t winogradWeightBytes(int32_t isa, const ConvShape &s);
void winogradPackWeights(int32_t isa, const ConvShape &s, const float *w,
                         float *out);
int64_t winogradScratchBytes(int32_t isa, const ConvShape &s);
void winogradConv(const tcc_host_api_t *host, const ConvShape &s,
                  const float *input, const float *weight, float *output,
                  bool accumulate, const tcc_uk_epilogue_t *ep, void *scratch);
/// u = G g G^T of F(m x m, 3x3) for one 3x3 filter g, (m+2)^2 floats,
/// position a i + j at u[a i + j] (computed in double).
void winogradFilter(int m, const float *g, float *u);

/// Winograd F(2x2, 3x3) for small images with the filters along the
/// vectors (winograd_filters.cc; AVX-512, tile rows of at most 7 tiles):
/// where it fits, winograd.cc's entry points pack, size and run it.
bool winoFiltersFits(int32_t isa, const ConvShape &s);
int64_t winoFiltersWeightBytes(const ConvShape &s);
void winoFiltersPackWeights(const ConvShape &s, const float *w, float *out);
int64_t winoFiltersScratchBytes(const ConvShape &s);
void winoFiltersConv(const tcc_host_api_t *host, const ConvShape &s,
                     const float *input, const float *weight, float *output,
                     bool accumulate, const tcc_uk_epilogue_t *ep,
                     void *scratch);

/// Items [0, n) shared by `parts` tasks (at most kMaxParts) in contiguous
/// runs, as the host's pool deals out its chunks: part q's run is
/// [q * n / parts, (q + 1) * n / parts). A part claims the front of its own
/// run first, then the fronts of the others' (q + 1, q + 2, ...): with the
/// parts at one speed each takes its own run in order, and a part whose
/// thread runs slower hands the end of its run to the others. Every item is
/// claimed once, whichever parts run.
struct RunClaims {
  static constexpr int64_t kMaxParts = 4;
  struct alignas(64) Run {
    std::atomic<int64_t> next;
    int64_t end;
  };
  Run runs[kMaxParts];
  int64_t parts = 0;

  void reset(int64_t partCount, int64_t n) {
    parts = partCount;
    for (int64_t q = 0; q < parts; ++q) {
      runs[q].next.store(q * n / parts, std::memory_order_relaxed);
      runs[q].end = (q + 1) * n / parts;
    }
  }
  /// The next item for part q, or -1 when every one is taken.
  int64_t claim(int64_t q) {
    for (int64_t i = 0; i < parts; ++i) {
      Run &run = runs[(q + i) % parts];
      if (run.next.load(std::memory_order_relaxed) >= run.end)
        continue;
      const int64_t item = run.next.fetch_add(1, std::memory_order_relaxed);
      if (item < run.end)
        return item;
    }
    return -1;
  }
};

/// Output rows [oy0, oy1) of `planes` planes of the max pooling p (its n
/// and c are not read), one thread: plane i's input row 0 at x + i *
/// xStride (only the rows those outputs' windows read need be there), its
/// output row 0 at y + i * yStride.
void maxPoolRows(const tcc_uk_pool2d_params_t *p, int64_t planes,
                 const float *x, int64_t xStride, float *y, int64_t yStride,
                 int64_t oy0, int64_t oy1);

/// Rounds scratch up to 64 bytes (the *_scratch_bytes sizes allow for it).
inline float *alignScratch(void *p) {
  return reinterpret_cast<float *>((reinterpret_cast<uintptr_t>(p) + 63) &
                                   ~static_cast<uintptr_t>(63));
}

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc

#endif // TCC_RUNTIME_UKERNELS_UK_INTERNAL_H
