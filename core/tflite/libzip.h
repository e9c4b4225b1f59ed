// libzip, loaded when a model first needs it (dlopen): only models with
// associated files (a zip archive appended to the model) do, so the programs
// do not load libzip, and the libcrypto, libbz2 and libz it links, at every
// start (they were a fifth of the command line's start-up).
#pragma once

#include <zip.h>

#include <string>

namespace lite2onnx::tflite_reader {

struct LibZip {
  decltype(&::zip_discard) discard;
  decltype(&::zip_error_fini) error_fini;
  decltype(&::zip_error_init) error_init;
  decltype(&::zip_error_strerror) error_strerror;
  decltype(&::zip_fclose) fclose;
  decltype(&::zip_file_strerror) file_strerror;
  decltype(&::zip_fopen_index) fopen_index;
  decltype(&::zip_fread) fread;
  decltype(&::zip_get_num_entries) get_num_entries;
  decltype(&::zip_open_from_source) open_from_source;
  decltype(&::zip_source_buffer_create) source_buffer_create;
  decltype(&::zip_source_free) source_free;
  decltype(&::zip_stat_index) stat_index;
  decltype(&::zip_stat_init) stat_init;
  decltype(&::zip_strerror) strerror;
};

// The library's functions, loaded once per process (thread-safe); null when
// it cannot be loaded, and then `error` says why.
const LibZip* libzip(std::string* error);

}  // namespace lite2onnx::tflite_reader
