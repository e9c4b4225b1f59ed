#include "core/tflite/libzip.h"

#include <dlfcn.h>

#include <optional>

#ifndef LITE2ONNX_LIBZIP_SONAME
#define LITE2ONNX_LIBZIP_SONAME "libzip.so.4"
#endif

namespace lite2onnx::tflite_reader {
namespace {

// The library this program loads when it needs it, noted for
// deploy/derive-runtime-packages.sh (ldd does not see it): a runtime image
// installs its package.
[[gnu::used]] const char kDlopenNote[] = "lite2onnx-dlopen:" LITE2ONNX_LIBZIP_SONAME;

struct Loaded {
  std::optional<LibZip> functions;
  std::string error;
};

template <typename F>
bool find(void* library, const char* name, F& f, std::string& error) {
  f = reinterpret_cast<F>(dlsym(library, name));
  if (!f) error = std::string(LITE2ONNX_LIBZIP_SONAME " has no ") + name;
  return f != nullptr;
}

Loaded load() {
  Loaded out;
  // Never unloaded: the functions stay valid for the process.
  void* library = dlopen(LITE2ONNX_LIBZIP_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    out.error = why ? why : "cannot load " LITE2ONNX_LIBZIP_SONAME;
    return out;
  }
  LibZip z{};
  std::string& e = out.error;
  if (find(library, "zip_discard", z.discard, e) &&
      find(library, "zip_error_fini", z.error_fini, e) &&
      find(library, "zip_error_init", z.error_init, e) &&
      find(library, "zip_error_strerror", z.error_strerror, e) &&
      find(library, "zip_fclose", z.fclose, e) &&
      find(library, "zip_file_strerror", z.file_strerror, e) &&
      find(library, "zip_fopen_index", z.fopen_index, e) &&
      find(library, "zip_fread", z.fread, e) &&
      find(library, "zip_get_num_entries", z.get_num_entries, e) &&
      find(library, "zip_open_from_source", z.open_from_source, e) &&
      find(library, "zip_source_buffer_create", z.source_buffer_create, e) &&
      find(library, "zip_source_free", z.source_free, e) &&
      find(library, "zip_stat_index", z.stat_index, e) &&
      find(library, "zip_stat_init", z.stat_init, e) &&
      find(library, "zip_strerror", z.strerror, e))
    out.functions = z;
  return out;
}

}  // namespace

const LibZip* libzip(std::string* error) {
  static const Loaded loaded = load();
  if (!loaded.functions) {
    if (error) *error = loaded.error;
    return nullptr;
  }
  return &*loaded.functions;
}

}  // namespace lite2onnx::tflite_reader
