// tensor_fuzzer.cc - libFuzzer target: the runtime's tensor-file loader.
//
// Each input is written as a .pb file, a .npy file and a file without an
// extension (the format then comes from the magic) and loaded through the
// public API, as tcc-run loads its inputs. A tensor that loads must be
// consistent, and survive a save and a load unchanged.
#include "tcc/runtime.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdlib.h>
#include <string>
#include <unistd.h>

static const std::string &folder() {
  static const std::string dir = [] {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/tcc-fuzz-tensor-XXXXXX";
    if (!mkdtemp(pattern.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    return pattern;
  }();
  return dir;
}

static void writeFile(const std::string &path, const uint8_t *data,
                      size_t size) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0)
    std::abort();
}

static void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "tensor_fuzzer: %s\n", what);
    std::abort();
  }
}

static void loadAndCheck(const std::string &path) {
  tcc_tensor_load_options_t options{};
  options.max_file_bytes = 1 << 20;
  tcc_tensor_t *t = nullptr;
  tcc_status_t s =
      tcc_tensor_load_file_with_options(path.c_str(), &options, &t);
  if (s) {
    check(!t, "a failed load returned a tensor");
    check(tcc_status_code(s) != TCC_STATUS_OK && *tcc_status_message(s),
          "a failure without a code or message");
    tcc_status_free(s);
    return;
  }
  int64_t count = 1;
  for (int32_t i = 0; i < tcc_tensor_rank(t); ++i)
    count *= tcc_tensor_shape(t)[i];
  check(count == tcc_tensor_element_count(t), "element count");
  check(tcc_tensor_byte_size(t) ==
            static_cast<size_t>(count) * tcc_dtype_size(tcc_tensor_dtype(t)),
        "byte size");
  // What loads must round-trip through the .pb writer.
  std::string copy = folder() + "/copy.pb";
  check(!tcc_tensor_save_file(t, copy.c_str()), "saving a loaded tensor");
  tcc_tensor_t *u = nullptr;
  check(!tcc_tensor_load_file(copy.c_str(), &u), "loading a saved tensor");
  check(tcc_tensor_dtype(u) == tcc_tensor_dtype(t) &&
            tcc_tensor_rank(u) == tcc_tensor_rank(t) &&
            tcc_tensor_byte_size(u) == tcc_tensor_byte_size(t) &&
            std::memcmp(tcc_tensor_data(u), tcc_tensor_data(t),
                        tcc_tensor_byte_size(t)) == 0,
        "a saved tensor reads back different");
  tcc_tensor_free(u);
  tcc_tensor_free(t);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (const char *name : {"/t.pb", "/t.npy", "/t"}) {
    std::string path = folder() + name;
    writeFile(path, data, size);
    loadAndCheck(path);
  }
  return 0;
}
