//===- TestBuild.cpp - builds tcc ops through TccBuilder, for lit tests ---===//
//
// `tcc-opt --tcc-test-build` replaces every `"test.build"(operands...)` op
// by the op it names, made by TccBuilder::create from those operands and
// its `attrs` dictionary (and `results` types, when given): ops built
// without result types show the types they infer, and ops that cannot be
// built show the builder's error at the test op's location.
//
//   "test.build"(%a, %b) {op = "tcc.matmul"} : (tensor<2x3xf32>,
//   tensor<3x4xf32>) -> ()
//
//===----------------------------------------------------------------------===//

#include "dialects/Tcc/IR/TccBuilder.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
struct TestBuildPass : PassWrapper<TestBuildPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestBuildPass)
  StringRef getArgument() const final { return "tcc-test-build"; }
  StringRef getDescription() const final {
    return "Build the ops that test.build ops name through TccBuilder";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<tcc::TccDialect>();
  }
  void runOnOperation() override {
    SmallVector<Operation *> specs;
    getOperation().walk([&](Operation *op) {
      if (op->getName().getStringRef() == "test.build")
        specs.push_back(op);
    });
    bool ok = true;
    for (Operation *spec : specs) {
      OpBuilder b(spec);
      tcc::TccBuilder tb(b, spec->getLoc());
      auto name = spec->getAttrOfType<StringAttr>("op");
      SmallVector<NamedAttribute> attrs;
      if (auto dict = spec->getAttrOfType<DictionaryAttr>("attrs"))
        attrs.assign(dict.begin(), dict.end());
      SmallVector<Type> results;
      if (auto types = spec->getAttrOfType<ArrayAttr>("results"))
        for (Attribute t : types)
          results.push_back(cast<TypeAttr>(t).getValue());
      if (!name || failed(tb.create(name.getValue(), spec->getOperands(), attrs,
                                    results)))
        ok = false;
      spec->erase();
    }
    if (!ok)
      signalPassFailure();
  }
};
} // namespace

namespace mlir::tcc {
void registerTestBuildPass() { PassRegistration<TestBuildPass>(); }
} // namespace mlir::tcc
