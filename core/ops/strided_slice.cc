// STRIDED_SLICE: TensorFlow's sparse slice spec (ellipsis, new-axis, shrink,
// begin and end masks, offset) read once into a dense spec, which both the
// lowering (Slice + Squeeze/Unsqueeze) and the conversion-time evaluation
// (OpEntry::evaluate.element_sources) use.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/evaluate.h"
#include "core/ops/exact.h"
#include "core/ops/families.h"
#include "core/ops/shape_inference.h"

namespace lite2onnx::ops::shape {
namespace {

using ir::Perm;
using ir::Shape;
using ir::TensorId;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// One input dimension of the dense spec.
struct SliceDim {
  bool whole = true;    // every element in order: not named, or both ends masked with stride 1
  bool shrink = false;  // shrink_axis: the one element at `begin`, the dimension removed
  bool begin_masked = false, end_masked = false;
  int64_t begin = 0, end = 0, stride = 1;  // as written (0 when begin and end are run-time values)
  size_t entry = 0;                        // its entry in begin, end and strides
};

struct SliceSpec {
  std::vector<SliceDim> dims;     // one per input dimension
  std::vector<int> shrink_axes;   // input dimensions removed
  std::vector<int64_t> new_axes;  // positions of inserted unit dims in the output
  bool offset = false;            // end counts from begin (StridedSliceOptions.offset)
  // begin or end is computed at run time (a loop counter): the spec's shape
  // is known, its bounds are read at run time.
  bool runtime = false;
};

// The length of a run-time begin or end vector (static, 1-D, integer), or nullopt.
std::optional<size_t> runtime_length(const ir::Graph& g, TensorId t) {
  if (!g.valid(t)) return std::nullopt;
  const ir::Tensor& x = g.tensor(t);
  if (x.dtype != ir::DataType::kInt32 && x.dtype != ir::DataType::kInt64) return std::nullopt;
  if (x.rank() != 1 || x.shape[0] < 0) return std::nullopt;
  return static_cast<size_t>(x.shape[0]);
}

std::optional<SliceSpec> slice_spec(const ir::Graph& g, const ir::Node& n, Refusal* why) {
  auto begin = ir::const_ints(g, n.inputs[1]);
  auto end = ir::const_ints(g, n.inputs[2]);
  auto strides = ir::const_ints(g, n.inputs[3]);
  bool runtime = false;
  if (strides && (!begin || !end)) {
    // Bounds computed at run time: their length must be known.
    auto b = begin ? std::optional<size_t>(begin->size()) : runtime_length(g, n.inputs[1]);
    auto e = end ? std::optional<size_t>(end->size()) : runtime_length(g, n.inputs[2]);
    if (b && e && *b == strides->size() && *e == strides->size()) {
      runtime = true;
      begin = std::vector<int64_t>(strides->size(), 0);
      end = std::vector<int64_t>(strides->size(), 0);
    }
  }
  if (!begin || !end || !strides || begin->size() != end->size() ||
      begin->size() != strides->size()) {
    *why = {ReasonCode::kRuntimeValue,
            "begin, end and strides must be constants of equal length (begin and end may be 1-D "
            "integer tensors computed at run time)"};
    return std::nullopt;
  }
  const size_t rank = g.tensor(n.inputs[0]).rank();
  const size_t m = begin->size();
  auto bit = [&](const char* mask, size_t i) {
    return i < 32 && ((n.attrs.get_int(mask) >> i) & 1) != 0;  // TFLite masks are int32
  };
  SliceSpec spec;
  spec.dims.resize(rank);
  spec.offset = n.attrs.get_int("offset") != 0;
  spec.runtime = runtime;
  size_t dense = 0;
  int64_t out_pos = 0;
  bool saw_ellipsis = false;
  for (size_t i = 0; i < m; ++i) {
    if (bit("ellipsis_mask", i) && !saw_ellipsis) {
      saw_ellipsis = true;
      size_t later = 0;
      for (size_t j = i + 1; j < m; ++j) later += !bit("new_axis_mask", j);
      size_t cover = rank >= dense + later ? rank - dense - later : 0;
      dense += cover;
      out_pos += static_cast<int64_t>(cover);
      continue;
    }
    if (bit("new_axis_mask", i)) {
      spec.new_axes.push_back(out_pos++);
      continue;
    }
    if (dense >= rank) {
      *why = {ReasonCode::kOperands, "slice spec has more entries than the input has dimensions"};
      return std::nullopt;
    }
    SliceDim d;
    d.entry = i;
    d.stride = (*strides)[i];
    if (d.stride == 0 || d.stride == kMin) {
      *why = {ReasonCode::kOperands, "stride " + std::to_string(d.stride)};
      return std::nullopt;
    }
    d.begin = (*begin)[i];
    d.end = (*end)[i];
    d.shrink = bit("shrink_axis_mask", i);
    if (d.shrink) {
      d.whole = false;
      spec.shrink_axes.push_back(static_cast<int>(dense));
    } else {
      d.begin_masked = bit("begin_mask", i);
      d.end_masked = bit("end_mask", i);
      d.whole = d.begin_masked && d.end_masked && d.stride == 1;
      ++out_pos;
    }
    spec.dims[dense++] = d;
  }
  return spec;
}

// A dimension of static size `size` as TFLite's kernel slices it
// (StridedSliceStartForAxis / StridedSliceEndForAxis): first element, count.
struct Resolved {
  int64_t start = 0, count = 0;
};
std::optional<Resolved> resolve(const SliceDim& d, int64_t size, bool offset) {
  if (d.whole) return Resolved{0, size};
  const int64_t s = d.stride;
  int64_t b = d.begin;
  if (d.shrink) {
    if (b < 0) b += size;
    if (b < 0 || b >= size) return std::nullopt;
    return Resolved{b, 1};
  }
  if (b < 0) b += size;
  b = s > 0 ? std::clamp<int64_t>(b, 0, size) : std::clamp<int64_t>(b, -1, size - 1);
  if (d.begin_masked) b = s > 0 ? 0 : size - 1;
  int64_t e = d.end;
  if (offset && __builtin_add_overflow(e, b, &e)) return std::nullopt;
  if (e < 0) e += size;
  e = s > 0 ? std::clamp<int64_t>(e, 0, size) : std::clamp<int64_t>(e, -1, size - 1);
  if (d.end_masked) e = s > 0 ? size : -1;
  int64_t count = 0;
  if (s > 0 && e > b) count = (e - b - 1) / s + 1;
  if (s < 0 && b > e) count = (b - e - 1) / -s + 1;
  return Resolved{b, count};
}

Check check_strided_slice(const ir::Graph& g, const ir::Node& n) {
  if (auto r = require_const(g, n, 3, "strides")) return r;
  Refusal why;
  auto spec = slice_spec(g, n, &why);
  if (!spec) return why;
  const Shape& xs = g.tensor(n.inputs[0]).shape;
  if (spec->runtime) {
    if (spec->offset)
      return refuse(ReasonCode::kRuntimeValue,
                    "offset slicing with begin or end computed at run time");
    for (size_t d = 0; d < spec->dims.size(); ++d)
      if (spec->dims[d].shrink && xs[d] < 0)
        return refuse(ReasonCode::kRuntimeValue,
                      "shrinking dimension " + std::to_string(d) +
                          " of unknown size at an index computed at run time");
    return {};
  }
  for (size_t d = 0; d < spec->dims.size(); ++d) {
    const SliceDim& s = spec->dims[d];
    if (s.whole) continue;
    if (xs[d] < 0) {
      if (spec->offset)
        return refuse(ReasonCode::kShape,
                      "offset slicing of dimension " + std::to_string(d) + ", of unknown size");
      continue;
    }
    if (!resolve(s, xs[d], spec->offset))
      return refuse(ReasonCode::kOperands,
                    s.shrink ? "shrink index " + std::to_string(s.begin) +
                                   " out of range for dimension " + std::to_string(d)
                             : "end of dimension " + std::to_string(d) + " overflows");
  }
  return {};
}

std::optional<LayoutPlan> propagate_strided_slice(const ir::Graph& g, const ir::Node& n,
                                                  std::span<const Perm> in) {
  Refusal why;
  auto spec = slice_spec(g, n, &why);
  Perm p = in.empty() ? Perm{} : in[0];
  if (!spec || (!spec->new_axes.empty() && !p.empty())) return std::nullopt;
  LayoutPlan plan;
  plan.inputs.assign(n.inputs.size(), Perm{});
  plan.inputs[0] = p;
  plan.outputs.assign(n.outputs.size(),
                      ir::drop_axes(p, spec->shrink_axes, g.tensor(n.inputs[0]).rank()));
  return plan;
}

// ONNX Slice bounds of one dimension. Without offset, the bounds as written
// (ONNX clamps them as TFLite does); with offset, the end depends on the
// resolved begin, so both are resolved (check_strided_slice requires a static
// size then).
struct Bounds {
  int64_t begin, end, stride;
};
Bounds onnx_bounds(const SliceDim& d, int64_t size, bool offset) {
  const int64_t s = d.stride;
  if (d.shrink) {
    int64_t b = d.begin;
    if (b < 0 && size >= 0) b += size;
    return {b, b == -1 ? kMax : b + 1, 1};
  }
  if (offset && size >= 0) {
    Resolved r = *resolve(d, size, true);
    int64_t e = r.start + r.count * s;
    if (e < 0) e = kMin;  // one before the first element, not counted from the back
    return {r.start, e, s};
  }
  return {d.begin_masked ? (s > 0 ? 0 : kMax) : d.begin,
          d.end_masked ? (s > 0 ? kMax : kMin) : d.end, s};
}

// The Slice bounds of the sliced dimensions when begin or end is computed at
// run time: the entries of each vector (as int64) picked for those
// dimensions; a masked bound is its constant default, a shrunk dimension
// starts at the index made non-negative (Mod by the dimension's static size,
// as TFLite adds the size once) and ends one past it.
std::pair<TensorId, TensorId> runtime_bounds(LowerContext& ctx, const ir::Node& n,
                                             const SliceSpec& spec, const Shape& xs) {
  std::vector<int64_t> entries, sizes, start_default, end_default;
  std::vector<uint8_t> begin_masked, end_masked, shrink;
  for (size_t d = 0; d < spec.dims.size(); ++d) {
    const SliceDim& s = spec.dims[d];
    if (s.whole) continue;
    entries.push_back(static_cast<int64_t>(s.entry));
    sizes.push_back(s.shrink ? xs[d] : 1);
    start_default.push_back(s.stride > 0 ? 0 : kMax);
    end_default.push_back(s.stride > 0 ? kMax : kMin);
    begin_masked.push_back(s.begin_masked);
    end_masked.push_back(s.end_masked);
    shrink.push_back(s.shrink);
  }
  const ir::Graph& g = ctx.graph();
  const int64_t k = static_cast<int64_t>(entries.size());
  auto vec = [&](const std::string& name) {
    const TensorId t = ctx.temp(n.name + "/" + name, ir::DataType::kInt64);
    ctx.graph().tensor(t).has_rank = true;
    ctx.graph().tensor(t).shape = {k};
    return t;
  };
  auto flags = [&](const std::string& name, const std::vector<uint8_t>& bits) {
    ir::Tensor t;
    t.name = n.name + "/" + name;
    t.dtype = ir::DataType::kBool;
    t.shape = {k};
    std::vector<std::byte> bytes(bits.size());
    for (size_t i = 0; i < bits.size(); ++i) bytes[i] = std::byte{bits[i]};
    t.data = ctx.graph().own(std::move(bytes), ir::DataType::kBool, t.name);
    return ctx.graph().add_tensor(std::move(t));
  };
  auto any = [](const std::vector<uint8_t>& bits) {
    return std::find(bits.begin(), bits.end(), 1) != bits.end();
  };
  // Entry i of a begin or end vector, for each sliced dimension, as int64.
  auto picked = [&](size_t input, const std::string& name) {
    TensorId v = n.inputs[input];
    if (g.tensor(v).dtype != ir::DataType::kInt64) {
      const TensorId cast = vec(name + "_int64");
      ctx.graph().tensor(cast).shape = g.tensor(v).shape;
      ctx.emit(n, "Cast", {v}, {cast}, name + "_int64").attrs.set("to", int64_t{7});
      v = cast;
    }
    const TensorId out = vec(name);
    ctx.emit(n, "Gather", {v, ctx.const_i64(n.name + "/" + name + "_entries", entries)}, {out},
             name);
    return out;
  };
  TensorId starts = picked(1, "starts");
  if (any(begin_masked)) {
    const TensorId masked = vec("starts_masked");
    ctx.emit(n, "Where",
             {flags("begin_mask", begin_masked),
              ctx.const_i64(n.name + "/start_default", start_default), starts},
             {masked}, "begin_mask");
    starts = masked;
  }
  if (any(shrink)) {
    const TensorId wrapped = vec("starts_wrapped");
    ctx.emit(n, "Mod", {starts, ctx.const_i64(n.name + "/shrink_sizes", sizes)}, {wrapped},
             "shrink_index");
    const TensorId chosen = vec("starts_shrunk");
    ctx.emit(n, "Where", {flags("shrink_mask", shrink), wrapped, starts}, {chosen}, "shrink_start");
    starts = chosen;
  }
  TensorId ends = picked(2, "ends");
  if (any(end_masked)) {
    const TensorId masked = vec("ends_masked");
    ctx.emit(
        n, "Where",
        {flags("end_mask", end_masked), ctx.const_i64(n.name + "/end_default", end_default), ends},
        {masked}, "end_mask");
    ends = masked;
  }
  if (any(shrink)) {
    const TensorId one_past = vec("ends_one_past");
    ctx.emit(n, "Add", {starts, ctx.const_i64(n.name + "/one", {1})}, {one_past}, "shrink_end");
    const TensorId chosen = vec("ends_shrunk");
    ctx.emit(n, "Where", {flags("shrink_mask_end", shrink), one_past, ends}, {chosen},
             "shrink_end_pick");
    ends = chosen;
  }
  return {starts, ends};
}

Status lower_strided_slice(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  Refusal why;
  auto spec = slice_spec(g, n, &why);
  if (!spec) return ctx.error(n, why.text);
  const Perm& p = g.tensor(n.inputs[0]).layout;
  const Shape& xs = g.tensor(n.inputs[0]).shape;
  std::vector<int64_t> starts, ends, axes, steps;
  for (size_t d = 0; d < spec->dims.size(); ++d) {
    const SliceDim& s = spec->dims[d];
    if (s.whole) continue;
    Bounds b = spec->runtime ? Bounds{0, 0, s.stride} : onnx_bounds(s, xs[d], spec->offset);
    starts.push_back(b.begin);
    ends.push_back(b.end);
    axes.push_back(ir::onnx_axis(p, static_cast<int>(d)));
    steps.push_back(b.stride);
  }
  bool squeeze = !spec->shrink_axes.empty();
  bool unsqueeze = !spec->new_axes.empty();
  TensorId cur = n.inputs[0];
  auto next = [&](bool last, const char* what) {
    return last ? n.outputs[0] : ctx.temp(n.name + "/" + what, g.tensor(n.outputs[0]).dtype);
  };
  if (!starts.empty()) {
    auto [first, last] = spec->runtime ? runtime_bounds(ctx, n, *spec, xs)
                                       : std::pair{ctx.const_i64(n.name + "/starts", starts),
                                                   ctx.const_i64(n.name + "/ends", ends)};
    TensorId out = next(!squeeze && !unsqueeze, "sliced");
    ctx.emit(n, "Slice",
             {cur, first, last, ctx.const_i64(n.name + "/axes", axes),
              ctx.const_i64(n.name + "/steps", steps)},
             {out});
    cur = out;
  }
  if (squeeze) {
    std::vector<int64_t> sq;
    for (int a : spec->shrink_axes) sq.push_back(ir::onnx_axis(p, a));
    std::sort(sq.begin(), sq.end());
    TensorId out = next(!unsqueeze, "squeezed");
    ctx.emit(n, "Squeeze", {cur, ctx.const_i64(n.name + "/squeeze_axes", sq)}, {out}, "Squeeze");
    cur = out;
  }
  if (unsqueeze) {
    ctx.emit(n, "Unsqueeze", {cur, ctx.const_i64(n.name + "/unsqueeze_axes", spec->new_axes)},
             {n.outputs[0]}, "Unsqueeze");
    cur = n.outputs[0];
  }
  if (cur != n.outputs[0]) ctx.emit(n, "Identity", {cur}, {n.outputs[0]});
  return ok_status();
}

// Where each output element comes from, for a static input shape.
std::optional<std::vector<OutputMap>> strided_slice_sources(const ir::Graph& g, const ir::Node& n,
                                                            int64_t max) {
  auto xs = input_shape(g, n, 0);
  if (!xs || n.inputs.size() < 4) return std::nullopt;
  Refusal why;
  auto spec = slice_spec(g, n, &why);
  if (!spec || spec->runtime) return std::nullopt;
  const size_t rank = xs->size();
  std::vector<Resolved> dims;  // one per input dimension
  Shape walk;                  // the sliced extent per input dimension
  for (size_t d = 0; d < rank; ++d) {
    auto r = resolve(spec->dims[d], (*xs)[d], spec->offset);
    if (!r) return std::nullopt;
    dims.push_back(*r);
    walk.push_back(r->count);
  }
  // The output: sliced dimensions without the shrunk ones, unit dimensions inserted.
  Shape out_shape;
  for (size_t d = 0; d < rank; ++d)
    if (!spec->dims[d].shrink) out_shape.push_back(walk[d]);
  for (int64_t a : spec->new_axes) {
    if (a > static_cast<int64_t>(out_shape.size())) return std::nullopt;
    out_shape.insert(out_shape.begin() + a, 1);
  }
  auto count = bounded_count(walk, max);
  if (!count) return std::nullopt;
  std::vector<int64_t> in_strides = ir::row_strides(*xs);
  OutputMap out;
  out.shape = out_shape;
  out.sources.reserve(static_cast<size_t>(*count));
  std::vector<int64_t> idx(rank, 0);
  for (int64_t k = 0; k < *count; ++k) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t stride = spec->dims[d].whole ? 1 : spec->dims[d].stride;
      src += (dims[d].start + idx[d] * stride) * in_strides[d];
    }
    out.sources.push_back(ElementSource{0, src});
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < walk[d]) break;
      idx[d] = 0;
    }
  }
  return std::vector<OutputMap>{std::move(out)};
}

void read_strided_slice_options(const tflite::Operator& op, ir::Attributes& a) {
  const auto* o = op.builtin_options_as_StridedSliceOptions();
  a.set("begin_mask", int64_t{o ? o->begin_mask() : 0});
  a.set("end_mask", int64_t{o ? o->end_mask() : 0});
  a.set("ellipsis_mask", int64_t{o ? o->ellipsis_mask() : 0});
  a.set("new_axis_mask", int64_t{o ? o->new_axis_mask() : 0});
  a.set("shrink_axis_mask", int64_t{o ? o->shrink_axis_mask() : 0});
  a.set("offset", int64_t{o && o->offset() ? 1 : 0});
}

// STRIDED_SLICE: constant begin/end/strides with every mask and offset, as
// TFLite's kernel expands them (nullopt where its reading of the spec and
// TensorFlow's could differ).
InferredShapes infer_strided_slice(const ir::Graph& g, const ir::Node& n) {
  // TFLite's strided_slice.cc: BuildStridedSliceParams expands the ellipsis
  // and the new axes into an effective input of at most 5 dimensions, then
  // every dimension not shrunk counts ceil((end - begin) / stride) elements
  // (StridedSliceStartForAxis / StridedSliceEndForAxis), or ceil(end / stride)
  // with offset.
  auto x = input_shape(g, n, 0);
  auto begin = const_operand(g, n, 1, false, 1);
  auto end = const_operand(g, n, 2, false, 1);
  auto strides = const_operand(g, n, 3, false, 1);
  if (!x || !begin || !end || !strides || n.inputs.size() != 4 || n.outputs.size() != 1 ||
      x->size() > 5)
    return std::nullopt;
  const int64_t rank = static_cast<int64_t>(x->size());
  const int64_t m = static_cast<int64_t>(begin->size());
  if (static_cast<int64_t>(end->size()) != m || static_cast<int64_t>(strides->size()) != m || m > 5)
    return std::nullopt;
  const int64_t ellipsis = n.attrs.get_int("ellipsis_mask");
  const int64_t new_axis = n.attrs.get_int("new_axis_mask");
  const bool offset = n.attrs.get_int("offset") != 0;
  // Mask bits past the spec (TFLite would read them against expanded
  // indices) and a second ellipsis are left to the file.
  if (ellipsis < 0 || new_axis < 0 || (ellipsis >> m) != 0 || (new_axis >> m) != 0 ||
      (ellipsis & (ellipsis - 1)) != 0)
    return std::nullopt;
  auto bit = [&](const char* mask, int64_t i) {
    return i >= 0 && i < m && ((n.attrs.get_int(mask) >> i) & 1) != 0;
  };
  int64_t added = 0;  // new axes outside the ellipsis
  for (int64_t i = 0; i < m; ++i) added += !bit("ellipsis_mask", i) && bit("new_axis_mask", i);
  const int64_t dims = rank + added;
  // More entries than dimensions (an ellipsis then covers nothing, which
  // TFLite widens to one dimension): not TensorFlow's reading.
  if (dims > 5 || m > dims) return std::nullopt;
  if (offset && (ellipsis != 0 || new_axis != 0 || m != rank)) return std::nullopt;

  enum class Kind { kSpec, kEllipsis, kNewAxis };
  std::vector<Kind> kind(static_cast<size_t>(dims), Kind::kSpec);
  int64_t ellipsis_start = dims, expanded = 0;
  for (int64_t i = 0; i < dims;) {
    if (bit("ellipsis_mask", i)) {
      ellipsis_start = i;
      const int64_t stop = std::max(i + 1, std::min(i + 1 + added + rank - m, dims));
      expanded = stop - ellipsis_start - 1;
      for (; i < stop; ++i) kind[static_cast<size_t>(i)] = Kind::kEllipsis;
      continue;
    }
    if (bit("new_axis_mask", i - expanded)) kind[static_cast<size_t>(i)] = Kind::kNewAxis;
    ++i;
  }
  Shape out;
  int64_t added_ellipsis = 0, added_axes = 0;
  for (int64_t i = 0; i < dims; ++i) {
    const Kind k = kind[static_cast<size_t>(i)];
    if (k == Kind::kNewAxis) {
      out.push_back(1);  // [0, 1) of a unit dimension
      ++added_axes;
      continue;
    }
    if (k == Kind::kEllipsis) added_ellipsis = std::max<int64_t>(0, i - ellipsis_start);
    if (i - added_axes < 0 || i - added_axes >= rank) return std::nullopt;
    const int64_t size = (*x)[static_cast<size_t>(i - added_axes)];
    if (size > kMaxDim) return std::nullopt;
    if (k == Kind::kEllipsis || i >= m + expanded) {
      out.push_back(size);  // begin and end masked, stride 1
      continue;
    }
    const int64_t j = i - added_ellipsis;  // the spec entry
    if (j < 0 || j >= m) return std::nullopt;
    const int64_t stride = (*strides)[static_cast<size_t>(j)];
    if (stride == 0) return std::nullopt;
    if (bit("shrink_axis_mask", j)) continue;
    // StridedSliceStartForAxis / StridedSliceEndForAxis (int32 values).
    int64_t b = (*begin)[static_cast<size_t>(j)];
    if (b < 0) b += size;
    b = stride > 0 ? std::clamp<int64_t>(b, 0, size) : std::clamp<int64_t>(b, -1, size - 1);
    if (bit("begin_mask", j)) b = stride > 0 ? 0 : size - 1;
    int64_t e = (*end)[static_cast<size_t>(j)];
    if (offset) {
      e += b;
      if (e < std::numeric_limits<int32_t>::min() || e > kMaxDim) return std::nullopt;
    }
    if (e < 0) e += size;
    e = stride > 0 ? std::clamp<int64_t>(e, 0, size) : std::clamp<int64_t>(e, -1, size - 1);
    if (bit("end_mask", j)) e = stride > 0 ? size : -1;
    int64_t count = 0;  // the elements the kernel copies
    if (stride > 0 && e > b) count = (e - b - 1) / stride + 1;
    if (stride < 0 && b > e) count = (b - e - 1) / -stride + 1;
    // What Prepare sizes the output to, in float as it computes it: a
    // different count (float rounding, offset past the end) is not a shape
    // the kernel fills.
    const int64_t span = offset ? (*end)[static_cast<size_t>(j)] : e - b;
    const double prepared =
        std::ceil(static_cast<double>(static_cast<float>(span) / static_cast<float>(stride)));
    if (std::max(prepared, 0.0) != static_cast<double>(count)) return std::nullopt;
    out.push_back(count);
  }
  return one_shape(std::move(out));
}

}  // namespace

OpEntry strided_slice() {
  return {.read = {.min_inputs = 4, .options = read_strided_slice_options},
          .layout = {.kind = LayoutClass::kAttribute, .propagate = propagate_strided_slice},
          .infer_shapes = infer_strided_slice,
          .check = check_strided_slice,
          .lower = lower_strided_slice,
          .quantization = {.kernel = QuantizedKernel::kSameScale, .exact = {exact::lower_copy}},
          .evaluate = {.element_sources = strided_slice_sources},
          .doc = {.onnx = "Slice (+ Squeeze/Unsqueeze for shrink/new axes)",
                  .dtypes = "float32, int32, int64, bool",
                  .notes = "constant strides; begin and end constant or computed at run time (a "
                           "loop counter: Gather + Where for masks, Mod for shrunk indices; no "
                           "offset then); every mask"}};
}

}  // namespace lite2onnx::ops::shape
