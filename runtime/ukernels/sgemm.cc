// sgemm.cc - the GEMM driver: splits C into blocks for the host's threads,
// walks each block in cache-sized pieces (GotoBLAS/BLIS order, transposed
// because C is row-major and vectors run along its rows), packs what is not
// packed yet and calls the tile kernels.
#include "uk_internal.h"

#include <stdlib.h>

namespace tcc {
namespace uk {
inline namespace TCC_UK_ISA_NS {
namespace {

bool isTrivial(const tcc_uk_epilogue_t *ep) {
  return !ep ||
         (!ep->bias && !ep->residual && !ep->has_clamp && !ep->activation);
}

/// The small-m path streams the rows of an unpacked, untransposed B; it
/// reads A unpacked too.
bool useSmallM(const IsaTiles &t, uint32_t flags, int64_t m) {
  return !(flags & (TCC_UK_PACKED_A | TCC_UK_PACKED_B | TCC_UK_TRANS_B)) &&
         m <= t.smallM;
}

/// Tasks for `work` multiply-adds on the small-m path: up to four a thread,
/// so that one running late is covered by the others (its tasks repeat no
/// packing).
int64_t taskBudget(const tcc_host_api_t *host, int64_t work) {
  const int64_t threads = hostThreads(host);
  return threads == 1 ? 1 : maxI(1, minI(4 * threads, work / kMinTaskWork));
}

struct Job {
  const GemmArgs *g;
  const float *bFull; // all of B packed with full-k panels, or NULL
  float *bBuf;        // scratch for packing B
  int64_t tm, tn, mp, np;
  int64_t rowChunk; // rows of B a packRows task packs
  // B read where it lies (readBDirect): the full panels' tiles load its
  // rows, ldb apart; its ragged last panel too when raggedDirect, else
  // that panel alone is packed, at bBuf.
  const float *bDirect;
  int64_t ldb;
  bool raggedDirect;
};

/// Whether a GEMM reads a plain row-major B (packBMatrix's source, not
/// transposed, not prepacked) where it lies instead of packing it: the tile
/// kernels load its full panels' rows, ldb apart, and only a ragged last
/// panel is packed. Packing writes and reads all of B once more, which pays
/// off when many row panels of A share the copy; with at most kDirectMaxM
/// rows of A (and at most kDirectMaxK rows of B, so that a K block's loads
/// touch few pages) it does not: 1x1 projections of a few channels
/// (24 x 3136 x 144) read their input where it lies. With more rows of A the
/// copy pays for itself again (attention's P * V, 128 x 64 x 128, packs its B).
constexpr int64_t kDirectMaxM = 64, kDirectMaxK = 512;
constexpr int64_t kDirectTasksPerThread = 4;
bool readBDirect(int32_t isa, uint32_t flags, int64_t m, int64_t n, int64_t k) {
  const IsaTiles &t = tilesFor(isa);
  if (flags & (TCC_UK_PACKED_B | TCC_UK_TRANS_B) || n < t.nr)
    return false;
  return (flags & kAlwaysDirectB) || (m <= kDirectMaxM && k <= kDirectMaxK);
}

/// Whether the ragged last panel (nr < NR columns) of a B read where it
/// lies is read there too: a kernel loading only whole vectors of it
/// (nr a multiple of the vector), or the narrow kernels (nr <= kNarrow on
/// AVX-512), which load nr floats a row, stay inside its rows. Otherwise
/// the last vector would read past the end of B, and the panel is packed
/// first: by one thread, before the tiles, while the others wait, which is
/// why every panel that can be read in place is.
bool raggedDirect(int32_t isa, int64_t nr) {
  const IsaTiles &t = tilesFor(isa);
  return nr % t.vl == 0 || (isa == TCC_UK_ISA_AVX512 && nr <= kNarrow);
}

/// Whether a GEMM over prepacked B (weights: a Linear layer, attention's
/// projections) packs all of A (the activations) before its tasks and
/// takes B a panel at a time through every row panel of its task
/// (runPanelsOuter), instead of a block of panels (1 MB) through each row
/// panel in turn. The weights stream from memory or L3 once a call, and by
/// blocks the first row panel's pass over a block waited on all of it
/// (ViT's 197 x 3072 x 768 product 15% slower with cold weights than with
/// weights in L2). By panels, each tile prefetches into L2 its share of
/// the next panel (72 KB) while it computes; but each tile then reads its
/// A panel from L2 instead of L1, which costs more than the wait saves
/// from a few hundred rows on (a block's wait is shared by more row
/// panels). tcc-ukernel-bench, 2 threads, cold weights, x 3072 x 768: 8
/// rows 166 -> 187 GFLOP/s, 16 140 -> 236, 24 154 -> 272, 128 255 -> 297,
/// 197 265 -> 288, 256 263 -> 272, 320 and 384 level, 512 278 -> 260; one
/// row (a batch-1 Linear, bound by the weights' bandwidth either way)
/// level. So from kOuterMinM rows to kOuterMaxM, and a B of kOuterMinB
/// floats (smaller ones stay in L2 from call to call).
constexpr int64_t kOuterMinM = 2, kOuterMaxM = 256,
                  kOuterMinB = int64_t(1) << 18;
bool panelsOuterFits(uint32_t flags, int64_t m, int64_t n, int64_t k) {
  return (flags & TCC_UK_PACKED_B) && !(flags & TCC_UK_PACKED_A) &&
         m >= kOuterMinM && m <= kOuterMaxM && n > kNarrow &&
         n * k >= kOuterMinB;
}

} // namespace

int64_t gemmScratchBytes(int32_t isa, uint32_t flags, int64_t m, int64_t n,
                         int64_t k) {
  const IsaTiles &t = tilesFor(isa);
  if (panelsOuterFits(flags, m, n, k))
    return tcc_uk_pack_a_bytes(isa, m, k) + 64; // all of A, packed
  if (m <= 0 || n <= 0 || (flags & TCC_UK_PACKED_B) || useSmallM(t, flags, m))
    return 0;
  if (readBDirect(isa, flags, m, n, k)) // the ragged panel, if packed
    return n % t.nr && !raggedDirect(isa, n % t.nr)
               ? compactBFloats(k, n % t.nr, t.nr, t.vl) *
                         static_cast<int64_t>(sizeof(float)) +
                     64
               : 0;
  return packedBScratchBytes(isa, k, n, /*compact=*/true);
}

namespace {

/// Points the tail's bias and residual at the tile at (ir, jr); none but
/// on the last K block.
inline void setTail(Tail &tail, const tcc_uk_epilogue_t *ep, bool withEpilogue,
                    int64_t ir, int64_t jr) {
  if (withEpilogue) {
    tail.bias = !ep->bias         ? NULL
                : tail.biasPerRow ? ep->bias + ir
                                  : ep->bias + jr;
    tail.res = ep->residual ? ep->residual + ir * tail.ldr + jr : NULL;
  } else {
    tail.bias = NULL;
    tail.res = NULL;
  }
}

/// The tail of a GEMM's tiles: the epilogue's fields that hold for every
/// tile (setTail points the rest at each).
Tail gemmTail(const tcc_uk_epilogue_t *ep) {
  Tail tail = {};
  if (!isTrivial(ep)) {
    tail.biasPerRow = ep->bias_per_row;
    tail.ldr = ep->ldr;
    tail.lo = ep->clamp_min;
    tail.hi = ep->clamp_max;
  }
  return tail;
}

/// What the K block at pc (kc of K) does at its tiles' end: C loaded after
/// the first block (or to accumulate), the epilogue on the last one.
struct KBlock {
  bool withEpilogue, needTail;
};
KBlock beginKBlock(Tail &tail, const GemmArgs &g, int64_t pc, int64_t kc) {
  const bool first = pc == 0, last = pc + kc >= g.k;
  tail.loadC = !first || g.accumulate;
  const bool withEpilogue = last && !isTrivial(g.ep);
  tail.clamp = withEpilogue && g.ep->has_clamp;
  tail.act = withEpilogue ? g.ep->activation : 0;
  return {withEpilogue, tail.loadC || withEpilogue};
}

/// C[i0:i1, j0:j1], all of k. i0 and j0 are multiples of MR and NR, so each
/// element sees the same tiles, K blocks and FMA order whatever the split.
void runBlock(const Job &job, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  const GemmArgs &g = *job.g;
  const int64_t K = g.k, aK = g.aPanelK ? g.aPanelK : g.k;
  // One panel of A packed per row panel, or kAGroup of a transposed A.
  const bool groupA = !g.packedA && g.ars == 1 && g.acs != 1;
  alignas(64) float aBuf[kAGroup * kMR * kTiles.kc];
  const bool compact = g.bPacked ? g.bPackedCompact : g.packB == packBMatrix;
  Tail tail = gemmTail(g.ep);
  // One pass even for K == 0, to store zeros and the epilogue.
  for (int64_t pc = 0; pc == 0 || pc < K; pc += kTiles.kc) {
    const int64_t kc = minI(kTiles.kc, K - pc);
    const KBlock kb = beginKBlock(tail, g, pc, kc);
    const bool withEpilogue = kb.withEpilogue, needTail = kb.needTail;
    for (int64_t jc = j0; jc < j1; jc += kTiles.nc) {
      const int64_t nc = minI(kTiles.nc, j1 - jc);
      // Panels kNR floats a k row, but a compact ragged last one; with all
      // of B packed, the block's rows of each panel start at row pc.
      const float *bBlock = NULL;
      int64_t panelStride = 0, rowOffset = 0;
      if (job.bFull) {
        bBlock = job.bFull + (jc / kNR) * K * kNR;
        panelStride = K * kNR;
        rowOffset = pc;
      } else if (!job.bDirect) {
        // The block goes to the start of this task's share of the
        // scratch, so it stays in L2 while every row panel of A uses it.
        float *dst = job.bBuf + (j0 / kNR) * K * kNR;
        g.packB(g.bSrc, pc, kc, jc, nc, dst, kc * kNR);
        bBlock = dst;
        panelStride = kc * kNR;
      }
      // Row panel ir of A for this K block: prepacked, or packed now (with
      // the group it starts when A is transposed; the row panels are asked
      // for in order).
      int64_t groupStart = 0, groupEnd = 0;
      auto aPanel = [&](int64_t ir, int mr) -> const float * {
        if (g.packedA)
          return g.a + (ir / kMR) * aK * kMR + pc * kMR;
        if (!groupA) {
          packAPanel(g.a, g.ars, g.acs, ir, mr, pc, kc, aBuf);
          return aBuf;
        }
        if (ir < groupStart || ir >= groupEnd) {
          groupStart = ir;
          groupEnd = minI(i1, ir + kAGroup * kMR);
          packAPanelsTransposed(g.a, g.acs, ir, groupEnd - ir, pc, kc, aBuf);
        }
        return aBuf + (ir - groupStart) / kMR * kc * kMR;
      };
      // B of the tile at column jr (nr wide) and its row stride.
      auto bAt = [&](int64_t jr, int nr, int64_t &ldbp) -> const float * {
        if (job.bDirect) {
          if (nr == kNR || job.raggedDirect) {
            ldbp = job.ldb;
            return job.bDirect + pc * job.ldb + jr;
          }
          ldbp = panelWidth(nr, kNR, kVL);
          return job.bBuf + pc * ldbp;
        }
        ldbp = compact ? panelWidth(nr, kNR, kVL) : kNR;
        return bBlock + (jr - jc) / kNR * panelStride + rowOffset * ldbp;
      };
      // The tiles of row panel ir (A at ap) over columns [jr0, jr1).
      auto tiles = [&](int64_t ir, int mr, const float *ap, int64_t jr0,
                       int64_t jr1) {
        for (int64_t jr = jr0; jr < jr1; jr += kNR) {
          const int nr = static_cast<int>(minI(kNR, jr1 - jr));
          setTail(tail, g.ep, withEpilogue, ir, jr);
          int64_t ldbp;
          const float *b = bAt(jr, nr, ldbp);
          microKernel(mr, nr)(kc, ap, b, ldbp, g.c + ir * g.ldc + jr, g.ldc, nr,
                              needTail ? &tail : NULL);
        }
      };
      // A narrow last panel (a few columns) runs for groups of prepacked
      // row panels at once, after their other tiles.
      const int64_t lastJr = jc + (nc - 1) / kNR * kNR;
      const int lastNr = static_cast<int>(jc + nc - lastJr);
      // One column past the last full panel goes in the same k loop as
      // that panel's tile, for full row panels.
      const TilePlusColumnFn plusColumn =
          lastNr == 1 && nc > kNR ? tilePlusColumnKernel() : NULL;
      if (plusColumn) {
        int64_t ldb1, ldbp;
        const float *b1 = bAt(lastJr, 1, ldb1);
        const float *b = bAt(lastJr - kNR, kNR, ldbp);
        for (int64_t ir = i0; ir < i1; ir += kMR) {
          const int mr = static_cast<int>(minI(kMR, i1 - ir));
          const float *ap = aPanel(ir, mr);
          if (mr < kMR) {
            tiles(ir, mr, ap, jc, jc + nc);
            continue;
          }
          tiles(ir, mr, ap, jc, lastJr - kNR);
          setTail(tail, g.ep, withEpilogue, ir, lastJr - kNR);
          const float *aNext =
              g.packedA && ir + 2 * kMR <= i1 ? aPanel(ir + kMR, kMR) : NULL;
          plusColumn(kc, ap, aNext, b, ldbp, b1, ldb1,
                     g.c + ir * g.ldc + lastJr - kNR, g.ldc,
                     needTail ? &tail : NULL);
        }
        continue;
      }
      int groupPanels = 0;
      const NarrowGroupFn group =
          g.packedA ? narrowGroupKernel(lastNr, &groupPanels) : NULL;
      int64_t ir = i0;
      if (group) {
        const int64_t rows = groupPanels * kMR;
        int64_t ldbp;
        const float *b = bAt(lastJr, lastNr, ldbp);
        for (; ir + rows <= i1; ir += rows) {
          const float *ap = g.a + (ir / kMR) * aK * kMR + pc * kMR;
          for (int64_t q = 0; q < groupPanels; ++q)
            tiles(ir + q * kMR, kMR, ap + q * aK * kMR, jc, lastJr);
          setTail(tail, g.ep, withEpilogue, ir, lastJr);
          group(kc, ap, aK * kMR, b, ldbp, g.c + ir * g.ldc + lastJr, g.ldc,
                needTail ? &tail : NULL);
        }
      }
      for (; ir < i1; ir += kMR) {
        const int mr = static_cast<int>(minI(kMR, i1 - ir));
        tiles(ir, mr, aPanel(ir, mr), jc, jc + nc);
      }
    }
  }
}

/// C[i0:i1, j0:j1] of a panelsOuter GEMM (panelsOuterFits): A and B
/// both packed, all of k. For each K block, B a panel at a time through
/// every row panel, each tile prefetching into L2 its share of the next
/// panel's block rows (or the first panel's rows of the next K block), so
/// that the weights stream from memory while the row panels compute. The
/// tile kernels and their order over k are runBlock's, so the bits are too.
void runPanelsOuter(const Job &job, int64_t i0, int64_t i1, int64_t j0,
                    int64_t j1) {
  const GemmArgs &g = *job.g;
  const int64_t K = g.k;
  Tail tail = gemmTail(g.ep);
  const int64_t rowPanels = ceilDiv(i1 - i0, kMR);
  // Row k0 of the panel at column jr, and its row stride.
  auto panelRows = [&](int64_t jr, int64_t k0, int64_t &ldbp) {
    const int nr = static_cast<int>(minI(kNR, g.n - jr));
    ldbp = g.bPackedCompact ? panelWidth(nr, kNR, kVL) : kNR;
    return job.bFull + (jr / kNR) * K * kNR + k0 * ldbp;
  };
  for (int64_t pc = 0; pc == 0 || pc < K; pc += kTiles.kc) {
    const int64_t kc = minI(kTiles.kc, K - pc);
    const KBlock kb = beginKBlock(tail, g, pc, kc);
    const bool withEpilogue = kb.withEpilogue, needTail = kb.needTail;
    for (int64_t jr = j0; jr < j1; jr += kNR) {
      const int nr = static_cast<int>(minI(kNR, j1 - jr));
      int64_t ldbp;
      const float *b = panelRows(jr, pc, ldbp);
      // What to fetch while this panel's tiles run: the next panel's rows
      // of this K block, else the first panel's of the next one.
      const float *next = NULL;
      int64_t nextBytes = 0;
      if (jr + kNR < j1 || pc + kc < K) {
        const bool sameBlock = jr + kNR < j1;
        const int64_t nk = sameBlock ? kc : minI(kTiles.kc, K - pc - kc);
        int64_t nldbp;
        next = panelRows(sameBlock ? jr + kNR : j0, sameBlock ? pc : pc + kc,
                         nldbp);
        nextBytes = nk * nldbp * static_cast<int64_t>(sizeof(float));
      }
      const int64_t lines = ceilDiv(nextBytes, 64);
      const int64_t perTile = ceilDiv(lines, rowPanels);
      const int64_t every = maxI(1, kc / maxI(perTile, 1));
      const char *side = reinterpret_cast<const char *>(next);
      for (int64_t ir = i0, q = 0; ir < i1; ir += kMR, ++q) {
        const int mr = static_cast<int>(minI(kMR, i1 - ir));
        const float *ap = g.a + (ir / kMR) * K * kMR + pc * kMR;
        setTail(tail, g.ep, withEpilogue, ir, jr);
        float *c = g.c + ir * g.ldc + jr;
        const int64_t from = minI(lines, q * perTile);
        const int64_t count = minI(lines, from + perTile) - from;
        if (nr > kNarrow)
          sideKernel(mr, nr)(kc, ap, b, ldbp, c, g.ldc, nr,
                             needTail ? &tail : NULL, side + from * 64, count,
                             every);
        else
          microKernel(mr, nr)(kc, ap, b, ldbp, c, g.ldc, nr,
                              needTail ? &tail : NULL);
      }
    }
  }
}

void runTasks(void *ctx, int64_t begin, int64_t end) {
  const Job &job = *static_cast<const Job *>(ctx);
  const GemmArgs &g = *job.g;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t ti = t / job.tn, tj = t % job.tn;
    const int64_t i0 = ti * job.mp / job.tm * kMR;
    const int64_t i1 = minI(g.m, (ti + 1) * job.mp / job.tm * kMR);
    const int64_t j0 = tj * job.np / job.tn * kNR;
    const int64_t j1 = minI(g.n, (tj + 1) * job.np / job.tn * kNR);
    if (i0 >= i1 || j0 >= j1)
      continue;
    if (g.panelsOuter)
      runPanelsOuter(job, i0, i1, j0, j1);
    else
      runBlock(job, i0, i1, j0, j1);
  }
}

void packPanels(void *ctx, int64_t begin, int64_t end) {
  const Job &job = *static_cast<const Job *>(ctx);
  const GemmArgs &g = *job.g;
  // At most nc columns a call: the bound a PackBFn may rely on.
  const int64_t j1 = minI(g.n, end * kNR);
  for (int64_t j0 = begin * kNR; j0 < j1; j0 += kTiles.nc)
    g.packB(g.bSrc, 0, g.k, j0, minI(kTiles.nc, j1 - j0), job.bBuf + j0 * g.k,
            g.k * kNR);
}

/// Packs rows [begin, end) * rowChunk of all of B (full-k panels of NR
/// floats a row: not packBMatrix's compact last panel).
void packRows(void *ctx, int64_t begin, int64_t end) {
  const Job &job = *static_cast<const Job *>(ctx);
  const GemmArgs &g = *job.g;
  const int64_t k0 = begin * job.rowChunk;
  const int64_t k1 = minI(g.k, end * job.rowChunk);
  for (int64_t j0 = 0; j0 < g.n; j0 += kTiles.nc)
    g.packB(g.bSrc, k0, k1 - k0, j0, minI(kTiles.nc, g.n - j0),
            job.bBuf + j0 * g.k + k0 * kNR, g.k * kNR);
}

/// What splitting m costs a task beyond its share of the products: it reads
/// all of the packed B once from another core's cache or L3 (the panels
/// after it from its own L2), a quarter of a task of few row panels, at
/// most about this many row panels' worth. Uncapped, the quarter kept a
/// 1000 x 169 x 512 product (63 row panels a task) split by columns, 96
/// against 73 (6 against 5 vectors), 7% slower than by rows on 2 threads
/// (tcc-ukernel-bench); without the quarter, products of 32-128 rows and
/// 49 columns split as 48 + 1 (docs/ukernels.md, Threads).
constexpr int64_t kSplitMRowPanels = 4;
/// Rows a product counts as at least when it picks its tasks: a GEMV's
/// time is streaming B (planTasks).
constexpr int64_t kStreamedRows = 4 * kMR;

/// Picks the tm x tn grid of at most one task a thread. Splitting n is
/// preferred: each task then packs its own columns of B right before using
/// them, while splitting m makes every task read all of B and adds a pass
/// (a second parallel_for) that packs it first. More tasks than threads
/// would only repeat the packing of A, once per extra task. Costs are
/// vector FMAs per k step of the largest task, plus a row of A packed per
/// row.
void planTasks(const tcc_host_api_t *host, Job &job) {
  const GemmArgs &g = *job.g;
  job.mp = ceilDiv(g.m, kMR);
  job.np = ceilDiv(g.n, kNR);
  job.tm = job.tn = 1;
  const int64_t threads = hostThreads(host);
  // A row panel streams all of B whatever its rows: for few rows (a
  // batch-1 Linear, a squeeze-and-excitation FC: GEMVs) a float of B costs
  // what about four row panels' multiply-adds cost, not m: weights used
  // once a run come from L3, at about 26 GB/s a core (docs/ukernels.md,
  // "Threads").
  const int64_t maxTasks =
      maxI(1, minI(threads, maxI(g.m, kStreamedRows) * g.n * maxI(g.k, 1) /
                                kMinTaskWork));
  int64_t best = -1;
  for (int64_t tm = 1; tm <= minI(maxTasks, job.mp); ++tm) {
    for (int64_t tn = 1; tm * tn <= maxTasks && tn <= job.np; ++tn) {
      int64_t rows = 0, cols = 0;
      for (int64_t ti = 0; ti < tm; ++ti)
        rows = maxI(rows, minI(g.m, (ti + 1) * job.mp / tm * kMR) -
                              ti * job.mp / tm * kMR);
      for (int64_t tj = 0; tj < tn; ++tj)
        cols = maxI(cols, minI(g.n, (tj + 1) * job.np / tn * kNR) -
                              tj * job.np / tn * kNR);
      const int64_t vecs = ceilDiv(cols, kVL);
      int64_t cost = rows * vecs + (g.packedA ? 0 : rows);
      if (tm > 1)
        cost = job.bFull
                   ? cost * 21 / 20
                   : cost + minI(cost / 4, kSplitMRowPanels * kMR * vecs) +
                         2 * ceilDiv(g.n, kVL) / threads;
      else if (!job.bFull)
        cost += vecs;
      if (best < 0 || cost < best) {
        best = cost;
        job.tm = tm;
        job.tn = tn;
      }
    }
  }
}

/// A GEMM whose B is small (at most kNextMaxN columns, kNextMaxK rows) and
/// whose A is tall (at least kNextMinRowPanels row panels a thread) splits
/// its rows, not its columns: each thread then writes whole rows of C
/// (channels, in a 1x1 convolution), which is how the depthwise/pointwise
/// pair after an expanding 1x1 convolution reads them (a half of the planes a
/// thread), so they are in its own cache. Split by columns, each thread
/// read half of its planes from the other core's cache. Every task reads
/// all of B: where it lies when it is a plain matrix whose ragged panel
/// reads in place, else packed by a first pass. A wider B (the expansions
/// at 56x56 and 112x112, 3136 or 12544 columns) stays split by columns:
/// packing all of it up front would cost those GEMMs more than the pair
/// after them gains.
constexpr int64_t kNextMaxN = 784, kNextMaxK = 160, kNextMinRowPanels = 6;
bool splitsRowsForTheNext(const GemmArgs &g, int64_t threads) {
  return threads > 1 && g.n <= kNextMaxN && g.k <= kNextMaxK &&
         ceilDiv(g.m, kMR) >= kNextMinRowPanels * threads;
}

struct SmallMJob {
  const GemmArgs *g;
  const MatrixB *b;
  const tcc_uk_epilogue_t *ep;
  int64_t chunk;
};

void runSmallM(void *ctx, int64_t begin, int64_t end) {
  const SmallMJob &job = *static_cast<const SmallMJob *>(ctx);
  const GemmArgs &g = *job.g;
  const int64_t j0 = begin * job.chunk, j1 = minI(g.n, end * job.chunk);
  smallMGemm(g.m, j1 - j0, g.k, g.a, g.ars, g.acs, job.b->b + j0, job.b->ldb,
             g.c + j0, g.ldc, g.accumulate, job.ep, j0);
}

/// All of A packed for a panelsOuter GEMM: row panels [begin, end).
struct APack {
  const GemmArgs *g;
  float *dst;
};

void packAPanels(void *ctx, int64_t begin, int64_t end) {
  const APack &pack = *static_cast<const APack *>(ctx);
  const GemmArgs &g = *pack.g;
  for (int64_t q = begin; q < end; ++q) {
    const int64_t ir = q * kMR;
    const int mr = static_cast<int>(minI(kMR, g.m - ir));
    packAPanel(g.a, g.ars, g.acs, ir, mr, 0, g.k, pack.dst + q * g.k * kMR);
  }
}

} // namespace

int64_t packedBScratchBytes(int32_t isa, int64_t k, int64_t n, bool compact) {
  const IsaTiles &t = tilesFor(isa);
  const int64_t floats =
      compact ? compactBFloats(k, n, t.nr, t.vl) : ceilDiv(n, t.nr) * t.nr * k;
  return floats * static_cast<int64_t>(sizeof(float)) + 64;
}

void runGemm(const tcc_host_api_t *host, const GemmArgs &g, void *scratch) {
  if (g.m <= 0 || g.n <= 0)
    return;
  if (g.packB == packBMatrix && !g.bPacked &&
      useSmallM(kTiles,
                (g.packedA ? TCC_UK_PACKED_A : 0) |
                    (static_cast<const MatrixB *>(g.bSrc)->trans
                         ? TCC_UK_TRANS_B
                         : 0),
                g.m)) {
    SmallMJob job = {&g, static_cast<const MatrixB *>(g.bSrc),
                     isTrivial(g.ep) ? NULL : g.ep, 0};
    // Bound by streaming B (once per 4 rows), of which a float costs about
    // what 8 multiply-adds cost in the packed kernel.
    const int64_t tasks =
        taskBudget(host, ceilDiv(g.m, 4) * g.n * maxI(g.k, 1) * 8);
    job.chunk = ceilDiv(ceilDiv(g.n, tasks), kVL) * kVL;
    parallelFor(host, ceilDiv(g.n, job.chunk), 1, runSmallM, &job);
    return;
  }
  Job job = {&g, g.bPacked, g.bPacked ? NULL : alignScratch(scratch),
             1,  1,         0,
             0,  0,         NULL,
             0,  false};
  const int64_t threads = hostThreads(host);
  if (g.packB == packBMatrix && !g.bPacked) {
    const MatrixB &mb = *static_cast<const MatrixB *>(g.bSrc);
    // Rows split for the next kernel, B is small: read where it lies, not
    // packed by a first pass that every thread would wait for.
    const bool rowsDirect =
        !mb.trans && g.n >= kNR && splitsRowsForTheNext(g, threads) &&
        (g.n % kNR == 0 || raggedDirect(TCC_UK_NATIVE_ISA, g.n % kNR));
    if (rowsDirect || readBDirect(TCC_UK_NATIVE_ISA,
                                  (mb.trans ? TCC_UK_TRANS_B : 0) |
                                      (g.alwaysDirectB ? kAlwaysDirectB : 0),
                                  g.m, g.n, g.k)) {
      job.bDirect = mb.b;
      job.ldb = mb.ldb;
      const int64_t lastJ = g.n / kNR * kNR;
      job.raggedDirect = raggedDirect(TCC_UK_NATIVE_ISA, g.n - lastJ);
      if (lastJ < g.n && !job.raggedDirect) // the ragged panel, all of k
        packBMatrix(g.bSrc, 0, g.k, lastJ, g.n - lastJ, job.bBuf, g.k * kNR);
      planTasks(host, job);
      if (rowsDirect) {
        job.tm = threads;
        job.tn = 1;
      }
      // Four tasks a thread along the split: with B read in place a task
      // repeats no packing, and a thread the VM slows down hands tasks to
      // the other. With two, a thread at two thirds of the other's speed
      // has already started its second task when the other finishes, so
      // nothing moves.
      if (job.tn > 1 && job.tm == 1)
        job.tn = minI(job.np, job.tn * kDirectTasksPerThread);
      else if (job.tm > 1 && job.tn == 1)
        job.tm = minI(job.mp, job.tm * kDirectTasksPerThread);
      parallelFor(host, job.tm * job.tn, 1, runTasks, &job);
      return;
    }
  }
  planTasks(host, job);
  if (!g.bPacked && splitsRowsForTheNext(g, threads)) {
    job.tm = threads;
    job.tn = 1;
  }
  if (job.tm > 1 && !job.bFull) {
    // Several tasks read each column of B: pack it once, up front, by
    // panels, or by rows when there are too few panels to share evenly
    // (7x7 planes, 49 columns: a panel of 48 columns and one of 1, so one
    // thread packed nearly all of it while the other waited). Not for
    // packBMatrix, whose compact last panel has narrower rows than the
    // row offsets of packRows assume.
    if (job.np < 4 * threads && g.k > 1 && g.packB != packBMatrix) {
      job.rowChunk = ceilDiv(g.k, minI(g.k, 2 * threads));
      parallelFor(host, ceilDiv(g.k, job.rowChunk), 1, packRows, &job);
    } else {
      parallelFor(host, job.np, 1, packPanels, &job);
    }
    job.bFull = job.bBuf;
  }
  parallelFor(host, job.tm * job.tn, 1, runTasks, &job);
}

} // namespace TCC_UK_ISA_NS
} // namespace uk
} // namespace tcc

using namespace tcc::uk;

extern "C" int32_t tcc_uk_isa(void) { return TCC_UK_NATIVE_ISA; }

extern "C" int64_t tcc_uk_sgemm_scratch_bytes(int32_t isa, uint32_t flags,
                                              int64_t m, int64_t n, int64_t k) {
  return gemmScratchBytes(isa, flags, m, n, k);
}

extern "C" int32_t tcc_uk_sgemm(const tcc_host_api_t *host, int64_t m,
                                int64_t n, int64_t k, const float *a,
                                int64_t lda, const float *b, int64_t ldb,
                                float *c, int64_t ldc, uint32_t flags,
                                const tcc_uk_epilogue_t *epilogue,
                                void *scratch) {
  if (m <= 0 || n <= 0)
    return 0;
  const MatrixB bSrc = {b, ldb, (flags & TCC_UK_TRANS_B) != 0};
  GemmArgs g = {};
  g.m = m;
  g.n = n;
  g.k = k < 0 ? 0 : k;
  g.a = a;
  g.packedA = (flags & TCC_UK_PACKED_A) != 0;
  g.ars = (flags & TCC_UK_TRANS_A) ? 1 : lda;
  g.acs = (flags & TCC_UK_TRANS_A) ? lda : 1;
  g.bPacked = (flags & TCC_UK_PACKED_B) ? b : NULL;
  g.bPackedCompact = true; // tcc_uk_pack_b's layout
  g.packB = packBMatrix;
  g.bSrc = &bSrc;
  g.c = c;
  g.ldc = ldc;
  g.accumulate = (flags & TCC_UK_ACCUMULATE) != 0;
  g.ep = epilogue;
  void *owned = NULL;
  const int64_t need =
      tcc_uk_sgemm_scratch_bytes(TCC_UK_NATIVE_ISA, flags, m, n, g.k);
  if (need > 0 && !scratch) {
    owned = malloc(static_cast<size_t>(need));
    if (!owned)
      return -1;
    scratch = owned;
  }
  if (panelsOuterFits(flags, m, n, g.k)) {
    APack pack = {&g, alignScratch(scratch)};
    parallelFor(host, ceilDiv(m, kMR), 1, packAPanels, &pack);
    g.a = pack.dst;
    g.packedA = true;
    g.panelsOuter = true;
  }
  runGemm(host, g, scratch);
  free(owned);
  return 0;
}
