// The CLI's output file, written in pieces (core/output_buffer.h
// OutputStream): a converted model never needs a buffer of its size. Opened
// on the first write, so a conversion that fails never touches it. A regular
// file (or a new one) is written as a temporary file beside it and renamed
// into place by commit(): no reader ever sees half a model, and a failure
// (a full disk) leaves what was there. A symbolic link is written through
// (the file it names is replaced). Standard output ("-") and files that are
// not regular (a pipe, a device) are written directly.
#pragma once

#include <span>
#include <string>

#include "core/output_buffer.h"

namespace lite2onnx {

class OutputFile : public OutputStream {
 public:
  explicit OutputFile(std::string path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // An uncommitted temporary file is removed.
  ~OutputFile() override;

  bool write(std::span<const std::byte> bytes) override;
  // Written through a temporary file: bytes written can be written again.
  bool positional() const override { return positional_; }
  bool write_at(size_t offset, std::span<const std::byte> bytes) override;
  // Closes the file and renames it into place (opening it first if nothing
  // was written); false with error() set.
  bool commit();
  // Why a write or commit() failed: "cannot write 'PATH': why".
  const std::string& error() const { return error_; }

 private:
  bool open();
  bool fail(const std::string& why);

  std::string path_;    // as given
  std::string target_;  // the file replaced: path_, or the file its symbolic link names
  std::string temp_;    // the temporary file, until renamed
  std::string error_;
  int fd_ = -1;
  bool opened_ = false, positional_ = false;
};

}  // namespace lite2onnx
