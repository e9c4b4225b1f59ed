// lite2onnx-worker: converts the models of one lite2onnx-server worker thread
// in a process of its own, so that a hostile model can crash, exhaust or hang
// only this process. The server starts it (posix_spawn) with the control
// socket at descriptor 3 and replaces it when it fails (server/worker_process.cc).
//
//   lite2onnx-worker --parent-pid PID [--memory-limit BYTES] [--test-faults]
//
// Setup, then the loop: read a job, convert, write the answer, repeat.
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "common/translate.h"
#include "core/convert.h"
#include "schema_generated.h"
#include "server/sandbox.h"
#include "server/worker_output.h"
#include "server/worker_protocol.h"

namespace lite2onnx::worker {
namespace {

struct Args {
  pid_t parent = -1;
  uint64_t memory_limit = 0;  // bytes a conversion may add to the warm process; 0: no limit
  bool test_faults = false;
  Limits limits;  // what one conversion may cost (the server's --max-* flags)
};

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "lite2onnx-worker: %s\n", why.c_str());
  _exit(70);
}

// A decimal number for `flag` that fits T (the server passes them: anything
// else is a bug, and the worker refuses to start).
template <class T>
T number(const std::string& flag, const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v > std::numeric_limits<T>::max())
    die(flag + ": '" + text + "' is not a number");
  return static_cast<T>(v);
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--parent-pid" && has_value) {
      a.parent = static_cast<pid_t>(std::atol(argv[++i]));
    } else if (arg == "--memory-limit" && has_value) {
      a.memory_limit = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--max-operators" && has_value) {
      a.limits.max_operators = number<uint32_t>(arg, argv[++i]);
    } else if (arg == "--max-tensors" && has_value) {
      a.limits.max_tensors = number<uint32_t>(arg, argv[++i]);
    } else if (arg == "--max-inputs-per-op" && has_value) {
      a.limits.max_inputs_per_op = number<uint32_t>(arg, argv[++i]);
    } else if (arg == "--max-created-bytes" && has_value) {
      a.limits.max_created_bytes = number<uint64_t>(arg, argv[++i]);
    } else if (arg == "--max-output-bytes" && has_value) {
      a.limits.max_output_bytes = number<uint64_t>(arg, argv[++i]);
    } else if (arg == "--test-faults") {
      a.test_faults = true;
    } else {
      die("unknown argument '" + arg + "'");
    }
  }
  if (a.parent <= 0) die("--parent-pid is required");
  return a;
}

// A one-operator model (ABS on a float32 [1, 8] tensor): converting it loads
// what every conversion needs (the ONNX schemas: ~8 ms in a fresh process).
std::string warm_up_model() {
  flatbuffers::FlatBufferBuilder b;
  const std::vector<int> shape{1, 8}, in{0}, out{1};
  const std::vector<flatbuffers::Offset<tflite::OperatorCode>> codes{tflite::CreateOperatorCode(
      b, static_cast<int8_t>(tflite::BuiltinOperator::ABS), 0, 1, tflite::BuiltinOperator::ABS)};
  const std::vector<flatbuffers::Offset<tflite::Tensor>> tensors{
      tflite::CreateTensor(b, b.CreateVector(shape), tflite::TensorType::FLOAT32, 0,
                           b.CreateString("x")),
      tflite::CreateTensor(b, b.CreateVector(shape), tflite::TensorType::FLOAT32, 0,
                           b.CreateString("y"))};
  const std::vector<flatbuffers::Offset<tflite::Operator>> ops{
      tflite::CreateOperator(b, 0, b.CreateVector(in), b.CreateVector(out))};
  const std::vector<flatbuffers::Offset<tflite::SubGraph>> subgraphs{tflite::CreateSubGraph(
      b, b.CreateVector(tensors), b.CreateVector(in), b.CreateVector(out), b.CreateVector(ops))};
  const std::vector<flatbuffers::Offset<tflite::Buffer>> buffers{tflite::CreateBuffer(b)};
  tflite::FinishModelBuffer(
      b, tflite::CreateModel(b, 3, b.CreateVector(codes), b.CreateVector(subgraphs), 0,
                             b.CreateVector(buffers)));
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

void warm_up() {
  const std::string model = warm_up_model();
  Diagnostics d;
  if (!convert(std::as_bytes(std::span(model.data(), model.size())), {}, d))
    die("the warm-up conversion failed");
}

// Called by operator new when an allocation fails (the memory limit): tells
// the server, whatever happens next (a bad_alloc caught below, or an abort).
void note_out_of_memory() {
  std::set_new_handler(nullptr);
  AnswerFrame note;
  note.kind = AnswerKind::kOutOfMemory;
  send_frame(kControlFd, &note, sizeof note, -1);
  throw std::bad_alloc();
}

// What the test hooks do instead of a job.
void run_fault(const JobFrame& job) {
  switch (job.fault) {
    case Fault::kCrash:
      raise(SIGSEGV);
      break;
    case Fault::kHang:
      for (;;) sleep(1000);
    case Fault::kAllocate: {
      // In pieces, each touched: RLIMIT_DATA refuses one (operator new fails),
      // or, under ASan, its RSS limit ends the process.
      constexpr uint64_t kPiece = uint64_t{64} << 20;
      std::vector<std::unique_ptr<char[]>> pieces;
      for (uint64_t done = 0; done < job.fault_bytes; done += kPiece) {
        pieces.emplace_back(new char[kPiece]);
        for (uint64_t i = 0; i < kPiece; i += 4096) pieces.back()[i] = 1;
      }
      break;
    }
    case Fault::kDelay:
      std::this_thread::sleep_for(std::chrono::milliseconds(job.fault_bytes));
      break;
    case Fault::kSyscall:  // outside the seccomp allow-list: the kernel kills the process
      socket(AF_INET, SOCK_STREAM, 0);
      break;
    case Fault::kMappedAnswer:  // instead of the answer (serve())
    case Fault::kNone:
      break;
  }
}

// The ONNX model is in the answer already (`onnx_bytes` of it).
struct Answer {
  uint64_t onnx_bytes = 0;
  std::string info, error;
};

Answer run_job(const JobFrame& job, std::span<const std::byte> model,
               std::span<const std::byte> options_bytes, const Limits& limits,
               OutputStream& output) {
  Answer a;
  auto fail = [&a](ErrorCode code, const std::string& message) {
    a.error = to_proto(make_error(code, message)).SerializeAsString();
  };
  v1::ConvertOptions wire;
  if (!wire.ParseFromArray(options_bytes.data(), static_cast<int>(options_bytes.size()))) {
    fail(ErrorCode::kInternal, "the worker could not read the options");
    return a;
  }
  if (job.kind == JobKind::kInspect) {
    auto info = inspect(model, limits);
    if (!info) {
      a.error = to_proto(info.error()).SerializeAsString();
    } else {
      v1::InspectResponse response;
      to_proto(*info, &response);
      a.info = response.SerializeAsString();
    }
    return a;
  }
  auto options = to_core(wire);
  if (!options) {
    a.error = to_proto(options.error()).SerializeAsString();
    return a;
  }
  options->limits = limits;
  if (job.max_output_bytes) options->limits.max_output_bytes = job.max_output_bytes;
  if (job.flags & kSourceSha256Given) {
    std::string hex(job.source_sha256, sizeof job.source_sha256);
    if (hex.find_first_not_of("0123456789abcdef") != std::string::npos) {
      fail(ErrorCode::kInternal, "the server sent a malformed model hash");
      return a;
    }
    options->source_sha256 = [hex] { return hex; };
  }
  Diagnostics diagnostics;
  auto onnx = convert(model, *options, diagnostics, output);
  v1::Diagnostics d;
  to_proto(diagnostics, &d);
  a.info = d.SerializeAsString();
  if (onnx)
    a.onnx_bytes = *onnx;
  else
    a.error = to_proto(onnx.error()).SerializeAsString();
  return a;
}

// The test hook kMappedAnswer: what a compromised worker could try, an
// answer handed over in a memfd it keeps mapped writable (to change it while
// the server sends it). The server cannot seal it, and refuses it.
void hand_over_mapped_answer() {
  UniqueFd fd = make_memfd("lite2onnx-large-answer");
  // Never unmapped: the server kills this worker.
  if (!fd || ftruncate(fd.get(), 1 << 20) != 0 ||
      mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0) == MAP_FAILED)
    die("cannot make a mapped memfd");
  AnswerFrame frame;
  frame.flags = kAnswerHandedOver;
  frame.onnx_bytes = 1 << 20;
  if (!send_frame(kControlFd, &frame, sizeof frame, fd.get())) _exit(0);
}

// One job: read it from the input memfd (a new one if the server sent it),
// run it, write the answer (AnswerWriter: into the output memfd, or a memfd
// of its own when large) and send its frame.
void serve(const JobFrame& job, UniqueFd new_input, Buffers& b, const Args& args) {
  if (new_input) {
    struct stat st {};
    if (fstat(new_input.get(), &st) != 0) die("cannot read the input memfd");
    b.input_map = Mapping();
    b.input = std::move(new_input);
    b.input_map = Mapping::map(b.input.get(), static_cast<size_t>(st.st_size), false);
    if (!b.input_map.ok()) die("cannot map the input memfd");
  }
  if (job.magic != kMagic || job.model_bytes > b.input_map.size() ||
      job.options_bytes > b.input_map.size() - job.model_bytes)
    die("a malformed job");

  if (args.test_faults && job.fault == Fault::kMappedAnswer) return hand_over_mapped_answer();
  if (!start_output(b)) die("cannot make an output memfd");
  // The core streams the ONNX model into the answer: nothing of a large model
  // is held here but what the conversion itself holds.
  AnswerWriter output(b);
  Answer a;
  try {
    if (args.test_faults && job.fault != Fault::kNone) run_fault(job);
    a = run_job(job, b.input_map.bytes(0, job.model_bytes),
                b.input_map.bytes(job.model_bytes, job.options_bytes), args.limits, output);
  } catch (const std::bad_alloc&) {
    a = Answer();
    v1::ConversionError e;
    e.set_reason(v1::ConversionError::REASON_MEMORY_LIMIT);
    e.set_message("the conversion needed more memory than this server's per-conversion limit");
    e.set_op_index(-1);
    a.error = e.SerializeAsString();
  } catch (const std::exception& e) {
    a = Answer();
    a.error = to_proto(make_error(ErrorCode::kInternal, e.what())).SerializeAsString();
  }
  // A failure while writing left part of a model: the answer is the error alone.
  if (a.onnx_bytes != output.size()) {
    output.reset();
    a.onnx_bytes = 0;
    if (a.error.empty())
      a.error = to_proto(make_error(ErrorCode::kInternal, "the worker could not write its answer"))
                    .SerializeAsString();
  }
  if (!output.write(a.info) || !output.write(a.error)) die("cannot make room for the answer");
  AnswerFrame frame;
  frame.onnx_bytes = a.onnx_bytes;
  frame.info_bytes = a.info.size();
  frame.error_bytes = a.error.size();
  int fd = -1;
  if (output.handed_over() >= 0) {
    frame.flags |= kAnswerHandedOver;
    fd = output.handed_over();
  } else if (!b.output_sent) {
    fd = b.output.get();
  }
  if (!send_frame(kControlFd, &frame, sizeof frame, fd)) _exit(0);  // the server is gone
  if (fd == b.output.get()) b.output_sent = true;
}

}  // namespace
}  // namespace lite2onnx::worker

int main(int argc, char** argv) {
  using namespace lite2onnx::worker;
  const Args args = parse_args(argc, argv);
  if (auto problem = prepare_process(args.parent); !problem.empty()) die(problem);
  // libzip is loaded when a model first has associated files: under the filter
  // it could not be (no open, no executable mappings), so it is loaded now.
  if (auto problem = lite2onnx::load_optional_libraries(); !problem.empty()) die(problem);
  warm_up();
  // The limit is on top of the warm process. (ASan reserves terabytes of
  // address space: there the server passes ASan's own limits instead.)
  uint64_t data_limit = args.memory_limit > 0 ? data_bytes_in_use() + args.memory_limit : 0;
#if defined(__SANITIZE_ADDRESS__)
  data_limit = 0;
#endif
  if (auto problem = limit_resources(data_limit, args.memory_limit); !problem.empty()) die(problem);
  std::set_new_handler(note_out_of_memory);
  if (auto problem = install_seccomp(); !problem.empty()) die(problem);
  warm_up();  // again, under the filter: a missing system call shows here, not in a request

  AnswerFrame ready;
  ready.kind = AnswerKind::kReady;
  if (!send_frame(kControlFd, &ready, sizeof ready, -1)) _exit(0);
  Buffers buffers;
  for (;;) {
    JobFrame job;
    UniqueFd new_input;
    const int got = receive_frame(kControlFd, &job, sizeof job, &new_input);
    if (got == 0) _exit(0);  // the server closed the socket: done
    if (got < 0 || (!new_input && !buffers.input)) die("a malformed job");
    serve(job, std::move(new_input), buffers, args);
  }
}
