// Every error mapping: the gRPC code, and the ConversionError in the details.
#include <gtest/gtest.h>

#include "client.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

using Reason = v1::ConversionError;

// Checks the code and the detail's reason; returns the detail.
v1::ConversionError expect_error(const grpc::Status& status, grpc::StatusCode code,
                                 v1::ConversionError::Reason reason) {
  EXPECT_EQ(status.error_code(), code) << status.error_message();
  auto detail = error_detail(status);
  EXPECT_TRUE(detail.has_value()) << "no ConversionError in the status details";
  if (!detail) return {};
  EXPECT_EQ(detail->reason(), reason) << v1::ConversionError::Reason_Name(detail->reason());
  EXPECT_EQ(detail->message(), status.error_message());
  return *detail;
}

class ErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = ServerProcess::start({"--max-unary-bytes", "1MiB", "--max-stream-bytes", "2MiB",
                                    "--max-inflight-bytes", "3MiB"});
    ASSERT_TRUE(server_);
    channel_ = server_->channel();
  }
  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(ErrorsTest, GarbageBytesAreAnInvalidModel) {
  ConvertResult r = convert(*channel_, "this is not a FlatBuffer at all");
  expect_error(r.status, grpc::StatusCode::INVALID_ARGUMENT, Reason::REASON_INVALID_MODEL);
  ConvertResult empty = convert(*channel_, "");
  expect_error(empty.status, grpc::StatusCode::INVALID_ARGUMENT, Reason::REASON_INVALID_MODEL);
}

TEST_F(ErrorsTest, BadOptionsAreInvalidOptions) {
  const std::string model = read_file(mini_mobilenet_path());
  v1::ConvertOptions opset;
  opset.set_opset(12);
  auto e = expect_error(convert(*channel_, model, opset).status, grpc::StatusCode::INVALID_ARGUMENT,
                        Reason::REASON_INVALID_OPTION);
  EXPECT_NE(e.message().find("opset 12"), std::string::npos) << e.message();

  v1::ConvertOptions layout;
  layout.add_explicit_layouts("input=NHWC:NCHW");
  layout.add_explicit_layouts("no equals sign");
  e = expect_error(convert(*channel_, model, layout).status, grpc::StatusCode::INVALID_ARGUMENT,
                   Reason::REASON_INVALID_OPTION);
  EXPECT_EQ(e.message().rfind("explicit_layouts[1]: ", 0), 0u) << e.message();

  v1::ConvertOptions quantization;
  quantization.set_quantization(static_cast<v1::QuantizationMode>(7));
  expect_error(convert(*channel_, model, quantization).status, grpc::StatusCode::INVALID_ARGUMENT,
               Reason::REASON_INVALID_OPTION);
}

TEST_F(ErrorsTest, UnsupportedOperatorsAreAllListed) {
  ConvertResult r = convert(*channel_, unsupported_ops_model());
  auto e = expect_error(r.status, grpc::StatusCode::UNIMPLEMENTED, Reason::REASON_UNSUPPORTED);
  ASSERT_EQ(e.unsupported_size(), 3);
  EXPECT_EQ(e.unsupported(0).op_index(), 1);
  EXPECT_EQ(e.unsupported(0).op(), "MyCustomOp");
  EXPECT_EQ(e.unsupported(0).reason(), "custom operator");
  EXPECT_EQ(e.unsupported(0).reason_code(), "custom_op");
  EXPECT_EQ(e.unsupported(1).op(), "OtherCustomOp");
  EXPECT_EQ(e.unsupported(2).op_index(), 3);
  EXPECT_EQ(e.unsupported(2).op(), "HASHTABLE_LOOKUP");
  EXPECT_EQ(e.unsupported(2).reason_code(), "not_implemented");
  for (const char* name : {"MyCustomOp", "OtherCustomOp", "HASHTABLE_LOOKUP"})
    EXPECT_NE(r.status.error_message().find(name), std::string::npos) << name;
}

TEST_F(ErrorsTest, ModelBeyondTheUnaryLimitIsTooLarge) {
  const std::string model(1024 * 1024 + 1, 'x');
  auto e = expect_error(convert(*channel_, model).status, grpc::StatusCode::RESOURCE_EXHAUSTED,
                        Reason::REASON_MODEL_TOO_LARGE);
  EXPECT_NE(e.message().find("ConvertStream"), std::string::npos);
}

TEST_F(ErrorsTest, StreamCarriesAModelBeyondTheUnaryLimit) {
  const std::string model = abs_chain_model(20000);  // about 1.4 MB
  ASSERT_GT(model.size(), 1024u * 1024);
  ASSERT_EQ(convert(*channel_, model).status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  for (bool announce : {true, false}) {
    StreamResult s = convert_stream(*channel_, model, {}, 256 * 1024, announce);
    ASSERT_TRUE(s.status.ok()) << s.status.error_message();
    EXPECT_EQ(s.diagnostics.model_bytes(), model.size());
    EXPECT_EQ(s.diagnostics.source_ops().at("ABS"), 20000);
    EXPECT_EQ(s.onnx_model.size(), s.diagnostics.onnx_bytes());
  }
}

TEST_F(ErrorsTest, StreamBeyondTheStreamLimitIsTooLarge) {
  const std::string model(2 * 1024 * 1024 + 1, 'x');
  for (bool announce : {true, false})
    expect_error(convert_stream(*channel_, model, {}, 512 * 1024, announce).status,
                 grpc::StatusCode::RESOURCE_EXHAUSTED, Reason::REASON_MODEL_TOO_LARGE);
}

TEST_F(ErrorsTest, StreamMessagesOutOfOrderAreABadStream) {
  auto stub = v1::Converter::NewStub(channel_);
  {  // data before the options
    grpc::ClientContext ctx;
    auto stream = stub->ConvertStream(&ctx);
    v1::ConvertChunk chunk;
    chunk.set_data("abc");
    stream->Write(chunk);
    stream->WritesDone();
    while (stream->Read(&chunk)) {
    }
    expect_error(stream->Finish(), grpc::StatusCode::INVALID_ARGUMENT, Reason::REASON_BAD_STREAM);
  }
  {  // nothing at all
    grpc::ClientContext ctx;
    auto stream = stub->ConvertStream(&ctx);
    stream->WritesDone();
    v1::ConvertChunk chunk;
    while (stream->Read(&chunk)) {
    }
    expect_error(stream->Finish(), grpc::StatusCode::INVALID_ARGUMENT, Reason::REASON_BAD_STREAM);
  }
  {  // fewer bytes than announced
    grpc::ClientContext ctx;
    auto stream = stub->ConvertStream(&ctx);
    v1::ConvertChunk chunk;
    chunk.mutable_options();
    chunk.set_total_bytes(10);
    stream->Write(chunk);
    chunk.Clear();
    chunk.set_data("abc");
    stream->Write(chunk);
    stream->WritesDone();
    while (stream->Read(&chunk)) {
    }
    expect_error(stream->Finish(), grpc::StatusCode::INVALID_ARGUMENT, Reason::REASON_BAD_STREAM);
  }
}

TEST_F(ErrorsTest, GarbageInAStreamIsAnInvalidModel) {
  StreamResult s = convert_stream(*channel_, std::string(5000, '\x7f'), {}, 1000);
  expect_error(s.status, grpc::StatusCode::INVALID_ARGUMENT, Reason::REASON_INVALID_MODEL);
  EXPECT_EQ(s.chunks_received, 0u);
}

TEST_F(ErrorsTest, InspectMapsErrorsTheSameWay) {
  auto stub = v1::Converter::NewStub(channel_);
  grpc::ClientContext ctx;
  v1::InspectRequest request;
  request.set_model("garbage");
  v1::InspectResponse response;
  expect_error(stub->Inspect(&ctx, request, &response), grpc::StatusCode::INVALID_ARGUMENT,
               Reason::REASON_INVALID_MODEL);
}

// The conversion limits (--max-*) reach the conversions wherever they run: in
// worker processes (the default) and in the server's threads, for Convert,
// ConvertStream and Inspect.
TEST(ConversionLimitsTest, ReachEveryCallInBothIsolationModes) {
  const std::string model = abs_chain_model(50);
  for (const char* isolation : {"process", "thread"}) {
    SCOPED_TRACE(isolation);
    auto server = ServerProcess::start({"--isolation", isolation, "--max-operators", "40"});
    ASSERT_TRUE(server);
    auto channel = server->channel();
    auto e = expect_error(convert(*channel, model).status, grpc::StatusCode::RESOURCE_EXHAUSTED,
                          Reason::REASON_RESOURCE_LIMIT);
    EXPECT_NE(e.message().find("50 operators"), std::string::npos) << e.message();
    expect_error(convert_stream(*channel, model, {}, 1024, true).status,
                 grpc::StatusCode::RESOURCE_EXHAUSTED, Reason::REASON_RESOURCE_LIMIT);
    auto stub = v1::Converter::NewStub(channel);
    grpc::ClientContext ctx;
    v1::InspectRequest request;
    request.set_model(model);
    v1::InspectResponse response;
    expect_error(stub->Inspect(&ctx, request, &response), grpc::StatusCode::RESOURCE_EXHAUSTED,
                 Reason::REASON_RESOURCE_LIMIT);
    // Within the limit, the same server converts.
    EXPECT_TRUE(convert(*channel, abs_chain_model(40)).status.ok());
  }
}

}  // namespace
}  // namespace lite2onnx::server_test
