// Every RPC of lite2onnx.v1.Converter against the real server.
#include <gtest/gtest.h>

#include <cstdlib>

#include "client.h"
#include "core/convert.h"
#include "server_process.h"
#include "test_models.h"

namespace lite2onnx::server_test {
namespace {

// The in-process conversion the server must reproduce byte for byte.
std::string convert_in_process(const std::string& model, const ConvertOptions& options = {}) {
  Diagnostics d;
  auto onnx = lite2onnx::convert(std::as_bytes(std::span(model.data(), model.size())), options, d);
  return onnx ? *onnx : "";
}

class RpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = read_file(mini_mobilenet_path());
    ASSERT_FALSE(model_.empty()) << mini_mobilenet_path();
    server_ = ServerProcess::start({"--workers", "2"});
    ASSERT_TRUE(server_);
    channel_ = server_->channel();
  }

  std::string model_;
  std::unique_ptr<ServerProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(RpcTest, ConvertWithDefaultsMatchesTheInProcessConversion) {
  ConvertResult r = convert(*channel_, model_);
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_EQ(r.response.onnx_model(), convert_in_process(model_));
  const v1::Diagnostics& d = r.response.diagnostics();
  EXPECT_EQ(d.opset(), 13);
  EXPECT_EQ(d.model_bytes(), model_.size());
  EXPECT_EQ(d.onnx_bytes(), r.response.onnx_model().size());
  EXPECT_GT(d.source_ops().at("CONV_2D"), 0);
  EXPECT_EQ(d.transposes_after_cleanup(), 0);
  ASSERT_FALSE(d.timings().empty());
  EXPECT_FALSE(r.request_id.empty());
}

TEST_F(RpcTest, ConvertOptionsReachTheCore) {
  v1::ConvertOptions options;
  options.set_opset(17);
  options.set_keep_io_layout(true);
  options.add_io_layouts("input=NCHW");
  ConvertResult r = convert(*channel_, model_, options);
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_EQ(r.response.diagnostics().opset(), 17);
  ConvertOptions core;
  core.opset = 17;
  core.layout.keep_io_layout = true;
  core.layout.io_layouts.push_back({"input", "NHWC", "NCHW"});
  EXPECT_EQ(r.response.onnx_model(), convert_in_process(model_, core));
  EXPECT_NE(r.response.onnx_model(), convert_in_process(model_));
}

// Quantization options give what the core gives: the same bytes, or the same error.
TEST_F(RpcTest, QuantizationOptionsReachTheCore) {
  for (bool dequantize : {false, true})
    for (bool keep_float16 : {false, true}) {
      v1::ConvertOptions options;
      options.set_quantization(dequantize ? v1::QUANTIZATION_MODE_DEQUANTIZE
                                          : v1::QUANTIZATION_MODE_QDQ);
      options.set_keep_float16_weights(keep_float16);
      ConvertOptions core;
      core.quantization = dequantize ? QuantizationMode::kDequantize : QuantizationMode::kQdq;
      core.keep_float16_weights = keep_float16;
      Diagnostics d;
      auto local =
          lite2onnx::convert(std::as_bytes(std::span(model_.data(), model_.size())), core, d);
      ConvertResult r = convert(*channel_, model_, options);
      ASSERT_EQ(r.status.ok(), local.ok()) << r.status.error_message();
      if (local.ok()) {
        EXPECT_EQ(r.response.onnx_model(), *local);
      } else {
        EXPECT_EQ(r.status.error_message(), local.error().message);
        EXPECT_EQ(r.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
      }
    }
}

// --signature and --io-names: the signature's subgraph, named after its
// aliases, as in process; a key the model lacks is INVALID_ARGUMENT.
TEST_F(RpcTest, SignatureOptionsReachTheCore) {
  const std::string model = two_signatures_model();
  v1::ConvertOptions options;
  options.set_signature("second");
  options.set_io_names(v1::IO_NAMES_SIGNATURE);
  ConvertResult r = convert(*channel_, model, options);
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  ConvertOptions core;
  core.signature = "second";
  core.io_names = IoNames::kSignature;
  EXPECT_EQ(r.response.onnx_model(), convert_in_process(model, core));
  EXPECT_NE(r.response.onnx_model(), convert_in_process(model));
  EXPECT_EQ(r.response.diagnostics().source_ops().at("ABS"), 2);
  ASSERT_EQ(r.response.diagnostics().io_layouts_size(), 2);
  EXPECT_EQ(r.response.diagnostics().io_layouts(0).tensor(), "x");

  options.set_signature("third");
  r = convert(*channel_, model, options);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(r.status.error_message(),
            "signature 'third': the model has no such signature; its signatures are 'first', "
            "'second'");
}

TEST_F(RpcTest, ConvertStreamInChunksEqualsUnary) {
  ConvertResult unary = convert(*channel_, model_);
  ASSERT_TRUE(unary.status.ok());
  for (bool announce : {true, false}) {
    StreamResult s = convert_stream(*channel_, model_, {}, 100, announce);
    ASSERT_TRUE(s.status.ok()) << s.status.error_message();
    EXPECT_TRUE(s.diagnostics_first);
    EXPECT_EQ(s.onnx_model, unary.response.onnx_model());
    EXPECT_EQ(s.diagnostics.onnx_bytes(), s.onnx_model.size());
  }
}

TEST_F(RpcTest, InspectDescribesTheModel) {
  auto stub = v1::Converter::NewStub(channel_);
  grpc::ClientContext ctx;
  v1::InspectRequest request;
  request.set_model(model_);
  v1::InspectResponse response;
  ASSERT_TRUE(stub->Inspect(&ctx, request, &response).ok());
  auto local = inspect(std::as_bytes(std::span(model_.data(), model_.size())));
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(response.tensors_size(), static_cast<int>(local->tensors.size()));
  ASSERT_EQ(response.ops_size(), static_cast<int>(local->ops.size()));
  EXPECT_EQ(response.ops(0).op(), local->ops[0].op);
  EXPECT_EQ(response.inputs_size(), 1);
  EXPECT_TRUE(response.unsupported().empty());
  const v1::TensorInfo& input = response.tensors(response.inputs(0));
  EXPECT_EQ(input.dtype(), local->tensors[local->inputs[0]].dtype);
  EXPECT_EQ(input.shape_size(), 4);
}

TEST_F(RpcTest, InspectListsSignatures) {
  auto stub = v1::Converter::NewStub(channel_);
  grpc::ClientContext ctx;
  v1::InspectRequest request;
  request.set_model(two_signatures_model());
  v1::InspectResponse response;
  ASSERT_TRUE(stub->Inspect(&ctx, request, &response).ok());
  EXPECT_EQ(response.subgraph(), 0);
  ASSERT_EQ(response.signatures_size(), 2);
  const v1::SignatureInfo& second = response.signatures(1);
  EXPECT_EQ(second.key(), "second");
  EXPECT_EQ(second.subgraph(), 1);
  ASSERT_EQ(second.inputs_size(), 1);
  EXPECT_EQ(second.inputs(0).alias(), "x");
  EXPECT_EQ(second.inputs(0).name(), "u0");
  EXPECT_EQ(second.outputs(0).tensor(), 2);
  EXPECT_EQ(second.outputs(0).dtype(), "FLOAT32");
  EXPECT_EQ(second.outputs(0).shape_size(), 2);
}

TEST_F(RpcTest, InspectListsUnsupportedOperators) {
  auto stub = v1::Converter::NewStub(channel_);
  grpc::ClientContext ctx;
  v1::InspectRequest request;
  request.set_model(unsupported_ops_model());
  v1::InspectResponse response;
  ASSERT_TRUE(stub->Inspect(&ctx, request, &response).ok());
  ASSERT_EQ(response.ops_size(), 4);
  EXPECT_TRUE(response.ops(0).supported());
  EXPECT_FALSE(response.ops(1).supported());
  EXPECT_EQ(response.ops(1).op(), "MyCustomOp");
  EXPECT_EQ(response.unsupported_size(), 3);
}

TEST_F(RpcTest, ListOperatorsIsTheSupportMatrix) {
  auto stub = v1::Converter::NewStub(channel_);
  grpc::ClientContext ctx;
  v1::ListOperatorsResponse response;
  ASSERT_TRUE(stub->ListOperators(&ctx, {}, &response).ok());
  int supported = 0, local_supported = 0;
  for (const auto& op : response.operators()) supported += op.supported();
  for (const auto& s : support_matrix()) local_supported += s.supported;
  EXPECT_EQ(supported, local_supported);
  EXPECT_EQ(response.converter_version(), version());
  EXPECT_EQ(response.min_opset(), kMinOpset);
  EXPECT_EQ(response.max_opset(), kMaxOpset);
  bool conv = false;
  for (const auto& op : response.operators()) {
    EXPECT_EQ(op.op().rfind("PLACEHOLDER", 0), std::string::npos);
    if (op.op() == "CONV_2D") {
      conv = true;
      EXPECT_TRUE(op.supported());
      EXPECT_EQ(op.layout_class(), "Implicit");
      EXPECT_FALSE(op.dtypes().empty());
    }
  }
  EXPECT_TRUE(conv);
}

TEST_F(RpcTest, ClientRequestIdIsKept) {
  auto stub = v1::Converter::NewStub(channel_);
  grpc::ClientContext ctx;
  ctx.AddMetadata("x-request-id", "pipeline-run-42");
  v1::ListOperatorsResponse response;
  ASSERT_TRUE(stub->ListOperators(&ctx, {}, &response).ok());
  const auto& md = ctx.GetServerInitialMetadata();
  ASSERT_EQ(md.count("x-request-id"), 1u);
  EXPECT_EQ(
      std::string(md.find("x-request-id")->second.data(), md.find("x-request-id")->second.size()),
      "pipeline-run-42");
  EXPECT_NE(server_->wait_for_log("request_id=pipeline-run-42").find("request_id=pipeline-run-42"),
            std::string::npos);
}

TEST_F(RpcTest, ConvertsAQuantizedModelFromTheCorpusInTheDefaultMode) {
  const std::string model = corpus_model("tflite2onnx/mobilenet_v1_0.25_128_quant.tflite");
  if (model.empty()) GTEST_SKIP() << "the shared model corpus is absent";
  ConvertResult r = convert(*channel_, model);
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_EQ(r.response.onnx_model(), convert_in_process(model));
  const v1::QuantizationReport& q = r.response.diagnostics().quantization();
  EXPECT_EQ(q.mode(), "auto");
  EXPECT_GT(q.integer_initializers(), 0);
  EXPECT_GT(q.quantized_activations(), 0);
}

// A real-world model from the shared corpus, when it is there.
TEST_F(RpcTest, ConvertsMobileNetFromTheCorpus) {
  const std::string model = corpus_model("tflite2onnx/mobilenet_v1_0.25_128.tflite");
  if (model.empty()) GTEST_SKIP() << "the shared model corpus is absent";
  ConvertResult unary = convert(*channel_, model);
  ASSERT_TRUE(unary.status.ok()) << unary.status.error_message();
  EXPECT_EQ(unary.response.onnx_model(), convert_in_process(model));
  StreamResult s = convert_stream(*channel_, model, {}, 64 * 1024);
  ASSERT_TRUE(s.status.ok()) << s.status.error_message();
  EXPECT_EQ(s.onnx_model, unary.response.onnx_model());
  EXPECT_GT(s.chunks_received, 2u);  // diagnostics, then more than one 1 MiB chunk
}

}  // namespace
}  // namespace lite2onnx::server_test
