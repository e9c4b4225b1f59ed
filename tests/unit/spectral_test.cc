// RFFT2D -> COMPLEX_ABS becomes a real-valued magnitude (no complex tensors).
#include <gtest/gtest.h>

#include <cstring>

#include "core/ir/builtins.h"
#include "core/ir/graph.h"
#include "core/passes/passes.h"

namespace lite2onnx {
namespace {

using ir::DataType;
using ir::TensorId;

struct SpectralGraph {
  TensorId tensor(const std::string& name, ir::Shape shape, DataType type) {
    ir::Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = type;
    return g.add_tensor(std::move(t));
  }
  ir::Node& op(int code, std::vector<TensorId> in, std::vector<TensorId> out) {
    ir::Node n;
    n.builtin = code;
    n.op = ir::builtin_name(code);
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    g.nodes.push_back(std::move(n));
    return g.nodes.back();
  }
  ir::Graph g;
};

TEST(SpectralMagnitude, RfftReadThroughReshapeByComplexAbsBecomesReal) {
  SpectralGraph b;
  TensorId x = b.tensor("x", {4, 1, 16}, DataType::kFloat32);
  TensorId len = b.tensor("fft_length", {2}, DataType::kInt32);
  TensorId spec = b.tensor("spec", {4, 1, 9}, DataType::kComplex64);
  TensorId flat = b.tensor("flat", {4, 9}, DataType::kComplex64);
  TensorId mag = b.tensor("mag", {4, 9}, DataType::kFloat32);
  b.g.inputs = {x};
  b.g.outputs = {mag};
  b.op(ir::builtin::kRfft2d, {x, len}, {spec});
  b.op(ir::builtin::kReshape, {spec}, {flat});
  b.op(ir::builtin::kComplexAbs, {flat}, {mag});
  passes::fuse_spectral_magnitude(b.g);
  EXPECT_EQ(b.g.nodes[0].attrs.get_int("magnitude"), 1);
  EXPECT_EQ(b.g.nodes[2].attrs.get_int("magnitude_input"), 1);
  EXPECT_EQ(b.g.tensor(spec).dtype, DataType::kFloat32);
  EXPECT_EQ(b.g.tensor(flat).dtype, DataType::kFloat32);
}

TEST(SpectralMagnitude, RfftWithAnotherReaderStaysComplex) {
  SpectralGraph b;
  TensorId x = b.tensor("x", {1, 16}, DataType::kFloat32);
  TensorId len = b.tensor("fft_length", {2}, DataType::kInt32);
  TensorId spec = b.tensor("spec", {1, 9}, DataType::kComplex64);
  TensorId mag = b.tensor("mag", {1, 9}, DataType::kFloat32);
  b.g.inputs = {x};
  b.g.outputs = {mag, spec};  // the complex spectrum itself is an output
  b.op(ir::builtin::kRfft2d, {x, len}, {spec});
  b.op(ir::builtin::kComplexAbs, {spec}, {mag});
  passes::fuse_spectral_magnitude(b.g);
  EXPECT_FALSE(b.g.nodes[0].attrs.has("magnitude"));
  EXPECT_EQ(b.g.tensor(spec).dtype, DataType::kComplex64);
}

}  // namespace
}  // namespace lite2onnx
