#include "server/grpc_call.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <random>

#include "common/service_config.h"
#include "common/translate.h"
#include "google/rpc/status.pb.h"

namespace lite2onnx::server {
namespace {

// Status messages stay short; the full list of unsupported ops is in the details.
constexpr size_t kMaxMessageChars = 1024;

std::string_view metadata(grpc::CallbackServerContext* ctx, const char* key) {
  const auto& md = ctx->client_metadata();
  auto it = md.find(key);
  return it == md.end() ? std::string_view()
                        : std::string_view(it->second.data(), it->second.size());
}

}  // namespace

CallInfo call_info(grpc::CallbackServerContext* ctx, std::string_view method) {
  CallInfo info;
  info.protocol = "grpc";
  info.method = method;
  info.address = ctx->peer();
  info.request_id = metadata(ctx, "x-request-id");
  info.traceparent = metadata(ctx, "traceparent");
  info.test_fault = metadata(ctx, "x-lite2onnx-test-fault");
  info.deadline = ctx->deadline();
  return info;
}

grpc::Status to_status(const Failure& failure) {
  const auto code = static_cast<grpc::StatusCode>(failure.reason->grpc_code);
  const std::string& text = failure.error.message;
  std::string message =
      text.size() > kMaxMessageChars ? text.substr(0, kMaxMessageChars - 3) + "..." : text;
  google::rpc::Status status;
  status.set_code(static_cast<int>(code));
  status.set_message(message);
  status.add_details()->PackFrom(to_proto(failure));
  return grpc::Status(code, std::move(message), status.SerializeAsString());
}

CallHeaders::CallHeaders(grpc::CallbackServerContext* ctx, std::string id)
    : ctx_(ctx), id_(std::move(id)) {
  // gRPC's retries send the count of earlier attempts of the same call.
  int n = 0;
  for (char c : metadata(ctx, "grpc-previous-rpc-attempts"))
    n = c >= '0' && c <= '9' && n < 1000 ? n * 10 + (c - '0') : n;
  attempt_ = 1 + n;
}

void CallHeaders::send() {
  if (sent_) return;
  sent_ = true;
  ctx_->AddInitialMetadata("x-request-id", id_);
}

grpc::Status CallHeaders::finish(const std::optional<Failure>& failure) {
  if (!failure) send();
  if (!sent_) ctx_->AddTrailingMetadata("x-request-id", id_);
  ctx_->AddTrailingMetadata(std::string(kAttemptHeader), std::to_string(attempt_));
  if (!failure) return grpc::Status::OK;
  // The client's retry policy (common/service_config.h) retries by code; the
  // reason says whether, and the server when.
  thread_local std::mt19937 random{std::random_device{}()};
  const std::string pushback = server_pushback_ms(
      failure->reason->name, attempt_, std::uniform_real_distribution<>(0.5, 1.0)(random));
  if (!pushback.empty()) ctx_->AddTrailingMetadata("grpc-retry-pushback-ms", pushback);
  return to_status(*failure);
}

std::string WireReader::Field::joined() const {
  std::string out;
  for (auto piece : bytes) out.append(reinterpret_cast<const char*>(piece.data()), piece.size());
  return out;
}

bool WireReader::read(const grpc::ByteBuffer& buffer, std::vector<Field>* fields) {
  if (!buffer.Dump(&slices_).ok()) return false;
  while (!at_end()) {
    Field f;
    uint64_t tag = 0;
    if (!varint(&tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX) return false;
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire_type = static_cast<uint32_t>(tag & 7);
    if (f.wire_type == 0) {
      if (!varint(&f.value)) return false;
    } else if (f.wire_type == 1 || f.wire_type == 5) {
      std::vector<std::span<const std::byte>> pieces;
      if (!take(f.wire_type == 1 ? 8 : 4, &pieces)) return false;
      int shift = 0;
      for (auto piece : pieces)
        for (std::byte b : piece) f.value |= std::to_integer<uint64_t>(b) << (8 * shift++);
    } else if (f.wire_type == 2) {
      uint64_t length = 0;
      if (!varint(&length) || !take(length, &f.bytes)) return false;
    } else {
      return false;  // groups: in no message of this service
    }
    fields->push_back(std::move(f));
  }
  return true;
}

std::shared_ptr<const void> WireReader::take_slices() {
  auto slices = std::make_shared<std::vector<grpc::Slice>>(std::move(slices_));
  slices_.clear();
  slice_ = offset_ = 0;
  return slices;
}

bool WireReader::at_end() {
  while (slice_ < slices_.size() && offset_ >= slices_[slice_].size()) {
    ++slice_;
    offset_ = 0;
  }
  return slice_ >= slices_.size();
}

bool WireReader::varint(uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at_end()) return false;
    const uint8_t b = slices_[slice_].begin()[offset_++];
    *value |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

bool WireReader::take(uint64_t n, std::vector<std::span<const std::byte>>* pieces) {
  while (n > 0) {
    if (at_end()) return false;
    const grpc::Slice& s = slices_[slice_];
    const size_t k = static_cast<size_t>(std::min<uint64_t>(n, s.size() - offset_));
    pieces->push_back(std::as_bytes(std::span(s.begin() + offset_, k)));
    offset_ += k;
    n -= k;
  }
  return true;
}

grpc::Slice owned_slice(std::string_view bytes, std::shared_ptr<const void> owner) {
  auto* keep = new std::shared_ptr<const void>(std::move(owner));
  return grpc::Slice(
      const_cast<char*>(bytes.data()), bytes.size(),
      [](void* o) { delete static_cast<std::shared_ptr<const void>*>(o); }, keep);
}

std::string field_head(uint32_t number, uint64_t length) {
  using google::protobuf::internal::WireFormatLite;
  std::string head;
  {
    google::protobuf::io::StringOutputStream stream(&head);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.WriteTag(WireFormatLite::MakeTag(number, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    out.WriteVarint64(length);
  }
  return head;
}

}  // namespace lite2onnx::server
