// Where a worker (lite2onnx-worker) writes a job's answer: the ONNX model,
// then the diagnostics (or the inspection), then the error, in that order
// (server/worker_protocol.h AnswerFrame). A small answer goes into the output
// memfd the worker keeps from job to job, mapped (no fresh pages per call); an
// answer that outgrows kReuseBytes moves to a fresh memfd written with
// write(2) and never mapped, which goes to the server with the answer (handed
// over: the server seals it against writes and sends from it). The core
// streams the model into it (core/output_buffer.h OutputStream): constants
// stored as TFLite has them go from the input memfd's mapping to the answer's
// memfd without a copy here, so the worker never holds a large answer in its
// own memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/output_buffer.h"
#include "server/worker_protocol.h"

namespace lite2onnx::worker {

// The memfds a worker keeps from job to job.
struct Buffers {
  UniqueFd input;  // read-only; the server writes it
  Mapping input_map;
  UniqueFd output;           // ours, reused; the server maps it read-only
  Mapping output_map;        // writable
  bool output_sent = false;  // the server has `output`'s descriptor
};

// Readies `b.output` for a job: the last one, or a new one when there is none
// or the last outgrew kReuseBytes (the server gets it with the first answer
// written into it).
bool start_output(Buffers& b);

class AnswerWriter final : public OutputStream {
 public:
  explicit AnswerWriter(Buffers& b) : b_(b) {}
  bool write(std::span<const std::byte> bytes) override;
  bool write(const std::string& s) { return write(std::as_bytes(std::span(s))); }
  // Forgets what was written (a conversion that failed while writing).
  void reset();
  uint64_t size() const { return size_; }
  // The fresh memfd holding a large answer (-1: the answer is in `b.output`).
  int handed_over() const { return large_.get(); }

 private:
  bool write_large(std::span<const std::byte> bytes);

  Buffers& b_;
  UniqueFd large_;
  uint64_t size_ = 0;
};

}  // namespace lite2onnx::worker
