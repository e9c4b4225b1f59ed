#include "server/metrics_endpoint.h"

#include <prometheus/exposer.h>
#include <prometheus/registry.h>

namespace lite2onnx::server {

MetricsEndpoint::MetricsEndpoint() = default;
MetricsEndpoint::~MetricsEndpoint() = default;

Status MetricsEndpoint::start(const std::string& listen,
                              std::shared_ptr<prometheus::Registry> registry) {
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(listen, /*num_threads=*/2);
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInvalidOption,
                      "cannot serve metrics on '" + listen + "': " + e.what());
  }
  exposer_->RegisterCollectable(registry);
  const auto ports = exposer_->GetListeningPorts();
  port_ = ports.empty() ? 0 : ports.front();
  return ok_status();
}

void MetricsEndpoint::stop() { exposer_.reset(); }

}  // namespace lite2onnx::server
