// Dilated convolution as TensorFlow writes it for TFLite:
//   SPACE_TO_BATCH_ND(block, paddings) -> CONV_2D / DEPTHWISE_CONV_2D (VALID)
//   -> BATCH_TO_SPACE_ND(block, crops)
// is one convolution with dilation = block. Along one spatial axis, with the
// input padded by [a, b] and the result cropped by [c0, c1], output element y
// reads padded input y + c0 + j*block, i.e. input y + (a - c0) + j*block: a
// dilated convolution padded by [a - c0, b - c1]. TensorFlow computes the
// paddings and crops at run time from the input shape
// (required_space_to_batch_paddings: SHAPE -> STRIDED_SLICE -> ADD -> FLOOR_MOD
// ...), but a - c0 and b - c1 do not depend on it: they are evaluated here as
// linear expressions over the values nobody can know before run time, and the
// pattern is fused when both are constants that match SAME or VALID padding.
#include <cstring>
#include <limits>
#include <map>

#include "core/ir/builtins.h"
#include "core/ir/shape.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

using ir::TensorId;

constexpr int64_t kMaxElements = 64;  // paddings and crops are [2, 2]
constexpr int kMaxDepth = 64;

// c + sum(coefficient * unknown), an unknown being one element of a tensor.
struct Linear {
  int64_t c = 0;
  std::map<std::pair<TensorId, int64_t>, int64_t> terms;
};

std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a + scale * b
std::optional<Linear> combine(Linear a, const Linear& b, int64_t scale) {
  auto c = checked_mul(b.c, scale);
  if (!c) return std::nullopt;
  auto sum = checked_add(a.c, *c);
  if (!sum) return std::nullopt;
  a.c = *sum;
  for (const auto& [atom, k] : b.terms) {
    auto term = checked_mul(k, scale);
    if (!term) return std::nullopt;
    auto total = checked_add(a.terms[atom], *term);
    if (!total) return std::nullopt;
    if (*total == 0) {
      a.terms.erase(atom);
    } else {
      a.terms[atom] = *total;
    }
  }
  return a;
}

using Values = std::optional<std::vector<Linear>>;

// Evaluates small integer tensors as linear expressions of unknown elements.
class Evaluator {
 public:
  explicit Evaluator(const ir::Graph& g) : g_(g) {}

  Values eval(TensorId t, int depth = 0) {
    if (!g_.valid(t)) return std::nullopt;
    if (auto it = memo_.find(t); it != memo_.end()) return it->second;
    Values v = compute(t, depth);
    memo_[t] = v;
    return v;
  }

 private:
  Values unknowns(TensorId t, int64_t count) {
    std::vector<Linear> out(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) out[static_cast<size_t>(i)].terms[{t, i}] = 1;
    return out;
  }

  Values compute(TensorId t, int depth) {
    const ir::Tensor& x = g_.tensor(t);
    if (x.dtype != ir::DataType::kInt32 && x.dtype != ir::DataType::kInt64) return std::nullopt;
    auto shape = ir::static_shape(x);
    auto count = shape ? ir::element_count(*shape) : std::nullopt;
    if (!count || *count > kMaxElements) return std::nullopt;
    if (x.is_const()) {
      auto ints = ir::const_ints(g_, t);
      if (!ints || static_cast<int64_t>(ints->size()) != *count) return std::nullopt;
      std::vector<Linear> out(ints->size());
      for (size_t i = 0; i < ints->size(); ++i) out[i].c = (*ints)[i];
      return out;
    }
    const ir::NodeId p = g_.producer(t);
    if (p == ir::kNoNode || depth >= kMaxDepth) return unknowns(t, *count);
    const ir::Node& n = g_.node(p);
    if (n.dialect != ir::Dialect::kTflite) return unknowns(t, *count);
    if (Values v = through(n, t, depth); v && static_cast<int64_t>(v->size()) == *count) return v;
    return unknowns(t, *count);
  }

  // The value of output `t` of node `n` from the values of its inputs.
  Values through(const ir::Node& n, TensorId t, int depth) {
    const ops::OpEntry& e = ops::lookup(n);
    if (e.evaluate.element_sources) {
      auto maps = ops::element_sources(g_, n, kMaxElements);
      if (!maps) return std::nullopt;
      for (size_t o = 0; o < n.outputs.size(); ++o) {
        if (n.outputs[o] != t) continue;
        if ((*maps)[o].in_order) return eval(n.inputs[0], depth + 1);
        std::vector<Linear> out;
        for (const auto& s : (*maps)[o].sources) {
          Values in = eval(n.inputs[s.input], depth + 1);
          if (!in || s.index >= static_cast<int64_t>(in->size())) return std::nullopt;
          out.push_back((*in)[static_cast<size_t>(s.index)]);
        }
        return out;
      }
      return std::nullopt;
    }
    const ops::Arithmetic op = e.evaluate.arithmetic;
    bool linear =
        op == ops::Arithmetic::kAdd || op == ops::Arithmetic::kSub || op == ops::Arithmetic::kMul;
    if (!linear || n.inputs.size() != 2 || n.outputs.size() != 1 ||
        n.attrs.get_string("fused_activation_function", "NONE") != "NONE")
      return std::nullopt;
    Values a = eval(n.inputs[0], depth + 1);
    Values b = eval(n.inputs[1], depth + 1);
    if (!a || !b) return std::nullopt;
    auto as = ir::static_shape(g_.tensor(n.inputs[0]));
    auto bs = ir::static_shape(g_.tensor(n.inputs[1]));
    if (!as || !bs) return std::nullopt;
    auto ys = ir::broadcast_shape(*as, *bs);
    if (!ys) return std::nullopt;
    std::vector<int64_t> ia = ir::broadcast_sources(*ys, *as);
    std::vector<int64_t> ib = ir::broadcast_sources(*ys, *bs);
    std::vector<Linear> out;
    for (size_t i = 0; i < ia.size(); ++i) {
      const Linear& x = (*a)[static_cast<size_t>(ia[i])];
      const Linear& y = (*b)[static_cast<size_t>(ib[i])];
      std::optional<Linear> r;
      if (op == ops::Arithmetic::kAdd) {
        r = combine(x, y, 1);
      } else if (op == ops::Arithmetic::kSub) {
        r = combine(x, y, -1);
      } else if (x.terms.empty()) {
        r = combine(Linear{}, y, x.c);
      } else if (y.terms.empty()) {
        r = combine(Linear{}, x, y.c);
      }
      if (!r) return std::nullopt;
      out.push_back(std::move(*r));
    }
    return out;
  }

  const ir::Graph& g_;
  std::map<TensorId, Values> memo_;
};

// The only node reading `t`, as input `slot`; kNoNode if there is another reader.
ir::NodeId only_reader(const ir::Graph& g, TensorId t, size_t slot) {
  if (!g.valid(t) || g.uses(t).size() != 1 || g.is_graph_output(t)) return ir::kNoNode;
  const ir::Use u = g.uses(t)[0];
  return u.slot == slot ? u.node : ir::kNoNode;
}

struct Fusion {
  int64_t block_h = 1, block_w = 1;
  bool same = false;
};

std::optional<Fusion> match(const ir::Graph& g, Evaluator& eval, const ir::Node& s,
                            const ir::Node& conv, const ir::Node& b) {
  if (s.inputs.size() != 3 || b.inputs.size() != 3 || b.outputs.size() != 1 ||
      conv.outputs.size() != 1 || conv.inputs.size() < 2)
    return std::nullopt;
  if (conv.attrs.get_string("padding") != "VALID" || conv.attrs.get_int("stride_h", 1) != 1 ||
      conv.attrs.get_int("stride_w", 1) != 1 || conv.attrs.get_int("dilation_h_factor", 1) != 1 ||
      conv.attrs.get_int("dilation_w_factor", 1) != 1)
    return std::nullopt;
  const ir::Tensor& x = g.tensor(s.inputs[0]);
  if (!x.has_rank || x.rank() != 4 || !g.valid(conv.inputs[1])) return std::nullopt;
  const ir::Tensor& w = g.tensor(conv.inputs[1]);
  if (!w.has_rank || w.rank() != 4 || w.shape[1] < 1 || w.shape[2] < 1) return std::nullopt;
  auto block = ir::const_ints(g, s.inputs[1]);
  auto block_b = ir::const_ints(g, b.inputs[1]);
  if (!block || block->size() != 2 || block != block_b || (*block)[0] < 1 || (*block)[1] < 1)
    return std::nullopt;
  Values pads = eval.eval(s.inputs[2]);
  Values crops = eval.eval(b.inputs[2]);
  if (!pads || !crops || pads->size() != 4 || crops->size() != 4) return std::nullopt;
  bool valid = true, same = true;
  for (size_t d = 0; d < 2; ++d) {
    auto begin = combine((*pads)[2 * d], (*crops)[2 * d], -1);
    auto end = combine((*pads)[2 * d + 1], (*crops)[2 * d + 1], -1);
    if (!begin || !end || !begin->terms.empty() || !end->terms.empty()) return std::nullopt;
    auto total = checked_mul(w.shape[1 + d] - 1, (*block)[d]);
    if (!total || *total > std::numeric_limits<int32_t>::max()) return std::nullopt;
    valid &= begin->c == 0 && end->c == 0;
    same &= begin->c == *total / 2 && end->c == *total - *total / 2;
  }
  if (!valid && !same) return std::nullopt;
  return Fusion{(*block)[0], (*block)[1], !valid};
}

}  // namespace

Status fuse_dilated_convolutions(ir::Graph& g, PassContext& ctx) {
  Evaluator eval(g);
  bool fused = false;
  for (ir::NodeId k : g.order()) {
    if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
    if (!g.alive(k)) continue;
    const ir::Node& s = g.node(k);
    if (s.dialect != ir::Dialect::kTflite || s.builtin != ir::builtin::kSpaceToBatchNd ||
        s.outputs.size() != 1 || s.inputs.empty())
      continue;
    const ir::NodeId c = only_reader(g, s.outputs[0], 0);
    if (c == ir::kNoNode) continue;
    const ir::Node& conv = g.node(c);
    if (conv.dialect != ir::Dialect::kTflite ||
        (conv.builtin != ir::builtin::kConv2d && conv.builtin != ir::builtin::kDepthwiseConv2d) ||
        conv.outputs.empty())
      continue;
    const ir::NodeId b = only_reader(g, conv.outputs[0], 0);
    if (b == ir::kNoNode) continue;
    const ir::Node& bts = g.node(b);
    if (bts.dialect != ir::Dialect::kTflite || bts.builtin != ir::builtin::kBatchToSpaceNd)
      continue;
    auto f = match(g, eval, s, conv, bts);
    if (!f) continue;
    const TensorId in = s.inputs[0], out = bts.outputs[0];
    g.remove_node(k);
    g.remove_node(b);
    g.set_input(c, 0, in);
    g.set_output(c, 0, out);
    ir::NodeInfo& info = g.info(c);
    info.attrs.set("dilation_h_factor", f->block_h);
    info.attrs.set("dilation_w_factor", f->block_w);
    info.attrs.set("padding", std::string(f->same ? "SAME" : "VALID"));
    fused = true;
  }
  if (!fused) return ok_status();
  // The paddings / crops arithmetic now feeds nothing.
  remove_dead_shape_nodes(g);
  return ok_status();
}

}  // namespace lite2onnx::passes
