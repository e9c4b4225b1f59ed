// Keras' TensorList loops as dense tensors (docs/architecture.md, "TensorList
// loops"). A list is a VARIANT tensor; every tensor that can hold the same
// list (an op's input and output, a loop's argument, its body's parameter and
// result) falls into one class, and a class whose element type, length and
// element shape are known becomes a tensor [length, element shape] of the
// element type:
//   TensorListReserve    -> a constant of zeros (TF: unset items read as zeros)
//   TensorListFromTensor -> RESHAPE of the tensor
//   TensorListGetItem    -> GATHER (axis 0)
//   TensorListSetItem    -> SELECT_V2(EQUAL(iota, index), EXPAND_DIMS(item), list)
//   TensorListStack      -> RESHAPE of the list
//   TensorListLength     -> a constant
// Builtins, so the passes after this one (shapes, layouts, folding) treat
// them like any other op. An element dimension known only at run time (a
// dynamic batch) is 1 in the initial zeros and dynamic in the list: SELECT_V2
// broadcasts the first item into it.
#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "core/ir/builtins.h"
#include "core/ops/registry.h"
#include "core/passes/passes.h"

namespace lite2onnx::passes {
namespace {

namespace builtin = ir::builtin;
using ir::TensorId;

constexpr std::string_view kPrefix = "FlexTensorList";

bool is_list_op(const ir::Node& n) {
  return n.dialect == ir::Dialect::kTflite && n.builtin == builtin::kCustom &&
         std::string_view(n.op).starts_with(kPrefix);
}
std::string_view list_op(const ir::Node& n) { return std::string_view(n.op).substr(4); }

// A tensor of some graph: the key of the union-find.
using Slot = std::pair<ir::Graph*, TensorId>;

// What is known of one list: its element type, length and element shape
// (-1: not known yet), and why it cannot be made dense.
struct ListType {
  std::optional<ir::DataType> dtype;
  std::optional<int64_t> length;
  std::optional<ir::Shape> element;
  std::string problem;
};

class Lists {
 public:
  Lists(ir::Graph& main, size_t max_rank) : main_(main), max_rank_(max_rank) {}

  Status run(PassContext& ctx) {
    bool any = false;
    ir::for_each_graph(main_, [&](ir::Graph& g) {
      for (const ir::Node& n : g.nodes()) any = any || is_list_op(n);
    });
    if (!any) return ok_status();
    ir::for_each_graph(main_, [&](ir::Graph& g) { link(g); });
    ir::for_each_graph(main_, [&](ir::Graph& g) { constrain(g); });
    for (auto& [slot, parent] : parent_) {
      ListType& t = type_[find(slot)];
      if (!t.problem.empty()) continue;
      if (!t.dtype)
        t.problem = "the list's element type is not known";
      else if (!t.length)
        t.problem = "the list's length is not known (a constant num_elements)";
      else if (!t.element)
        t.problem = "the list's element shape is not known";
    }
    Status status = ok_status();
    ir::for_each_graph(main_, [&](ir::Graph& g) {
      if (status) status = rewrite(g, ctx);
    });
    return status;
  }

 private:
  Slot find(Slot s) {
    auto it = parent_.find(s);
    if (it == parent_.end()) {
      parent_[s] = s;
      return s;
    }
    if (it->second == s) return s;
    Slot root = find(it->second);
    parent_[s] = root;
    return root;
  }
  void unite(Slot a, Slot b) {
    Slot ra = find(a), rb = find(b);
    if (ra == rb) return;
    parent_[ra] = rb;
    merge(type_[rb], type_[ra]);
    type_.erase(ra);
  }
  static bool is_list(const ir::Graph& g, TensorId t) {
    return g.valid(t) && g.tensor(t).dtype == ir::DataType::kVariant;
  }

  // Classes: a list op's input list and output list; a control-flow node's
  // operands and its subgraphs' parameters and results.
  void link(ir::Graph& g) {
    for (ir::NodeId k : g.order()) {
      const ir::Node& n = g.node(k);
      if (is_list_op(n)) {
        for (auto list : {&n.inputs, &n.outputs})
          for (TensorId t : *list)
            if (is_list(g, t)) find({&g, t});
        if ((list_op(n) == "TensorListSetItem") && n.inputs.size() >= 1 && n.outputs.size() == 1 &&
            is_list(g, n.inputs[0]) && is_list(g, n.outputs[0]))
          unite({&g, n.inputs[0]}, {&g, n.outputs[0]});
        continue;
      }
      const ops::OpEntry& e = ops::lookup(n);
      for (size_t s = 0; s < n.subgraphs.size(); ++s) {
        if (!e.subgraph_binding) break;
        ir::Graph& sub = g.info(k).subgraphs[s].graph();
        const ops::SubgraphBinding b = e.subgraph_binding(n, s);
        const auto& ins = sub.inputs();
        const auto& outs = sub.outputs();
        for (size_t i = 0; i < b.inputs.size() && i < ins.size(); ++i) {
          const size_t slot = static_cast<size_t>(b.inputs[i]);
          if (slot < n.inputs.size() && is_list(g, n.inputs[slot]) && is_list(sub, ins[i]))
            unite({&g, n.inputs[slot]}, {&sub, ins[i]});
        }
        for (size_t j = 0; j < b.outputs.size() && j < outs.size(); ++j) {
          if (b.outputs[j] < 0) continue;
          const size_t slot = static_cast<size_t>(b.outputs[j]);
          if (slot < n.outputs.size() && is_list(g, n.outputs[slot]) && is_list(sub, outs[j]))
            unite({&g, n.outputs[slot]}, {&sub, outs[j]});
        }
        for (size_t i = 0; i < b.carried.size() && i < ins.size(); ++i) {
          const size_t j = static_cast<size_t>(b.carried[i]);
          if (j < outs.size() && is_list(sub, ins[i]) && is_list(sub, outs[j]))
            unite({&sub, ins[i]}, {&sub, outs[j]});
        }
      }
      // A list any other op reads or writes cannot be made dense.
      if (n.subgraphs.empty())
        for (auto list : {&n.inputs, &n.outputs})
          for (TensorId t : *list)
            if (is_list(g, t))
              fail({&g, t}, "'" + g.tensor(t).name + "' is read or written by " + n.op +
                                ", which is not a TensorList op");
    }
  }

  static void merge(ListType& into, const ListType& from) {
    if (!from.problem.empty() && into.problem.empty()) into.problem = from.problem;
    if (from.dtype) note_dtype(into, *from.dtype);
    if (from.length) note_length(into, *from.length);
    if (from.element) note_element(into, *from.element);
  }
  static void note_dtype(ListType& t, ir::DataType d) {
    if (t.dtype && *t.dtype != d && t.problem.empty())
      t.problem = std::string("its elements are ") + ir::to_string(*t.dtype) +
                  " in one place and " + ir::to_string(d) + " in another";
    if (!t.dtype) t.dtype = d;
  }
  static void note_length(ListType& t, int64_t n) {
    if (n < 0) return;
    if (t.length && *t.length != n && t.problem.empty())
      t.problem = "its length is " + std::to_string(*t.length) + " in one place and " +
                  std::to_string(n) + " in another";
    if (!t.length) t.length = n;
  }
  static void note_element(ListType& t, const ir::Shape& s) {
    if (!t.element) {
      t.element = s;
      return;
    }
    if (t.element->size() != s.size()) {
      if (t.problem.empty())
        t.problem = "its elements have rank " + std::to_string(t.element->size()) +
                    " in one place and " + std::to_string(s.size()) + " in another";
      return;
    }
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& d = (*t.element)[i];
      if (d < 0)
        d = s[i];
      else if (s[i] >= 0 && s[i] != d && t.problem.empty())
        t.problem = "its element dimension " + std::to_string(i) + " is " + std::to_string(d) +
                    " in one place and " + std::to_string(s[i]) + " in another";
    }
  }
  void fail(Slot s, const std::string& why) {
    ListType& t = type_[find(s)];
    if (t.problem.empty()) t.problem = why;
  }

  // A constant integer vector (or scalar), or nullopt.
  static std::optional<std::vector<int64_t>> ints(const ir::Graph& g, TensorId t) {
    if (!g.valid(t) || !g.tensor(t).is_const()) return std::nullopt;
    const ir::ConstData& d = *g.tensor(t).data;
    std::vector<int64_t> out;
    if (d.stored_type == ir::DataType::kInt32)
      for (int32_t v : d.as<int32_t>()) out.push_back(v);
    else if (d.stored_type == ir::DataType::kInt64)
      for (int64_t v : d.as<int64_t>()) out.push_back(v);
    else
      return std::nullopt;
    return out;
  }
  static std::optional<ir::DataType> element_dtype(const ir::Node& n) {
    if (!n.attrs.has("element_dtype")) return std::nullopt;
    return static_cast<ir::DataType>(n.attrs.get_int("element_dtype"));
  }
  // What each op says of its list.
  void constrain(ir::Graph& g) {
    for (ir::NodeId k : g.order()) {
      const ir::Node& n = g.node(k);
      if (!is_list_op(n)) continue;
      const std::string_view op = list_op(n);
      const bool makes = op == "TensorListReserve" || op == "TensorListFromTensor";
      const TensorId list = makes ? (n.outputs.empty() ? ir::kNoTensor : n.outputs[0])
                                  : (n.inputs.empty() ? ir::kNoTensor : n.inputs[0]);
      if (!is_list(g, list)) continue;  // the rewrite names it
      const Slot s{&g, list};
      ListType t;
      if (auto d = element_dtype(n)) t.dtype = d;
      if (n.attrs.has("element_dtype_tf"))
        t.problem = "element type " + std::to_string(n.attrs.get_int("element_dtype_tf")) +
                    " (tensorflow.DataType) is not converted";
      auto tensor_of = [&](size_t i, bool output) -> const ir::Tensor* {
        const auto& v = output ? n.outputs : n.inputs;
        return i < v.size() && g.valid(v[i]) ? &g.tensor(v[i]) : nullptr;
      };
      auto element_from = [&](const ir::Tensor* x, bool rows) {
        if (!x || !x->has_rank) return;
        if (x->quant || x->quantized_type)
          t.problem = "its elements are quantized ('" + x->name + "'): not converted";
        note_dtype(t, x->dtype);
        if (rows) {
          if (x->shape.empty()) return;
          note_length(t, x->shape[0]);
          note_element(t, ir::Shape(x->shape.begin() + 1, x->shape.end()));
        } else {
          note_element(t, x->shape);
        }
      };
      if (op == "TensorListReserve") {
        auto shape = ints(g, n.inputs.size() > 0 ? n.inputs[0] : ir::kNoTensor);
        auto count = ints(g, n.inputs.size() > 1 ? n.inputs[1] : ir::kNoTensor);
        if (count && count->size() == 1) {
          if ((*count)[0] < 0)
            t.problem = "num_elements is " + std::to_string((*count)[0]);
          else
            note_length(t, (*count)[0]);
        }
        // A scalar -1 is an unknown rank: the items give it.
        if (shape && shape->size() + 1 > max_rank_)
          t.problem = "its element shape has rank " + std::to_string(shape->size()) +
                      ", past the limit (max_rank)";
        else if (shape && !(shape->size() == 1 && g.tensor(n.inputs[0]).shape.empty()))
          note_element(t, ir::Shape(shape->begin(), shape->end()));
      } else if (op == "TensorListFromTensor") {
        element_from(tensor_of(0, false), true);
      } else if (op == "TensorListSetItem") {
        element_from(tensor_of(2, false), false);
        if (n.attrs.get_int("resize_if_index_out_of_bounds") != 0)
          t.problem = "resize_if_index_out_of_bounds is not converted";
      } else if (op == "TensorListGetItem") {
        element_from(tensor_of(0, true), false);
      } else if (op == "TensorListStack") {
        element_from(tensor_of(0, true), true);
        const int64_t num = n.attrs.get_int("num_elements", -1);
        if (num >= 0) note_length(t, num);
      }
      ListType& into = type_[find(s)];
      merge(into, t);
    }
  }

  // ---- the rewrite ----------------------------------------------------------

  Status rewrite(ir::Graph& g, PassContext& ctx) {
    // The list tensors first: each takes its class's dense type.
    for (size_t i = 0; i < g.tensor_count(); ++i) {
      const TensorId id = static_cast<TensorId>(i);
      if (!is_list(g, id) || !parent_.contains({&g, id})) continue;
      const ListType& t = type_[find({&g, id})];
      if (!t.problem.empty()) continue;
      ir::Tensor& x = g.tensor(id);
      x.dtype = *t.dtype;
      x.shape = dense_shape(t, -1);
      x.has_rank = true;
    }
    for (ir::NodeId k : g.order()) {
      if (ctx.checkpoint.should_stop()) return ctx.checkpoint.status();
      const ir::Node& n = g.node(k);
      if (!is_list_op(n)) continue;
      if (auto st = rewrite_op(g, k); !st) return st;
    }
    return check_created_bytes(g);
  }

  static ir::Shape dense_shape(const ListType& t, int64_t unknown) {
    ir::Shape s{*t.length};
    for (int64_t d : *t.element) s.push_back(d < 0 ? unknown : d);
    return s;
  }

  // The list op `k` reads or writes, and its class (nullptr: none).
  const ListType* type_of(ir::Graph& g, const ir::Node& n) {
    const std::string_view op = list_op(n);
    const bool makes = op == "TensorListReserve" || op == "TensorListFromTensor";
    const auto& v = makes ? n.outputs : n.inputs;
    if (v.empty() || !g.valid(v[0])) return nullptr;
    auto it = parent_.find({&g, v[0]});
    if (it == parent_.end()) return nullptr;
    return &type_[find({&g, v[0]})];
  }

  TensorId constant(ir::Graph& g, const std::string& name, ir::DataType type, ir::Shape shape,
                    std::vector<std::byte> bytes) {
    ir::Tensor t;
    t.name = name;
    t.dtype = type;
    t.shape = std::move(shape);
    t.data = g.own(std::move(bytes), type, name);
    return g.add_tensor(std::move(t));
  }
  TensorId int32s(ir::Graph& g, const std::string& name, const std::vector<int64_t>& values,
                  ir::Shape shape) {
    std::vector<std::byte> bytes(values.size() * 4);
    for (size_t i = 0; i < values.size(); ++i) {
      const auto v = static_cast<int32_t>(values[i]);
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
    return constant(g, name, ir::DataType::kInt32, std::move(shape), std::move(bytes));
  }

  // A TFLite builtin node standing for list op `from`.
  static ir::Node builtin_node(const ir::Node& from, int code, const char* op,
                               const std::string& suffix) {
    ir::Node b;
    b.builtin = code;
    b.op = op;
    b.name = from.name + suffix;
    b.source_op = from.source_op;
    b.source_subgraph = from.source_subgraph;
    return b;
  }
  // Turns node k into builtin `code` reading `inputs`.
  static void become(ir::Graph& g, ir::NodeId k, int code, const char* op,
                     std::vector<TensorId> inputs, ir::Attributes attrs = {}) {
    ir::NodeInfo& info = g.info(k);
    info.builtin = code;
    info.op = op;
    info.attrs = std::move(attrs);
    g.set_inputs(k, std::move(inputs));
  }

  Status rewrite_op(ir::Graph& g, ir::NodeId k) {
    const ir::Node& n = g.node(k);
    const std::string_view op = list_op(n);
    const ListType* t = type_of(g, n);
    std::string problem = t ? t->problem : "it reads or writes no list";
    if (problem.empty() && ("Flex" + n.attrs.get_string("tf_op")) != n.op)
      problem = "its options name op '" + n.attrs.get_string("tf_op") + "'";
    if (!problem.empty()) {
      g.info(k).attrs.set("tensor_list_problem", problem);
      return ok_status();
    }
    const ir::Shape dense = dense_shape(*t, -1);
    const std::string name = n.name;
    // Its zeros (and SetItem's positions) must fit the created-bytes budget:
    // checked before they are allocated.
    const ir::Shape initial = dense_shape(*t, 1);
    const auto count = ir::element_count(initial);
    const uint64_t size = std::max<uint64_t>(ir::element_size(*t->dtype), 4);
    if (!count || static_cast<uint64_t>(*count) > g.created().limit() / size ||
        !g.created().fits(static_cast<uint64_t>(*count) * size))
      return make_error(ErrorCode::kResourceLimit,
                        "op " + std::to_string(n.source_op) + " (" + n.op + "): a TensorList of " +
                            ir::to_string(initial) +
                            " elements passes the limit on the bytes the conversion creates "
                            "(max_created_bytes)");
    if (op == "TensorListReserve") {
      // Zeros, 1 where a dimension is known only at run time.
      const TensorId out = n.outputs[0];
      g.remove_node(k);
      ir::Tensor& x = g.tensor(out);
      x.shape = initial;
      x.data =
          g.own(std::vector<std::byte>(static_cast<size_t>(*count) * ir::element_size(*t->dtype)),
                *t->dtype, x.name + " (an empty TensorList)");
      return ok_status();
    }
    if (op == "TensorListLength") {
      const TensorId out = n.outputs.empty() ? ir::kNoTensor : n.outputs[0];
      if (!g.valid(out)) return ok_status();
      g.remove_node(k);
      ir::Tensor& x = g.tensor(out);
      const auto v = static_cast<int32_t>(*t->length);
      std::vector<std::byte> bytes(4);
      std::memcpy(bytes.data(), &v, 4);
      x.dtype = ir::DataType::kInt32;
      x.shape = {};
      x.has_rank = true;
      x.data = g.own(std::move(bytes), ir::DataType::kInt32, x.name);
      return ok_status();
    }
    // RESHAPE to the dense shape (one dimension known only at run time: -1).
    auto reshape_to = [&](TensorId from) -> Status {
      if (std::count(dense.begin(), dense.end(), int64_t{-1}) > 1) {
        g.info(k).attrs.set("tensor_list_problem",
                            "more than one element dimension is known only at run time");
        return ok_status();
      }
      ir::Attributes a;
      a.set("new_shape", std::vector<int64_t>(dense));
      const TensorId shape =
          int32s(g, name + "/shape", dense, ir::Shape{static_cast<int64_t>(dense.size())});
      become(g, k, builtin::kReshape, "RESHAPE", {from, shape}, std::move(a));
      return ok_status();
    };
    if (op == "TensorListFromTensor") return reshape_to(n.inputs[0]);
    if (op == "TensorListStack") return reshape_to(n.inputs[0]);
    if (op == "TensorListGetItem") {
      ir::Attributes a;
      a.set("axis", int64_t{0});
      a.set("batch_dims", int64_t{0});
      become(g, k, builtin::kGather, "GATHER", {n.inputs[0], n.inputs[1]}, std::move(a));
      return ok_status();
    }
    // SetItem: SELECT_V2(EQUAL(iota, index), EXPAND_DIMS(item, 0), list).
    const TensorId list = n.inputs[0], index = n.inputs[1], item = n.inputs[2];
    if (!g.valid(index) || g.tensor(index).dtype != ir::DataType::kInt32 ||
        ir::element_count(g.tensor(index).shape).value_or(0) != 1) {
      g.info(k).attrs.set("tensor_list_problem", "its index is not one int32");
      return ok_status();
    }
    ir::Shape mask_shape(dense.size(), 1);
    mask_shape[0] = *t->length;
    std::vector<int64_t> iota(static_cast<size_t>(*t->length));
    std::iota(iota.begin(), iota.end(), 0);
    const TensorId positions = int32s(g, name + "/positions", iota, mask_shape);
    ir::Tensor mask;
    mask.name = name + "/is_index";
    mask.dtype = ir::DataType::kBool;
    mask.shape = mask_shape;
    const TensorId is_index = g.add_tensor(std::move(mask));
    ir::Node equal = builtin_node(n, builtin::kEqual, "EQUAL", "/is_index");
    equal.inputs = {positions, index};
    equal.outputs = {is_index};
    ir::Tensor row = g.tensor(item);
    row.name = name + "/row";
    row.data.reset();
    row.shape.insert(row.shape.begin(), 1);
    const TensorId as_row = g.add_tensor(std::move(row));
    ir::Node expand = builtin_node(n, builtin::kExpandDims, "EXPAND_DIMS", "/row");
    expand.inputs = {item, int32s(g, name + "/axis", {0}, {})};
    expand.outputs = {as_row};
    g.add_node_before(k, std::move(equal));
    g.add_node_before(k, std::move(expand));
    become(g, k, builtin::kSelectV2, "SELECT_V2", {is_index, as_row, list});
    return ok_status();
  }

  ir::Graph& main_;
  size_t max_rank_;
  std::map<Slot, Slot> parent_;
  std::map<Slot, ListType> type_;  // by class root
};

}  // namespace

Status lower_tensor_lists(ir::Graph& g, PassContext& ctx) {
  return Lists(g, ctx.options.limits.max_rank).run(ctx);
}

}  // namespace lite2onnx::passes
