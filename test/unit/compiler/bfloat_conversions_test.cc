// The f32/f64 -> bfloat conversions an artifact carries for CPUs without
// AVX512-BF16: a module that narrows to bfloat is compiled for x86-64-v3
// (where LLVM's back end calls __truncsfbf2 / __truncdfbf2), linked into a
// shared library and loaded. The library must need no compiler runtime, keep
// the helpers to itself, and round like an independent reference: round to
// nearest, ties to even, NaNs quiet, overflow to infinity.

#include "compiler/Target/LLVMCodegen.h"
#include "compiler/Target/Link.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <random>
#include <string>

namespace {

constexpr const char *kNarrowing = R"(
define i16 @f32_to_bf16(float %x) {
  %t = fptrunc float %x to bfloat
  %b = bitcast bfloat %t to i16
  ret i16 %b
}
define i16 @f64_to_bf16(double %x) {
  %t = fptrunc double %x to bfloat
  %b = bitcast bfloat %t to i16
  ret i16 %b
}
)";

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint32_t floatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

double bf16ToDouble(uint16_t half) { return bitsToFloat(uint32_t(half) << 16); }

/// The bfloat nearest `x` (ties to the even one), found by comparing the two
/// neighbours in double arithmetic rather than by bit tricks.
uint16_t referenceRound(double x) {
  if (std::isnan(x))
    return 0x7fc0;
  if (std::isinf(x))
    return x > 0 ? 0x7f80 : 0xff80;
  bool negative = std::signbit(x);
  double magnitude = std::fabs(x);
  if (magnitude >= std::ldexp(1.0, 128))
    return negative ? 0xff80 : 0x7f80;
  // The largest bfloat not above |x|: walk down from f32's nearest.
  float f = static_cast<float>(magnitude);
  if (double(f) > magnitude)
    f = std::nextafter(f, 0.0f);
  uint16_t below = floatToBits(f) >> 16;
  if (bf16ToDouble(below) > magnitude)
    --below;
  // Past the largest finite bfloat, IEEE rounding acts as if the exponent
  // range went on: the next value up is 2^128, which becomes infinity.
  uint16_t above = below + 1;
  double aboveValue =
      below == 0x7f7f ? std::ldexp(1.0, 128) : bf16ToDouble(above);
  double down = magnitude - bf16ToDouble(below);
  double up = aboveValue - magnitude;
  uint16_t pick = down < up     ? below
                  : up < down   ? above
                  : (below & 1) ? above
                                : below;
  return pick | (negative ? 0x8000 : 0);
}

class BFloatConversions : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> module =
        llvm::parseAssemblyString(kNarrowing, diagnostic, context);
    ASSERT_TRUE(module) << diagnostic.getMessage().str();
    std::string error;
    auto machine = mlir::tcc::createCpuTargetMachine("x86-64-v3", 2, error);
    ASSERT_TRUE(machine) << error;
    module->setTargetTriple(machine->getTargetTriple().str());
    module->setDataLayout(machine->createDataLayout());
    mlir::tcc::addBFloatConversions(*module);

    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tcc-bf16", dir));
    directory = dir.str().str();
    std::string object = directory + "/m.o";
    library = directory + "/m.so";
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(object, ec);
      ASSERT_FALSE(ec) << ec.message();
      ASSERT_TRUE(mlir::succeeded(mlir::tcc::emitMachineCode(
          *module, *machine, os, /*assembly=*/false, error)))
          << error;
    }
    ASSERT_TRUE(
        mlir::succeeded(mlir::tcc::linkSharedLibrary({object}, library, error)))
        << error;
    handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    fromFloat =
        reinterpret_cast<uint16_t (*)(float)>(dlsym(handle, "f32_to_bf16"));
    fromDouble =
        reinterpret_cast<uint16_t (*)(double)>(dlsym(handle, "f64_to_bf16"));
    ASSERT_NE(fromFloat, nullptr);
    ASSERT_NE(fromDouble, nullptr);
  }

  void TearDown() override {
    if (handle)
      dlclose(handle);
    llvm::sys::fs::remove_directories(directory);
  }

  llvm::LLVMContext context;
  std::string directory, library;
  void *handle = nullptr;
  uint16_t (*fromFloat)(float) = nullptr;
  uint16_t (*fromDouble)(double) = nullptr;
};

TEST_F(BFloatConversions, LibraryNeedsNoRuntimeAndKeepsTheHelpers) {
  // Loading with RTLD_NOW already proved every symbol resolves; the helpers
  // must not be exported either, or two artifacts would share one.
  EXPECT_EQ(dlsym(handle, "__truncsfbf2"), nullptr);
  EXPECT_EQ(dlsym(handle, "__truncdfbf2"), nullptr);
}

TEST_F(BFloatConversions, FloatRoundsToNearestEven) {
  std::vector<uint32_t> patterns = {
      0x00000000, 0x80000000, 0x3f800000, 0x3f808000, 0x3f818000,
      0x3f807fff, 0x3f808001, 0x00000001, 0x00008000, 0x00018000,
      0x007fffff, 0x7f7fffff, 0x7f7f7fff, 0x7f7f8000, 0xff7f8000,
      0x7f800000, 0xff800000, 0x7f800001, 0xffc00000, 0x7fffffff};
  std::mt19937 random(7);
  for (int i = 0; i < 200000; ++i)
    patterns.push_back(random());
  for (uint32_t bits : patterns) {
    float x = bitsToFloat(bits);
    uint16_t got = fromFloat(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(bf16ToDouble(got))) << std::hex << bits;
      EXPECT_EQ(got & 0x0040, 0x0040) << "NaN not quiet: " << std::hex << bits;
      EXPECT_EQ(got & 0x8000, (bits >> 16) & 0x8000) << std::hex << bits;
      continue;
    }
    EXPECT_EQ(got, referenceRound(x)) << std::hex << "f32 bits " << bits;
  }
}

TEST_F(BFloatConversions, DoubleRoundsOnceNotTwice) {
  // Values just past a bfloat halfway point in f64 that f32 would round onto
  // the halfway point: rounding through f32 twice gives the even neighbour,
  // once gives the right one.
  std::vector<double> values = {
      1.0,
      -2.5,
      1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40),
      1.0 + std::ldexp(1.0, -8) - std::ldexp(1.0, -40),
      -(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)),
      1e300,
      -1e300,
      1e-300,
      std::ldexp(1.0, 128) - std::ldexp(1.0, 119),
      std::ldexp(1.0, 128) - std::ldexp(1.0, 119) - std::ldexp(1.0, 90),
      std::numeric_limits<double>::infinity(),
      std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> exponent(-140, 140);
  for (int i = 0; i < 100000; ++i) {
    double x = std::ldexp(1.0 + double(random() >> 11) / double(1ull << 53),
                          int(exponent(random)));
    values.push_back(random() & 1 ? -x : x);
  }
  for (double x : values) {
    uint16_t got = fromDouble(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(bf16ToDouble(got)));
      continue;
    }
    EXPECT_EQ(got, referenceRound(x)) << "f64 " << x;
  }
}

} // namespace
