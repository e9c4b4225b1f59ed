#include "client/batch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <system_error>
#include <thread>

#include "client/mapped_file.h"
#include "client/output_file.h"
#include "core/option_table.h"

namespace lite2onnx::batch {
namespace fs = std::filesystem;
namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Failure io_failure(std::string message) {
  return make_failure(reason_named("io_error"), std::move(message));
}

// The first 8 bytes of a file, or fewer when it is shorter; an error message when unreadable.
bool read_head(const fs::path& path, std::string& head, std::string& error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  char buffer[8];
  ssize_t got = 0;
  while (got < static_cast<ssize_t>(sizeof buffer)) {
    ssize_t n = ::read(fd, buffer + got, sizeof buffer - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    got += n;
  }
  ::close(fd);
  head.assign(buffer, static_cast<size_t>(got));
  return true;
}

// The process's umask, read without changing it (umask() would, for a moment,
// for every thread): /proc/self/status has it since Linux 4.7.
mode_t process_umask() {
  static const mode_t mask = [] {
    FILE* f = std::fopen("/proc/self/status", "r");
    unsigned value = 022;
    char line[256];
    while (f && std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "Umask: %o", &value) == 1) break;
    if (f) std::fclose(f);
    return static_cast<mode_t>(value);
  }();
  return mask;
}

bool is_tflite_head(const std::string& head) {
  return has_tflite_identifier(std::as_bytes(std::span(head.data(), head.size())));
}

// Adds the file `path` (named `name`) to the plan, or to its skipped files.
void add_file(const fs::path& path, const std::string& name, const std::string& out_dir,
              Plan& plan) {
  std::string head, error;
  if (!read_head(path, head, error))
    plan.skipped.push_back({path.string(), name, "cannot read it: " + error});
  else if (!is_tflite_head(head))
    plan.skipped.push_back(
        {path.string(), name,
         "not a TFLite model (no \"" + std::string(kTfliteIdentifier) + "\" file identifier)"});
  else
    plan.items.push_back({path.string(), name, output_path(out_dir, name)});
}

// The same path, for comparing folders (the walk leaves out the output folder).
fs::path canonical_or_self(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : c;
}

std::string unsupported_list(const std::vector<UnsupportedOp>& ops, size_t max) {
  std::string s;
  for (size_t i = 0; i < ops.size() && i < max; ++i)
    s += (i ? ", " : "") + ops[i].op + " (op " + std::to_string(ops[i].op_index) + ")";
  if (ops.size() > max) s += ", and " + std::to_string(ops.size() - max) + " more";
  return s;
}

ModelReport convert_one(const Item& item, const ConvertOptions& options, Converter& converter) {
  ModelReport r;
  r.input = item.input;
  r.name = item.name;
  const auto start = Clock::now();
  auto finish = [&](ModelReport& report) -> ModelReport& {
    report.ms = ms_since(start);
    return report;
  };
  std::string error;
  auto file = MappedFile::open(item.input, &error);
  if (!file) {
    r.failure = io_failure(error);
    return finish(r);
  }
  r.model_bytes = file->bytes().size();
  std::error_code ec;
  fs::create_directories(fs::path(item.output).parent_path(), ec);
  if (ec) {
    r.failure = io_failure("cannot create the folder of '" + item.output + "': " + ec.message());
    return finish(r);
  }
  // Streamed into the file (opened on the first write, renamed into place by
  // commit): a failed conversion or write leaves no file of its own.
  OutputFile out(item.output);
  auto converted = converter(file->bytes(), options, out);
  if (converted && !out.commit()) converted = io_failure(out.error());
  if (!converted) {
    r.failure = out.error().empty() ? converted.take_error() : io_failure(out.error());
    r.attempts = r.failure.attempts;
    // An output of an earlier run would read as this model's: the folder
    // holds what this run converted, summary.json says why the rest is missing.
    fs::remove(item.output, ec);
    return finish(r);
  }
  const Diagnostics& d = converted->diagnostics;
  r.attempts = converted->attempts;
  for (const auto& [op, count] : d.emitted_nodes) r.nodes += count;
  auto transposes = d.emitted_nodes.find("Transpose");
  r.transposes = transposes == d.emitted_nodes.end() ? 0 : transposes->second;
  r.inserted = static_cast<int>(d.inserted.size());
  r.onnx_bytes = converted->onnx_bytes;
  r.warnings = d.warnings;
  for (const auto& t : d.timings)
    if (t.phase == "total") r.convert_ms = t.ms;
  r.outcome = ModelReport::Outcome::kConverted;
  r.output = item.output;
  return finish(r);
}

Json report_json(const ModelReport& r) {
  Json m;
  m["input"] = r.input;
  m["name"] = r.name;
  m["outcome"] = r.outcome_name();
  switch (r.outcome) {
    case ModelReport::Outcome::kConverted:
      m["output"] = r.output;
      m["nodes"] = r.nodes;
      m["transposes"] = r.transposes;
      m["inserted"] = r.inserted;
      m["model_bytes"] = r.model_bytes;
      m["onnx_bytes"] = r.onnx_bytes;
      m["warnings"] = r.warnings;
      break;
    case ModelReport::Outcome::kFailed: {
      const Failure& f = r.failure;
      Json e = {{"reason", f.name()},
                {"exit_code", f.reason->exit_code},
                {"retryable", f.reason->retryable},
                {"message", f.error.message}};
      if (f.error.op_index >= 0) e["op_index"] = f.error.op_index;
      if (!f.error.tensor.empty()) e["tensor"] = f.error.tensor;
      m["error"] = std::move(e);
      Json ops = Json::array();
      for (const auto& u : f.error.unsupported)
        ops.push_back({{"op_index", u.op_index},
                       {"op", u.op},
                       {"reason", u.reason},
                       {"reason_code", u.reason_code}});
      m["unsupported"] = std::move(ops);
      m["model_bytes"] = r.model_bytes;
      break;
    }
    case ModelReport::Outcome::kSkipped:
      m["note"] = r.note;
      return m;
  }
  m["attempts"] = r.attempts;
  m["timings"] = {{"total_ms", r.ms}};
  // The conversion's own time comes with its diagnostics, which a failure has not.
  if (r.outcome == ModelReport::Outcome::kConverted) m["timings"]["convert_ms"] = r.convert_ms;
  return m;
}

// Failed models by reason, most frequent first (then by name).
std::vector<std::pair<const ErrorReason*, int>> failures_by_reason(const Summary& s) {
  std::map<std::string_view, std::pair<const ErrorReason*, int>> counts;
  for (const auto& m : s.models)
    if (m.outcome == ModelReport::Outcome::kFailed) {
      auto& c = counts[m.failure.reason->name];
      c.first = m.failure.reason;
      ++c.second;
    }
  std::vector<std::pair<const ErrorReason*, int>> v;
  for (const auto& [name, c] : counts) v.push_back(c);
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

}  // namespace

bool has_tflite_identifier(std::span<const std::byte> head) {
  return head.size() >= 8 &&
         std::memcmp(head.data() + 4, kTfliteIdentifier.data(), kTfliteIdentifier.size()) == 0;
}

std::string output_path(const std::string& out_dir, const std::string& name) {
  fs::path out = fs::path(out_dir) / fs::path(name);
  out.replace_extension(".onnx");
  return out.string();
}

Outcome<Plan> plan(std::span<const std::string> inputs, const std::string& out_dir) {
  Plan p;
  const fs::path out_canonical = canonical_or_self(out_dir);
  for (const auto& input : inputs) {
    std::error_code ec;
    const auto status = fs::status(input, ec);
    if (ec || !fs::exists(status))
      return io_failure("cannot read '" + input +
                        "': " + (ec ? ec.message() : std::string("no such file or folder")));
    if (!fs::is_directory(status)) {
      add_file(input, fs::path(input).filename().string(), out_dir, p);
      continue;
    }
    // A folder: every regular file below it, by name.
    std::vector<fs::path> files;
    fs::recursive_directory_iterator it(input, fs::directory_options::skip_permission_denied, ec),
        end;
    for (; !ec && it != end; it.increment(ec)) {
      if (it->is_directory(ec) && canonical_or_self(it->path()) == out_canonical) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file(ec)) files.push_back(it->path());
    }
    if (ec) return io_failure("cannot read the folder '" + input + "': " + ec.message());
    std::vector<std::pair<std::string, fs::path>> named;
    for (const auto& f : files) named.emplace_back(f.lexically_relative(input).string(), f);
    std::sort(named.begin(), named.end());
    for (const auto& [name, path] : named) add_file(path, name, out_dir, p);
  }
  // Two models written to one file would overwrite each other, and a model
  // named *.onnx converted beside itself would overwrite itself: refuse before
  // converting.
  std::map<std::string, const Item*> inputs_by_path;
  for (const auto& item : p.items)
    inputs_by_path.emplace(canonical_or_self(item.input).string(), &item);
  for (const auto& item : p.items)
    if (auto it = inputs_by_path.find(canonical_or_self(item.output).string());
        it != inputs_by_path.end())
      return make_failure(reason_named("invalid_option"),
                          "'" + item.input + "' would be written over the model '" +
                              it->second->input + "': choose another output folder");
  std::map<std::string, const Item*> outputs;
  for (const auto& item : p.items) {
    auto [it, fresh] = outputs.emplace(canonical_or_self(item.output).string(), &item);
    if (!fresh)
      return make_failure(reason_named("invalid_option"),
                          "'" + it->second->input + "' and '" + item.input +
                              "' would both be written to '" + item.output +
                              "': convert them into different output folders");
  }
  return p;
}

Converter in_process() {
  return [](std::span<const std::byte> model, const ConvertOptions& options,
            OutputStream& out) -> Outcome<Converted> {
    Converted c;
    auto size = convert(model, options, c.diagnostics, out);
    if (!size) return failure_of(size.take_error());
    c.onnx_bytes = *size;
    return c;
  };
}

const char* ModelReport::outcome_name() const {
  switch (outcome) {
    case Outcome::kConverted:
      return "converted";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kSkipped:
      return "skipped";
  }
  return "failed";
}

Summary run(const Plan& plan, const ConvertOptions& options, const ConverterFactory& converter,
            const RunOptions& run_options) {
  const auto start = Clock::now();
  Summary s;
  s.options = options_summary(options);
  const size_t total = plan.items.size();
  const size_t jobs = std::clamp<size_t>(static_cast<size_t>(std::max(run_options.jobs, 1)), 1,
                                         std::max<size_t>(total, 1));
  s.jobs = static_cast<int>(jobs);
  std::vector<ModelReport> reports(total);
  std::atomic<size_t> next{0};
  std::mutex done_mutex;
  size_t done = 0;
  auto work = [&] {
    Converter convert_model = converter();
    for (size_t i = next++; i < total; i = next++) {
      reports[i] = convert_one(plan.items[i], options, convert_model);
      std::lock_guard lock(done_mutex);
      ++done;
      if (run_options.on_done) run_options.on_done(reports[i], done, total);
    }
  };
  if (jobs == 1 || total <= 1) {
    work();
  } else {
    std::vector<std::jthread> threads;
    for (size_t t = 0; t < jobs; ++t) threads.emplace_back(work);
  }
  for (auto& r : reports) {
    if (r.outcome == ModelReport::Outcome::kConverted)
      ++s.converted;
    else
      ++s.failed;
    s.models.push_back(std::move(r));
  }
  for (const auto& k : plan.skipped) {
    ModelReport r;
    r.outcome = ModelReport::Outcome::kSkipped;
    r.input = k.input;
    r.name = k.name;
    r.note = k.note;
    s.models.push_back(std::move(r));
    ++s.skipped;
  }
  s.wall_ms = ms_since(start);
  return s;
}

std::string Summary::to_json(int indent) const {
  Json j;
  j["lite2onnx"] = version();
  j["out_dir"] = out_dir;
  j["options"] = options;
  j["server"] = server;
  j["jobs"] = jobs;
  j["wall_ms"] = wall_ms;
  j["counts"] = {{"models", converted + failed},
                 {"converted", converted},
                 {"failed", failed},
                 {"skipped", skipped}};
  Json by_reason = Json::object();
  for (const auto& [reason, count] : failures_by_reason(*this))
    by_reason[std::string(reason->name)] = count;
  j["failed_by_reason"] = std::move(by_reason);
  j["exit_code"] = exit_code();
  Json models_json = Json::array();
  for (const auto& m : models) models_json.push_back(report_json(m));
  j["models"] = std::move(models_json);
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

std::string Summary::table() const {
  char line[512];
  std::string s;
  std::snprintf(line, sizeof line,
                "%d models in %.2f s with %d job%s: %d converted, %d failed; %d other file%s "
                "skipped\n",
                converted + failed, wall_ms / 1000, jobs, jobs == 1 ? "" : "s", converted, failed,
                skipped, skipped == 1 ? "" : "s");
  s += line;
  if (failed) {
    std::snprintf(line, sizeof line, "  %-18s %4s  %-5s  %s\n", "reason", "exit", "retry",
                  "models");
    s += line;
    for (const auto& [reason, count] : failures_by_reason(*this)) {
      std::snprintf(line, sizeof line, "  %-18.*s %4d  %-5s  %d\n",
                    static_cast<int>(reason->name.size()), reason->name.data(), reason->exit_code,
                    reason->retryable ? "yes" : "no", count);
      s += line;
    }
    s += "failed:\n";
    for (const auto& m : models) {
      if (m.outcome != ModelReport::Outcome::kFailed) continue;
      std::string why = m.failure.error.unsupported.empty()
                            ? m.failure.error.message
                            : unsupported_list(m.failure.error.unsupported, 4);
      if (why.size() > 160) why = why.substr(0, 157) + "...";
      s += "  " + m.name + ": " + m.failure.name() + ": " + why + "\n";
    }
  }
  return s;
}

Status write_file_atomically(const std::string& path, std::string_view bytes) {
  const fs::path target(path);
  std::string temp =
      (target.parent_path() / ("." + target.filename().string() + ".XXXXXX")).string();
  int fd = mkstemp(temp.data());
  if (fd < 0)
    return make_error(ErrorCode::kInternal,
                      "cannot write '" + path + "': " + std::string(std::strerror(errno)));
  // mkstemp makes the file 0600; give it what a plain create would.
  std::string error;
  if (fchmod(fd, 0666 & ~process_umask()) != 0) error = std::strerror(errno);
  for (size_t pos = 0; error.empty() && pos < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + pos, bytes.size() - pos);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = std::strerror(errno);
    if (n > 0) pos += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && error.empty()) error = std::strerror(errno);
  if (error.empty() && std::rename(temp.c_str(), path.c_str()) != 0) error = std::strerror(errno);
  if (!error.empty()) {
    ::unlink(temp.c_str());
    return make_error(ErrorCode::kInternal, "cannot write '" + path + "': " + error);
  }
  return ok_status();
}

Status write_summary(const Summary& summary) {
  std::error_code ec;
  fs::create_directories(summary.out_dir, ec);
  return write_file_atomically((fs::path(summary.out_dir) / "summary.json").string(),
                               summary.to_json() + "\n");
}

}  // namespace lite2onnx::batch
