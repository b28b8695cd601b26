// model.cc - loading an artifact and validating its descriptor.
#include "model.h"

#include "huge_pages.h"
#include "status.h"
#include "tensor.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <memory>
#include <sys/stat.h>

#if defined(__linux__)
#include <link.h>
#include <sys/mman.h>
#endif

using tcc::makeStatus;

// Everything the runtime relies on later, so that contexts and tools can
// trust the descriptor without checking it again.
static tcc_status_t validateTensors(const std::string &origin, const char *kind,
                                    uint32_t count,
                                    const tcc_tensor_desc_t *descs,
                                    uint32_t numSymbols) {
  if (count && !descs)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "%s: the descriptor lists %u %ss but no array of them",
                      origin.c_str(), count, kind);
  for (uint32_t i = 0; i < count; ++i) {
    const tcc_tensor_desc_t &d = descs[i];
    if (!d.name)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "%s: %s %u has no name",
                        origin.c_str(), kind, i);
    int64_t elements;
    size_t bytes;
    std::string what =
        origin + ": " + kind + " " + std::to_string(i) + " '" + d.name + "'";
    // A symbolic dimension (-1 with a symbol) is checked at size 1 here;
    // each run checks its actual size.
    std::vector<int64_t> shape;
    for (int32_t k = 0; d.shape && k < d.rank; ++k) {
      bool symbolic = d.shape[k] == -1 && d.symbols && d.symbols[k] >= 0;
      if (symbolic && uint32_t(d.symbols[k]) >= numSymbols)
        return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                          "%s: dimension %d names symbol %d of %u",
                          what.c_str(), k, d.symbols[k], numSymbols);
      if (!symbolic && d.symbols && d.symbols[k] != -1)
        return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                          "%s: dimension %d is fixed but names a symbol",
                          what.c_str(), k);
      shape.push_back(symbolic ? 1 : d.shape[k]);
    }
    if (tcc_status_t s =
            tcc::checkType(what, d.dtype, d.rank,
                           d.shape ? shape.data() : nullptr, &elements, &bytes))
      return s;
  }
  return nullptr;
}

static tcc_status_t validateDesc(const std::string &origin,
                                 const tcc_artifact_desc_t *desc) {
  if (!desc)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "%s: tcc_artifact_get returned NULL", origin.c_str());
  if (desc->abi_version != TCC_ABI_VERSION)
    return makeStatus(TCC_STATUS_FAILED_PRECONDITION,
                      "%s: artifact uses tcc ABI version %u, this runtime "
                      "implements version %u; recompile the model with a "
                      "matching tcc",
                      origin.c_str(), desc->abi_version, TCC_ABI_VERSION);
  if (!desc->run)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "%s: the descriptor has no run function", origin.c_str());
  uint64_t align = desc->workspace_align;
  if (align & (align - 1))
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "%s: workspace_align %llu is not a power of two",
                      origin.c_str(), static_cast<unsigned long long>(align));
  if (desc->num_symbols && !desc->symbols)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "%s: the descriptor lists %u symbols but no array of "
                      "them",
                      origin.c_str(), desc->num_symbols);
  for (uint32_t i = 0; i < desc->num_symbols; ++i) {
    const tcc_symbol_desc_t &sym = desc->symbols[i];
    if (!sym.name || sym.min < 0 || sym.min > sym.max)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: symbol %u has no name or bounds %lld..%lld",
                        origin.c_str(), i, static_cast<long long>(sym.min),
                        static_cast<long long>(sym.max));
    if (sym.flags & ~TCC_SYMBOL_COMPUTED)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: symbol %u has unknown flags %d", origin.c_str(), i,
                        sym.flags);
  }
  // A computed size is the run's to give: no input may have it.
  for (uint32_t i = 0; i < desc->num_inputs && desc->inputs; ++i) {
    const tcc_tensor_desc_t &t = desc->inputs[i];
    for (int32_t k = 0; t.shape && k < t.rank; ++k)
      if (tcc::sizedByRun(*desc, t, k))
        return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                          "%s: input %u has the computed size %s",
                          origin.c_str(), i, desc->symbols[t.symbols[k]].name);
  }
  if (const tcc_cuda_image_t *cuda = desc->cuda) {
    if (!cuda->arch || !cuda->ptx || !cuda->upload_weights ||
        (cuda->num_kernels && !cuda->kernel_names))
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: its CUDA image lacks its architecture, PTX, "
                        "kernel names or weight upload",
                        origin.c_str());
    if (desc->num_symbols)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: a CUDA artifact with symbolic dimensions",
                        origin.c_str());
  }
  if (tcc_status_t s = validateTensors(origin, "input", desc->num_inputs,
                                       desc->inputs, desc->num_symbols))
    return s;
  return validateTensors(origin, "output", desc->num_outputs, desc->outputs,
                         desc->num_symbols);
}

/// Checks that `path` is a whole x86-64 ELF shared object before dlopen
/// maps it: the loader maps segments past the end of a truncated file, and
/// touching them raises SIGBUS instead of an error.
static tcc_status_t checkElf(const char *path, uint64_t size) {
  std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(path, "rb"), std::fclose);
  if (!f)
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "cannot open artifact '%s': %s", path,
                      std::strerror(errno));
  auto refuse = [&](const char *why) {
    return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                      "cannot load artifact '%s': %s", path, why);
  };
  Elf64_Ehdr eh;
  if (std::fread(&eh, sizeof eh, 1, f.get()) != 1 ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return refuse("not an ELF shared library");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
    return refuse("built for another machine (an x86-64 ELF is needed)");
  if (eh.e_type != ET_DYN)
    return refuse("not a shared library");
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff >= size ||
      eh.e_phnum > (size - eh.e_phoff) / sizeof(Elf64_Phdr))
    return refuse("its program headers lie outside the file (truncated?)");
  if (std::fseek(f.get(), static_cast<long>(eh.e_phoff), SEEK_SET) != 0)
    return refuse("cannot read its program headers");
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (std::fread(&ph, sizeof ph, 1, f.get()) != 1)
      return refuse("cannot read its program headers");
    if (ph.p_type == PT_LOAD &&
        (ph.p_offset > size || ph.p_filesz > size - ph.p_offset))
      return refuse("a segment lies past the end of the file (truncated?)");
  }
  if (eh.e_shoff > size ||
      uint64_t(eh.e_shnum) * eh.e_shentsize > size - eh.e_shoff)
    return refuse("its section headers lie outside the file (truncated?)");
  return nullptr;
}

namespace {
#if defined(__linux__)
using tcc::kHugePage;
/// Read-only segments of at least this much (a model's weights) move onto
/// anonymous huge pages at load (placeWeightsOnHugePages), this much at a
/// time.
constexpr uintptr_t kMinWeightBytes = 2 * kHugePage;
constexpr uintptr_t kMoveChunk = 16 * kHugePage;

/// Copies [start, start + len) (whole huge pages, read-only) onto memory
/// from mapHugePages, then moves that memory over it (mremap,
/// MREMAP_FIXED): the same addresses and bytes, now in 2 MiB pages whatever
/// pages the page cache holds the file in. Leaves the range as it was on
/// any failure.
bool moveOntoHugePages(uintptr_t start, size_t len) {
  void *copy = tcc::mapHugePages(len);
  if (!copy)
    return false;
  std::memcpy(copy, reinterpret_cast<const void *>(start), len);
  if (mprotect(copy, len, PROT_READ) != 0 ||
      mremap(copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
             reinterpret_cast<void *>(start)) == MAP_FAILED) {
    munmap(copy, len);
    return false;
  }
  return true;
}

/// dl_iterate_phdr's callback: the read-only PT_LOAD segments of the
/// object loaded at *base, their whole huge pages moved.
int moveReadOnlySegments(struct dl_phdr_info *info, size_t, void *base) {
  if (info->dlpi_addr != *static_cast<ElfW(Addr) *>(base))
    return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || ph.p_flags != PF_R)
      continue;
    const uintptr_t from = info->dlpi_addr + ph.p_vaddr;
    const uintptr_t start = (from + kHugePage - 1) / kHugePage * kHugePage;
    const uintptr_t end = (from + ph.p_filesz) / kHugePage * kHugePage;
    // A chunk at a time, so that the copy adds at most a chunk to the
    // process's memory while it loads (the file's pages each chunk
    // replaces leave the mapping as it goes).
    if (end > start && end - start >= kMinWeightBytes)
      for (uintptr_t at = start; at < end; at += kMoveChunk)
        if (!moveOntoHugePages(at, std::min<uintptr_t>(kMoveChunk, end - at)))
          break;
  }
  return 1;
}

/// Whether the kernel backs memory that asks for it (MADV_HUGEPAGE) with
/// transparent huge pages: its mode is "always" or "madvise", not "never"
/// (and it has the setting at all). Elsewhere a copy would gain nothing.
bool transparentHugePages() {
  std::unique_ptr<FILE, int (*)(FILE *)> f(
      std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r"),
      std::fclose);
  char line[128] = {};
  return f && std::fgets(line, sizeof line, f.get()) &&
         !std::strstr(line, "[never]");
}

#endif

/// A compiled model's weights are its read-only data, mapped from the
/// file, 2 MiB aligned (tcc links large artifacts so); the kernel backs
/// them with huge pages only where the page cache holds the file in large
/// folios, which depends on how the file was written and read (a copied
/// artifact: none). Weights streamed from memory every run take a TLB miss
/// a 4 KiB page (in a VM, a walk of two page tables): a vision
/// transformer's 330 MiB of weights all on huge pages ran 1.029x faster than
/// a fresh copy of its file (docs/runtime.md). So a loaded artifact's read-only
/// segments of 4 MiB or more are copied onto anonymous huge pages at the
/// same addresses. TCC_WEIGHT_PAGES=file keeps the file's pages (no copy,
/// and the page cache's pages are shared between processes).
void placeWeightsOnHugePages(void *library) {
#if defined(__linux__)
  const char *mode = std::getenv("TCC_WEIGHT_PAGES");
  if ((mode && std::strcmp(mode, "file") == 0) || !transparentHugePages())
    return;
  struct link_map *map = nullptr;
  if (dlinfo(library, RTLD_DI_LINKMAP, &map) != 0 || !map)
    return;
  ElfW(Addr) base = map->l_addr;
  dl_iterate_phdr(moveReadOnlySegments, &base);
#else
  (void)library;
#endif
}
} // namespace

static void closeLibrary(void *library) {
  if (library)
    dlclose(library);
}

tcc_status_t tcc_model_load(const char *path, tcc_model_t **out_model) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!path || !out_model)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_model_load: path and out_model must not be NULL");
    struct stat st;
    if (stat(path, &st) != 0)
      return makeStatus(
          errno == ENOENT || errno == ENOTDIR ? TCC_STATUS_NOT_FOUND
                                              : TCC_STATUS_INVALID_ARGUMENT,
          "cannot open artifact '%s': %s", path, std::strerror(errno));
    if (!S_ISREG(st.st_mode))
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "cannot load artifact '%s': not a regular file", path);
    if (tcc_status_t s = checkElf(path, static_cast<uint64_t>(st.st_size)))
      return s;
    // A name without a slash would make dlopen search the library path
    // instead of opening the file the user named.
    std::string file = std::strchr(path, '/') ? path : std::string("./") + path;
    std::unique_ptr<void, void (*)(void *)> library(
        dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL), closeLibrary);
    if (!library)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "cannot load artifact '%s': %s", path, dlerror());
    placeWeightsOnHugePages(library.get());
    auto get = reinterpret_cast<tcc_artifact_get_fn_t>(
        dlsym(library.get(), "tcc_artifact_get"));
    if (!get)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "'%s' does not export tcc_artifact_get: it is not a "
                        "tcc artifact",
                        path);
    const tcc_artifact_desc_t *desc = get();
    if (tcc_status_t s = validateDesc(path, desc))
      return s;
    auto *model = new tcc_model_t;
    model->desc = desc;
    model->origin = path;
    model->library = library.release();
    *out_model = model;
    return nullptr;
  });
}

tcc_status_t tcc_model_wrap(const tcc_artifact_desc_t *desc,
                            tcc_model_t **out_model) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!out_model)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_model_wrap: out_model must not be NULL");
    std::string origin = "linked artifact";
    if (desc && desc->model_name)
      origin += std::string(" '") + desc->model_name + "'";
    if (tcc_status_t s = validateDesc(origin, desc))
      return s;
    auto *model = new tcc_model_t;
    model->desc = desc;
    model->origin = std::move(origin);
    *out_model = model;
    return nullptr;
  });
}

void tcc::retainModel(tcc_model_t *model) {
  model->refs.fetch_add(1, std::memory_order_relaxed);
}

void tcc::releaseModel(tcc_model_t *model) {
  if (model->refs.fetch_sub(1, std::memory_order_acq_rel) != 1)
    return;
  closeLibrary(model->library);
  delete model;
}

void tcc_model_free(tcc_model_t *model) {
  if (model)
    tcc::releaseModel(model);
}

// Accessors tolerate NULL (see runtime.h).

const tcc_artifact_desc_t *tcc_model_desc(const tcc_model_t *model) {
  return model ? model->desc : nullptr;
}

uint32_t tcc_model_num_inputs(const tcc_model_t *model) {
  return model ? model->desc->num_inputs : 0;
}

uint32_t tcc_model_num_outputs(const tcc_model_t *model) {
  return model ? model->desc->num_outputs : 0;
}

const tcc_tensor_desc_t *tcc_model_input(const tcc_model_t *model,
                                         uint32_t index) {
  return model && index < model->desc->num_inputs ? &model->desc->inputs[index]
                                                  : nullptr;
}

const tcc_tensor_desc_t *tcc_model_output(const tcc_model_t *model,
                                          uint32_t index) {
  return model && index < model->desc->num_outputs
             ? &model->desc->outputs[index]
             : nullptr;
}

static const char *orEmpty(const char *s) { return s ? s : ""; }

const char *tcc_model_name(const tcc_model_t *model) {
  return model ? orEmpty(model->desc->model_name) : "";
}

const char *tcc_model_target(const tcc_model_t *model) {
  return model ? orEmpty(model->desc->target) : "";
}

const char *tcc_model_version(const tcc_model_t *model) {
  return model ? orEmpty(model->desc->tcc_version) : "";
}

uint64_t tcc_model_workspace_bytes(const tcc_model_t *model) {
  return model ? model->desc->workspace_bytes : 0;
}

uint32_t tcc_model_num_symbols(const tcc_model_t *model) {
  return model ? model->desc->num_symbols : 0;
}

const tcc_symbol_desc_t *tcc_model_symbol(const tcc_model_t *model,
                                          uint32_t index) {
  return model && index < model->desc->num_symbols
             ? &model->desc->symbols[index]
             : nullptr;
}

tcc_status_t tcc::bindSymbols(const tcc_model_t *model,
                              const std::vector<ShapeRef> &inputs,
                              int64_t *values) {
  const tcc_artifact_desc_t *desc = model->desc;
  const char *origin = model->origin.c_str();
  std::vector<int64_t> from(desc->num_symbols, -1); // input giving it
  for (uint32_t i = 0; i < desc->num_inputs && i < inputs.size(); ++i) {
    const tcc_tensor_desc_t &d = desc->inputs[i];
    const ShapeRef &got = inputs[i];
    bool fits = got.rank == d.rank;
    for (int32_t k = 0; fits && k < d.rank; ++k)
      fits = d.shape[k] == -1 || got.shape[k] == d.shape[k];
    if (!fits)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: input %u '%s' expects %s, got %s", origin, i,
                        d.name, describeDesc(*desc, d).c_str(),
                        describeType(got.dtype, got.rank, got.shape).c_str());
    for (int32_t k = 0; k < d.rank; ++k) {
      if (d.shape[k] != -1)
        continue;
      int32_t sym = d.symbols[k];
      const tcc_symbol_desc_t &s = desc->symbols[sym];
      int64_t n = got.shape[k];
      if (from[sym] >= 0 && values[sym] != n)
        return makeStatus(
            TCC_STATUS_INVALID_ARGUMENT,
            "%s: input %u '%s' has %s = %lld (dimension %d), input %lld '%s' "
            "has %s = %lld: the same symbol must have one size",
            origin, i, d.name, s.name, static_cast<long long>(n), k,
            static_cast<long long>(from[sym]), desc->inputs[from[sym]].name,
            s.name, static_cast<long long>(values[sym]));
      if (n < s.min || n > s.max)
        return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                          "%s: input %u '%s' has %s = %lld (dimension %d), "
                          "outside the compiled bounds %lld..%lld",
                          origin, i, d.name, s.name, static_cast<long long>(n),
                          k, static_cast<long long>(s.min),
                          static_cast<long long>(s.max));
      values[sym] = n;
      from[sym] = i;
    }
  }
  for (uint32_t sym = 0; sym < desc->num_symbols; ++sym) {
    // A size the run computes: outputs are sized for its bound until the
    // run writes it.
    if (desc->symbols[sym].flags & TCC_SYMBOL_COMPUTED)
      values[sym] = desc->symbols[sym].max;
    else if (from[sym] < 0)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: no input gives the size of %s", origin,
                        desc->symbols[sym].name);
  }
  return nullptr;
}

bool tcc::sizedByRun(const tcc_artifact_desc_t &desc,
                     const tcc_tensor_desc_t &d, int32_t k) {
  if (k < 0) {
    for (int32_t i = 0; i < d.rank; ++i)
      if (sizedByRun(desc, d, i))
        return true;
    return false;
  }
  int32_t sym = d.symbols ? d.symbols[k] : -1;
  return d.shape[k] == -1 && sym >= 0 && uint32_t(sym) < desc.num_symbols &&
         (desc.symbols[sym].flags & TCC_SYMBOL_COMPUTED);
}

std::vector<int64_t> tcc::concreteShape(const tcc_tensor_desc_t &d,
                                        const int64_t *values) {
  std::vector<int64_t> shape(d.shape, d.shape + d.rank);
  for (int32_t k = 0; k < d.rank; ++k)
    if (shape[k] == -1)
      shape[k] = values[d.symbols[k]];
  return shape;
}

std::string tcc::describeDesc(const tcc_artifact_desc_t &desc,
                              const tcc_tensor_desc_t &d) {
  std::string s = std::string(tcc_dtype_name(d.dtype)) + "[";
  for (int32_t k = 0; k < d.rank; ++k) {
    s += k ? "x" : "";
    s += d.shape[k] == -1 ? desc.symbols[d.symbols[k]].name
                          : std::to_string(d.shape[k]);
  }
  return s + "]";
}

tcc_status_t tcc_model_bind_inputs(const tcc_model_t *model,
                                   const tcc_tensor_t *const *inputs,
                                   size_t num_inputs, int64_t *values) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!model || (num_inputs && !inputs) ||
        (model->desc->num_symbols && !values))
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_model_bind_inputs: NULL argument");
    if (num_inputs != model->desc->num_inputs)
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "%s: expects %u inputs, got %zu", model->origin.c_str(),
                        model->desc->num_inputs, num_inputs);
    std::vector<tcc::ShapeRef> shapes;
    for (size_t i = 0; i < num_inputs; ++i) {
      if (!inputs[i])
        return makeStatus(TCC_STATUS_INVALID_ARGUMENT, "%s: input %zu is NULL",
                          model->origin.c_str(), i);
      shapes.push_back({inputs[i]->dtype,
                        static_cast<int32_t>(inputs[i]->shape.size()),
                        inputs[i]->shape.data()});
    }
    return tcc::bindSymbols(model, shapes, values);
  });
}

tcc_status_t tcc_model_output_shape(const tcc_model_t *model, uint32_t index,
                                    const int64_t *values, int64_t *shape) {
  return tcc::guard([&]() -> tcc_status_t {
    if (!model || index >= model->desc->num_outputs ||
        (model->desc->num_symbols && !values) ||
        (model->desc->outputs[index].rank && !shape))
      return makeStatus(TCC_STATUS_INVALID_ARGUMENT,
                        "tcc_model_output_shape: NULL argument or output "
                        "index out of range");
    std::vector<int64_t> dims =
        tcc::concreteShape(model->desc->outputs[index], values);
    std::copy(dims.begin(), dims.end(), shape);
    return nullptr;
  });
}

// The project's version, from the build (runtime/CMakeLists.txt); builds
// of these sources for other purposes (the fuzzers) may leave it out.
#ifndef TCC_RUNTIME_VERSION_STRING
#define TCC_RUNTIME_VERSION_STRING "0.0.0-unversioned"
#endif

const char *tcc_runtime_version(void) { return TCC_RUNTIME_VERSION_STRING; }
