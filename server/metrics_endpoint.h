// The Prometheus scrape endpoint (GET /metrics) on its own HTTP port.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"

namespace prometheus {
class Exposer;
class Registry;
}  // namespace prometheus

namespace lite2onnx::server {

class MetricsEndpoint {
 public:
  MetricsEndpoint();
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  Status start(const std::string& listen, std::shared_ptr<prometheus::Registry> registry);
  int port() const { return port_; }
  void stop();

 private:
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace lite2onnx::server
