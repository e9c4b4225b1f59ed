// STRIDED_SLICE: TensorFlow's sparse slice spec (ellipsis, new-axis, shrink,
// begin and end masks, offset) read once into a dense spec, which both the
// lowering (Slice + Squeeze/Unsqueeze) and the conversion-time evaluation
// (OpEntry::element_sources) use.
#include <algorithm>
#include <limits>

#include "core/ir/shape.h"
#include "core/ops/common.h"
#include "core/ops/evaluate.h"
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
  int64_t begin = 0, end = 0, stride = 1;  // as written
};

struct SliceSpec {
  std::vector<SliceDim> dims;     // one per input dimension
  std::vector<int> shrink_axes;   // input dimensions removed
  std::vector<int64_t> new_axes;  // positions of inserted unit dims in the output
  bool offset = false;            // end counts from begin (StridedSliceOptions.offset)
};

std::optional<SliceSpec> slice_spec(const ir::Graph& g, const ir::Node& n, std::string* why) {
  auto begin = ir::const_ints(g, n.inputs[1]);
  auto end = ir::const_ints(g, n.inputs[2]);
  auto strides = ir::const_ints(g, n.inputs[3]);
  if (!begin || !end || !strides || begin->size() != end->size() ||
      begin->size() != strides->size()) {
    *why = "begin, end and strides must be constants of equal length";
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
      *why = "slice spec has more entries than the input has dimensions";
      return std::nullopt;
    }
    SliceDim d;
    d.stride = (*strides)[i];
    if (d.stride == 0 || d.stride == kMin) {
      *why = "stride " + std::to_string(d.stride);
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

std::string check_strided_slice(const ir::Graph& g, const ir::Node& n) {
  for (size_t i = 1; i <= 3; ++i)
    if (auto r = require_const(g, n, i, i == 1 ? "begin" : i == 2 ? "end" : "strides"); !r.empty())
      return r;
  std::string why;
  auto spec = slice_spec(g, n, &why);
  if (!spec) return why;
  const Shape& xs = g.tensor(n.inputs[0]).shape;
  for (size_t d = 0; d < spec->dims.size(); ++d) {
    const SliceDim& s = spec->dims[d];
    if (s.whole) continue;
    if (xs[d] < 0) {
      if (spec->offset)
        return "offset slicing of dimension " + std::to_string(d) + ", of unknown size";
      continue;
    }
    if (!resolve(s, xs[d], spec->offset))
      return s.shrink ? "shrink index " + std::to_string(s.begin) + " out of range for dimension " +
                            std::to_string(d)
                      : "end of dimension " + std::to_string(d) + " overflows";
  }
  return "";
}

std::optional<LayoutPlan> propagate_strided_slice(const ir::Graph& g, const ir::Node& n,
                                                  std::span<const Perm> in) {
  std::string why;
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

Status lower_strided_slice(LowerContext& ctx, const ir::Node& n) {
  const ir::Graph& g = ctx.graph();
  std::string why;
  auto spec = slice_spec(g, n, &why);
  if (!spec) return ctx.error(n, why);
  const Perm& p = g.tensor(n.inputs[0]).layout;
  const Shape& xs = g.tensor(n.inputs[0]).shape;
  std::vector<int64_t> starts, ends, axes, steps;
  for (size_t d = 0; d < spec->dims.size(); ++d) {
    const SliceDim& s = spec->dims[d];
    if (s.whole) continue;
    Bounds b = onnx_bounds(s, xs[d], spec->offset);
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
    TensorId out = next(!squeeze && !unsqueeze, "sliced");
    ctx.emit(n, "Slice",
             {cur, ctx.const_i64(n.name + "/starts", starts), ctx.const_i64(n.name + "/ends", ends),
              ctx.const_i64(n.name + "/axes", axes), ctx.const_i64(n.name + "/steps", steps)},
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
  std::string why;
  auto spec = slice_spec(g, n, &why);
  if (!spec) return std::nullopt;
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

}  // namespace

OpEntry strided_slice() {
  OpEntry e;
  e.layout = LayoutClass::kAttribute;
  e.propagate = propagate_strided_slice;
  e.lower = lower_strided_slice;
  e.onnx = "Slice (+ Squeeze/Unsqueeze for shrink/new axes)";
  e.read_options = [](const tflite::Operator& op, ir::Attributes& a) {
    const auto* o = op.builtin_options_as_StridedSliceOptions();
    a.set("begin_mask", int64_t{o ? o->begin_mask() : 0});
    a.set("end_mask", int64_t{o ? o->end_mask() : 0});
    a.set("ellipsis_mask", int64_t{o ? o->ellipsis_mask() : 0});
    a.set("new_axis_mask", int64_t{o ? o->new_axis_mask() : 0});
    a.set("shrink_axis_mask", int64_t{o ? o->shrink_axis_mask() : 0});
    a.set("offset", int64_t{o && o->offset() ? 1 : 0});
  };
  e.check = check_strided_slice;
  e.element_sources = strided_slice_sources;
  e.infer_shapes = infer_strided_slice;
  e.min_inputs = 4;
  e.dtypes = "float32, int32, int64, bool";
  e.notes = "constant begin/end/strides; every mask";
  e.quantized = QuantizedKernel::kSameScale;
  return e;
}

}  // namespace lite2onnx::ops::shape
