// RFFT2D -> COMPLEX_ABS becomes a real-valued magnitude (no complex tensors).
#include <gtest/gtest.h>

#include <cstring>

#include "core/ir/builtins.h"
#include "core/ir/graph.h"
#include "core/passes/passes.h"
#include "graph_builder.h"

namespace lite2onnx {
namespace {

using ir::DataType;
using ir::TensorId;

struct SpectralGraph : testing::GraphBuilder {
  ir::NodeInfo& op(int code, std::vector<TensorId> in, std::vector<TensorId> out) {
    return g.info(tflite(code, std::move(in), std::move(out)));
  }
};

TEST(SpectralMagnitude, RfftReadThroughReshapeByComplexAbsBecomesReal) {
  SpectralGraph b;
  TensorId x = b.tensor("x", {4, 1, 16}, DataType::kFloat32);
  TensorId len = b.tensor("fft_length", {2}, DataType::kInt32);
  TensorId spec = b.tensor("spec", {4, 1, 9}, DataType::kComplex64);
  TensorId flat = b.tensor("flat", {4, 9}, DataType::kComplex64);
  TensorId mag = b.tensor("mag", {4, 9}, DataType::kFloat32);
  b.g.set_inputs({x});
  b.g.set_outputs({mag});
  b.op(ir::builtin::kRfft2d, {x, len}, {spec});
  b.op(ir::builtin::kReshape, {spec}, {flat});
  b.op(ir::builtin::kComplexAbs, {flat}, {mag});
  ASSERT_TRUE(passes::fuse_spectral_magnitude(b.g, b.ctx()).ok());
  EXPECT_EQ(b.at(0).attrs.get_int("magnitude"), 1);
  EXPECT_EQ(b.at(2).attrs.get_int("magnitude_input"), 1);
  EXPECT_EQ(b.g.tensor(spec).dtype, DataType::kFloat32);
  EXPECT_EQ(b.g.tensor(flat).dtype, DataType::kFloat32);
}

TEST(SpectralMagnitude, RfftWithAnotherReaderStaysComplex) {
  SpectralGraph b;
  TensorId x = b.tensor("x", {1, 16}, DataType::kFloat32);
  TensorId len = b.tensor("fft_length", {2}, DataType::kInt32);
  TensorId spec = b.tensor("spec", {1, 9}, DataType::kComplex64);
  TensorId mag = b.tensor("mag", {1, 9}, DataType::kFloat32);
  b.g.set_inputs({x});
  b.g.set_outputs({mag, spec});  // the complex spectrum itself is an output
  b.op(ir::builtin::kRfft2d, {x, len}, {spec});
  b.op(ir::builtin::kComplexAbs, {spec}, {mag});
  ASSERT_TRUE(passes::fuse_spectral_magnitude(b.g, b.ctx()).ok());
  EXPECT_FALSE(b.at(0).attrs.has("magnitude"));
  EXPECT_EQ(b.g.tensor(spec).dtype, DataType::kComplex64);
}

}  // namespace
}  // namespace lite2onnx
