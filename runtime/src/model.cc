// model.cc - loading an artifact and validating its descriptor.
#include "model.h"

#include "status.h"
#include "tensor.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <memory>
#include <sys/stat.h>

using tcc::makeStatus;

// Everything the runtime relies on later, so that contexts and tools can
// trust the descriptor without checking it again.
static tcc_status_t validateTensors(const std::string &origin, const char *kind,
                                    uint32_t count,
                                    const tcc_tensor_desc_t *descs) {
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
    if (tcc_status_t s =
            tcc::checkType(what, d.dtype, d.rank, d.shape, &elements, &bytes))
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
  if (tcc_status_t s =
          validateTensors(origin, "input", desc->num_inputs, desc->inputs))
    return s;
  return validateTensors(origin, "output", desc->num_outputs, desc->outputs);
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

// The project's version, from the build (runtime/CMakeLists.txt); builds
// of these sources for other purposes (the fuzzers) may leave it out.
#ifndef TCC_RUNTIME_VERSION_STRING
#define TCC_RUNTIME_VERSION_STRING "0.0.0-unversioned"
#endif

const char *tcc_runtime_version(void) { return TCC_RUNTIME_VERSION_STRING; }
