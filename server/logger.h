// Structured logs on stderr through spdlog: one line per event, as text
// (`message key=value ...`) or JSON (one object per line). Never given model bytes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "server/config.h"

namespace spdlog {
class logger;
}

namespace lite2onnx::server {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

struct LogField {
  std::string_view key;
  std::variant<std::string_view, int64_t, uint64_t, double, bool> value;
};

class Logger {
 public:
  // Assumes a validated level name (see config.cc).
  explicit Logger(const LogOptions& options);
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  void log(LogLevel level, std::string_view message, std::initializer_list<LogField> fields) const;
  void debug(std::string_view message, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::kDebug, message, fields);
  }
  void info(std::string_view message, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::kInfo, message, fields);
  }
  void warn(std::string_view message, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::kWarn, message, fields);
  }
  void error(std::string_view message, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::kError, message, fields);
  }
  void flush() const;

 private:
  LogFormat format_;
  std::shared_ptr<spdlog::logger> logger_;
};

}  // namespace lite2onnx::server
