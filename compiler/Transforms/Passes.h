//===- Passes.h - tcc graph-level passes ------------------------*- C++ -*-===//

#ifndef TCC_COMPILER_TRANSFORMS_PASSES_H
#define TCC_COMPILER_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

#include "llvm/ADT/StringRef.h"

#include <vector>

namespace mlir {
class ModuleOp;
class RewritePatternSet;
namespace func {
class FuncOp;
} // namespace func
namespace tcc {

/// Marks an scf.for over the rows of a "rows" fusion group: each iteration
/// writes only its own rows of the results and uses its temporaries only
/// within itself, so tcc-parallelize-loops may give each thread its own.
inline constexpr llvm::StringLiteral kRowsLoopAttrName = "tcc.rows_loop";
/// Marks a buffer allocated inside a rows loop (tcc-mark-row-temporaries);
/// tcc-plan-memory keeps the mark on the arena view that replaces it.
inline constexpr llvm::StringLiteral kRowTemporaryAttrName =
    "tcc.row_temporary";

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

/// Replaces `ops` (of one block, in any order) by a tcc.fused op of `kind`
/// at `root`'s position, whose results are root's, then those of
/// `moreRoots` (members after root that use only the group's values): the
/// ops cloned into its body in block order, every value they use from
/// outside a group input. Each op's uses must lie inside the group, the
/// roots' excepted (tcc-fuse, tcc-fuse-attention).
Operation *outlineFusedGroup(ArrayRef<Operation *> ops, Operation *root,
                             StringRef kind,
                             ArrayRef<Operation *> moreRoots = {});

/// The functions of the graph an artifact exports: @main, or the slabs of a
/// dynamic batch that tcc-specialize-batch makes (@main_chunk<rows>,
/// largest first).
std::vector<func::FuncOp> graphFunctions(ModuleOp module);

/// The module attribute describing a dynamic dimension (`tcc.batch`,
/// `tcc.padded`): its name, bounds, the sizes compiled (under `sizesKey`)
/// and what the inputs and outputs hold of it.
DictionaryAttr dynamicDimAttr(Builder &b, StringRef name, int64_t lo,
                              int64_t hi, StringRef sizesKey,
                              ArrayRef<int64_t> sizes, ArrayAttr inputs,
                              ArrayAttr outputs);

/// Whether tcc-specialize-batch can run `main`'s dynamic dimension as slabs
/// (one dynamic leading dimension whose rows no op mixes); reports nothing.
bool batchRunsAsSlabs(func::FuncOp main);

/// Patterns that expand composite ops (softmax, log_softmax, layer_norm,
/// batch_norm) into elementwise ops and reductions.
void populateTccDecompositionPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

} // namespace tcc
} // namespace mlir

#endif // TCC_COMPILER_TRANSFORMS_PASSES_H
