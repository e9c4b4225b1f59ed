#include "server/logger.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "server/text.h"

namespace lite2onnx::server {
namespace {

spdlog::level::level_enum spdlog_level(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

// A text value: its control and non-UTF-8 bytes escaped (server/text.h),
// quoted when it holds spaces, quotes or '=' (or is empty).
std::string text_value(std::string_view raw) {
  const std::string s = escaped(raw);
  if (!s.empty() && s.find_first_of(" \"=") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '\\';
    q += c;
  }
  return q + "\"";
}

std::string render_text(std::string_view message, std::initializer_list<LogField> fields) {
  std::string line(message);
  for (const auto& f : fields) {
    line += ' ';
    line += f.key;
    line += '=';
    std::visit(
        [&line](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string_view>)
            line += text_value(v);
          else if constexpr (std::is_same_v<T, bool>)
            line += v ? "true" : "false";
          else if constexpr (std::is_same_v<T, double>)
            line += fmt::format("{:.3f}", v);
          else
            line += std::to_string(v);
        },
        f.value);
  }
  return line;
}

// The members of one JSON object without its braces: the pattern adds time and level.
std::string render_json(std::string_view message, std::initializer_list<LogField> fields) {
  nlohmann::ordered_json o;
  o["msg"] = message;
  for (const auto& f : fields)
    std::visit(
        [&o, &f](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string_view>)
            o[std::string(f.key)] = escaped(v);  // control and non-UTF-8 bytes as \xNN
          else
            o[std::string(f.key)] = v;
        },
        f.value);
  std::string s = o.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return s.substr(1, s.size() - 2);
}

}  // namespace

Logger::Logger(const LogOptions& options)
    : format_(options.format),
      logger_(std::make_shared<spdlog::logger>("lite2onnx-server",
                                               std::make_shared<spdlog::sinks::stderr_sink_mt>())) {
  logger_->set_level(spdlog::level::from_str(options.level));
  logger_->set_pattern(format_ == LogFormat::kJson
                           ? R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l",%v})"
                           : "%Y-%m-%dT%H:%M:%S.%fZ %l %v",
                       spdlog::pattern_time_type::utc);
  logger_->flush_on(spdlog::level::info);
}

Logger::~Logger() { flush(); }

void Logger::log(LogLevel level, std::string_view message,
                 std::initializer_list<LogField> fields) const {
  const auto l = spdlog_level(level);
  if (!logger_->should_log(l)) return;
  const std::string line =
      format_ == LogFormat::kJson ? render_json(message, fields) : render_text(message, fields);
  logger_->log(l, spdlog::string_view_t(line));  // the line is no format string
}

void Logger::flush() const { logger_->flush(); }

}  // namespace lite2onnx::server
