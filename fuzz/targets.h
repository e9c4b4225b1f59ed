// The fuzz targets' bodies, shared by the libFuzzer entry points (fuzz/*_fuzzer.cc)
// and the unit test that replays the committed regression inputs
// (tests/unit/fuzz_regressions_test.cc). Each returns normally or aborts with
// a message on stderr when the converter breaks its contract: every input
// ends in a value (a result or an Error with a message), never a crash.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace lite2onnx::fuzz {

// tflite_reader::read on raw bytes.
void read_target(std::span<const uint8_t> data);
// convert(): options from the first bytes, the rest is the model.
void convert_target(std::span<const uint8_t> data);
// inspect() on raw bytes.
void inspect_target(std::span<const uint8_t> data);
// A model made by the structure-aware generator, converted under several
// option sets and inspected.
void graph_target(std::span<const uint8_t> data);

// The TFLite Metadata reader (core/tflite/metadata.h): the TFLITE_METADATA
// FlatBuffer and the zip archive of associated files. A TFLite model (its
// identifier at bytes 4..8) is read as the pipeline reads it; any other input
// starts with [offset][size] (uint32, little-endian) of its metadata buffer
// and is itself the model whose end holds the archive. Checks the bounds:
// tensor entries, file count, sanitized unique names, embedded bytes.
void metadata_target(std::span<const uint8_t> data);

// The custom-op options readers (core/ops/custom_options.h): the input is a
// custom code, a 0 byte, then the Operator.custom_options bytes, read through
// that code's entry in the custom-op table (an unknown code: the first entry).
void custom_options_target(std::span<const uint8_t> data);

// The target of a regression directory name ("read", "convert", "inspect",
// "graph", "metadata", "custom_options"); nullptr for an unknown one.
using Target = void (*)(std::span<const uint8_t>);
Target target_named(const std::string& name);

}  // namespace lite2onnx::fuzz
