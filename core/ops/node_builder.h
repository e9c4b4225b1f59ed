// Appends the ONNX nodes of one TFLite node that lowers to many (detection,
// MediaPipe's transforms): each node and constant gets a unique name under
// the TFLite node's, and intermediate tensors are typed, shape unknown.
#pragma once

#include <string>
#include <vector>

#include "core/ops/registry.h"

namespace lite2onnx::ops {

class NodeBuilder {
 public:
  NodeBuilder(LowerContext& ctx, const ir::Node& n) : ctx_(ctx), n_(n) {}

  // A node with one new output of `type`.
  ir::TensorId add(const std::string& op, std::vector<ir::TensorId> inputs, ir::DataType type,
                   std::vector<ir::Attr> attrs = {}) {
    const std::string suffix = op + "_" + std::to_string(count_++);
    ir::TensorId out = ctx_.temp(n_.name + "/" + suffix, type);
    into(op, std::move(inputs), {out}, std::move(attrs), suffix);
    return out;
  }
  // A node writing given outputs.
  void into(const std::string& op, std::vector<ir::TensorId> inputs,
            std::vector<ir::TensorId> outputs, std::vector<ir::Attr> attrs = {},
            std::string suffix = "") {
    if (suffix.empty()) suffix = op + "_" + std::to_string(count_++);
    ir::Node& node = ctx_.emit(n_, op, std::move(inputs), std::move(outputs), suffix);
    for (auto& a : attrs) node.attrs.set(a.name, std::move(a.value));
  }
  ir::TensorId temp(ir::DataType type) {
    return ctx_.temp(n_.name + "/t" + std::to_string(count_++), type);
  }
  ir::TensorId ints(std::vector<int64_t> values, std::optional<ir::Shape> shape = std::nullopt) {
    return ctx_.const_i64(n_.name + "/c" + std::to_string(count_++), std::move(values),
                          std::move(shape));
  }
  ir::TensorId floats(std::vector<float> values, std::optional<ir::Shape> shape = std::nullopt) {
    return ctx_.const_f32(n_.name + "/c" + std::to_string(count_++), std::move(values),
                          std::move(shape));
  }
  ir::TensorId doubles(std::vector<double> values, std::optional<ir::Shape> shape = std::nullopt) {
    return ctx_.const_f64(n_.name + "/c" + std::to_string(count_++), std::move(values),
                          std::move(shape));
  }
  ir::TensorId scalar(ir::DataType type, double v) {
    return ctx_.const_scalar(n_.name + "/c" + std::to_string(count_++), type, v);
  }

  ir::TensorId reshape(ir::TensorId x, std::vector<int64_t> shape, ir::DataType type) {
    return add("Reshape", {x, ints(std::move(shape))}, type);
  }
  // x[begin:end] along `axis`.
  ir::TensorId slice(ir::TensorId x, int64_t axis, int64_t begin, int64_t end, ir::DataType type) {
    return add("Slice", {x, ints({begin}), ints({end}), ints({axis})}, type);
  }
  ir::TensorId cast(ir::TensorId x, ir::DataType to) {
    return add("Cast", {x}, to, {{"to", int64_t{ir::onnx_type_code(to)}}});
  }

 private:
  LowerContext& ctx_;
  const ir::Node& n_;
  int count_ = 0;
};

}  // namespace lite2onnx::ops
