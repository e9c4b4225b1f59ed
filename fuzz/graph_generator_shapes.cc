// The model generator: reshapes, slices, concatenation, padding, reductions, gathers, resizes.
#include "fuzz/graph_generator_parts.h"

namespace lite2onnx::fuzz::gen {

void Generator::reshape() {
  int x = data_input();
  Shape s = at(x).shape;
  Shape target;
  switch (in_.range(0, 3)) {
    case 0: {  // flatten
      int32_t batch = s.empty() ? 1 : std::max(s[0], 1);
      target = {batch, static_cast<int32_t>(elements(s) / batch)};
      break;
    }
    case 1:  // drop unit axes
      for (int32_t d : s)
        if (d != 1) target.push_back(d);
      break;
    case 2:  // add a unit axis
      target = s;
      target.insert(target.begin() + in_.range(0, static_cast<int>(s.size())), 1);
      break;
    default:
      target = {static_cast<int32_t>(elements(s))};
  }
  std::vector<int64_t> v(target.begin(), target.end());
  if (!v.empty() && in_.one_in(4))
    v[static_cast<size_t>(in_.range(0, static_cast<int>(v.size()) - 1))] = -1;
  std::vector<int32_t> ins = {x};
  if (!in_.one_in(4)) ins.push_back(const_ints(v, {static_cast<int32_t>(v.size())}));
  std::vector<int32_t> new_shape(v.begin(), v.end());
  push(static_cast<int>(Op::RESHAPE), ins, {new_output(target, at(x).type, at(x).quant)},
       tflite::BuiltinOptions::ReshapeOptions, [new_shape](auto& fbb) {
         return tflite::CreateReshapeOptions(fbb, fbb.CreateVector(new_shape)).Union();
       });
}

void Generator::squeeze() {
  int x = data_input();
  Shape s = at(x).shape, o;
  std::vector<int32_t> dims;
  bool all = in_.flag();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == 1 && (all || in_.flag())) {
      if (!all) dims.push_back(static_cast<int32_t>(i));
      continue;
    }
    o.push_back(s[i]);
  }
  push(static_cast<int>(Op::SQUEEZE), {x}, {new_output(o, at(x).type, at(x).quant)},
       tflite::BuiltinOptions::SqueezeOptions, [dims](auto& fbb) {
         return tflite::CreateSqueezeOptions(fbb, fbb.CreateVector(dims)).Union();
       });
}

std::vector<int64_t> Generator::permutation(int r) {
  std::vector<int64_t> p(static_cast<size_t>(r));
  std::iota(p.begin(), p.end(), 0);
  for (int i = r - 1; i > 0; --i)
    std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(in_.range(0, i))]);
  if (r > 0 && bend(20)) p[0] = p.back();  // not a permutation
  return p;
}

void Generator::concatenation() {
  int x = data_input();
  int r = rank(x), a = axis(r);
  std::vector<int32_t> ins = {x};
  Shape o = at(x).shape;
  for (int k = in_.range(0, 2); k > 0; --k) {
    Shape s = at(x).shape;
    if (in_rank(a, r)) s[static_cast<size_t>(norm_axis(a, r))] = in_.range(1, 3);
    int t =
        in_.flag()
            ? new_const(s, at(x).type)
            : activation([&](const TensorSpec& c) { return c.shape == s && c.type == at(x).type; },
                         [&] { return s; }, at(x).type);
    if (in_rank(a, r))
      o[static_cast<size_t>(norm_axis(a, r))] += at(t).shape[static_cast<size_t>(norm_axis(a, r))];
    ins.push_back(t);
  }
  auto fn = in_.one_in(4) ? activation_fn() : tflite::ActivationFunctionType::NONE;
  push(static_cast<int>(Op::CONCATENATION), ins, {new_output(o, at(x).type, at(x).quant)},
       tflite::BuiltinOptions::ConcatenationOptions,
       [a, fn](auto& fbb) { return tflite::CreateConcatenationOptions(fbb, a, fn).Union(); });
}

void Generator::split(Op code) {
  int x = data_input();
  int r = rank(x), a = axis(r);
  int dim = in_rank(a, r) ? at(x).shape[static_cast<size_t>(norm_axis(a, r))] : 1;
  std::vector<int32_t> sizes;
  if (code == Op::SPLIT) {
    int n = 1;
    for (int d = std::min(dim, 4); d >= 1; --d)
      if (dim % d == 0 && in_.flag()) n = d;
    sizes.assign(static_cast<size_t>(n), dim / n);
  } else {
    for (int left = dim; left > 0;) {
      int part = in_.range(1, left);
      sizes.push_back(part);
      left -= part;
    }
    if (sizes.empty()) sizes.push_back(0);
    if (in_.one_in(4)) sizes.back() = -1;
  }
  std::vector<int32_t> outs;
  for (int32_t part : sizes) {
    Shape s = at(x).shape;
    if (in_rank(a, r)) s[static_cast<size_t>(norm_axis(a, r))] = part < 0 ? 1 : part;
    outs.push_back(new_output(s, at(x).type, at(x).quant));
  }
  int n = static_cast<int>(sizes.size());
  if (code == Op::SPLIT) {
    push(static_cast<int>(code), {const_ints({a}), x}, outs, tflite::BuiltinOptions::SplitOptions,
         [n](auto& fbb) { return tflite::CreateSplitOptions(fbb, n).Union(); });
  } else {
    std::vector<int64_t> v(sizes.begin(), sizes.end());
    push(static_cast<int>(code), {x, const_ints(v, {n}), const_ints({a})}, outs,
         tflite::BuiltinOptions::SplitVOptions,
         [n](auto& fbb) { return tflite::CreateSplitVOptions(fbb, n).Union(); });
  }
}

void Generator::strided_slice() {
  int x = data_input();
  int r = rank(x);
  std::vector<int64_t> begin, end, strides;
  Shape o;
  int shrink = 0;
  for (int i = 0; i < r; ++i) {
    int d = at(x).shape[static_cast<size_t>(i)];
    int st = in_.one_in(4) ? -1 : in_.range(1, 2);
    int b = in_.range(0, std::max(d - 1, 0)), e = in_.range(b + 1, std::max(d, b + 1));
    int len = (e - b + st - 1) / st;
    if (st < 0) b = d - 1, e = -d - 1, len = d;  // the whole axis, backwards
    begin.push_back(b);
    end.push_back(e);
    strides.push_back(st);
    if (in_.one_in(8)) {
      shrink |= 1 << i;
      continue;
    }
    o.push_back(std::max(len, 0));
  }
  int begin_mask = in_.one_in(4) ? in_.range(0, 15) : 0;
  int end_mask = in_.one_in(4) ? in_.range(0, 15) : 0;
  int ellipsis = in_.one_in(20) ? 1 : 0, new_axis = in_.one_in(20) ? 2 : 0;
  bool offset = in_.one_in(20);
  Shape n = {r};
  push(static_cast<int>(Op::STRIDED_SLICE),
       {x, const_ints(begin, n), const_ints(end, n), const_ints(strides, n)},
       {new_output(o, at(x).type, at(x).quant)}, tflite::BuiltinOptions::StridedSliceOptions,
       [=](auto& fbb) {
         return tflite::CreateStridedSliceOptions(fbb, begin_mask, end_mask, ellipsis, new_axis,
                                                  shrink, offset)
             .Union();
       });
}

void Generator::pad(Op code) {
  int x = data_input();
  std::vector<int64_t> p;
  Shape o = at(x).shape;
  for (auto& d : o) {
    int before = in_.range(0, 2), after = in_.range(0, 2);
    if (code == Op::MIRROR_PAD) before = std::min(before, d), after = std::min(after, d);
    p.push_back(before);
    p.push_back(after);
    d += before + after;
  }
  std::vector<int32_t> ins = {x, const_ints(p, {rank(x), 2}, in_.one_in(6))};
  if (code == Op::PADV2) {
    int v = new_const({}, at(x).type);
    if (at(x).quant) tensors_[static_cast<size_t>(v)].quant = at(x).quant;
    ins.push_back(v);
  }
  if (code == Op::MIRROR_PAD) {
    auto mode = in_.flag() ? tflite::MirrorPadMode::REFLECT : tflite::MirrorPadMode::SYMMETRIC;
    return push(static_cast<int>(code), ins, {new_output(o, at(x).type, at(x).quant)},
                tflite::BuiltinOptions::MirrorPadOptions,
                [mode](auto& fbb) { return tflite::CreateMirrorPadOptions(fbb, mode).Union(); });
  }
  push(static_cast<int>(code), ins, {new_output(o, at(x).type, at(x).quant)});
}

void Generator::reduce(Op code, Type type) {
  int x = data_input(-1, type);
  int r = rank(x);
  std::vector<int64_t> axes;
  for (int k = in_.range(1, std::max(r, 1)); k > 0; --k) axes.push_back(axis(r));
  bool keep = in_.flag();
  Shape o;
  for (int i = 0; i < r; ++i) {
    bool reduced = std::any_of(axes.begin(), axes.end(), [&](int64_t a) {
      return in_rank(static_cast<int>(a), r) && norm_axis(static_cast<int>(a), r) == i;
    });
    if (!reduced)
      o.push_back(at(x).shape[static_cast<size_t>(i)]);
    else if (keep)
      o.push_back(1);
  }
  int ax = axes.size() == 1 && in_.flag() ? const_ints(axes)
                                          : const_ints(axes, {static_cast<int32_t>(axes.size())});
  push(static_cast<int>(code), {x, ax}, {new_output(o, at(x).type, at(x).quant)},
       tflite::BuiltinOptions::ReducerOptions,
       [keep](auto& fbb) { return tflite::CreateReducerOptions(fbb, keep).Union(); });
}

void Generator::gather() {
  int x = data_input();
  int r = rank(x), a = axis(r);
  int dim = in_rank(a, r) ? at(x).shape[static_cast<size_t>(norm_axis(a, r))] : 1;
  Shape ishape = random_shape(in_.range(0, 2));
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < elements(ishape); ++i)
    idx.push_back(in_.range(in_.one_in(8) ? -dim : 0, dim - 1));
  int indices = in_.one_in(6) ? data_input(-1, Type::INT32) : const_ints(idx, ishape, in_.flag());
  Shape o;
  if (in_rank(a, r)) {
    int na = norm_axis(a, r);
    o.assign(at(x).shape.begin(), at(x).shape.begin() + na);
    o.insert(o.end(), at(indices).shape.begin(), at(indices).shape.end());
    o.insert(o.end(), at(x).shape.begin() + na + 1, at(x).shape.end());
  }
  int batch_dims = in_.one_in(10) ? 1 : 0;
  push(static_cast<int>(Op::GATHER), {x, indices}, {new_output(o, at(x).type, at(x).quant)},
       tflite::BuiltinOptions::GatherOptions, [a, batch_dims](auto& fbb) {
         return tflite::CreateGatherOptions(fbb, a, batch_dims).Union();
       });
}

void Generator::dequantize() {
  int x;
  if (in_.flag()) {  // a float16 or int8 weight
    Shape s = random_shape();
    Type t = in_.flag() ? Type::FLOAT16 : Type::INT8;
    x = new_const(s, t);
    if (t == Type::INT8) {
      size_t channels = s.empty() || in_.flag() ? 1 : static_cast<size_t>(s[0]);
      tensors_[static_cast<size_t>(x)].quant = random_quant(t, channels, 0);
    }
  } else {
    x = data_input(-1, activation_type_);
  }
  push(static_cast<int>(Op::DEQUANTIZE), {x}, {new_output(at(x).shape, Type::FLOAT32)});
}

void Generator::depth_space(Op code) {
  int x = image_input();
  Shape s = at(x).shape;
  // A block that divides what it must (height and width, or channels).
  int block = 1;
  for (int b = 2; b <= 3; ++b)
    if ((code == Op::SPACE_TO_DEPTH ? s[1] % b == 0 && s[2] % b == 0 : s[3] % (b * b) == 0) &&
        in_.flag())
      block = b;
  if (bend(30)) block = 0;
  Shape o = s;
  if (block > 0) {
    if (code == Op::SPACE_TO_DEPTH)
      o = {s[0], s[1] / block, s[2] / block, s[3] * block * block};
    else
      o = {s[0], s[1] * block, s[2] * block, s[3] / (block * block)};
  }
  if (code == Op::SPACE_TO_DEPTH)
    push(static_cast<int>(code), {x}, {new_output(o, at(x).type, at(x).quant)},
         tflite::BuiltinOptions::SpaceToDepthOptions,
         [block](auto& fbb) { return tflite::CreateSpaceToDepthOptions(fbb, block).Union(); });
  else
    push(static_cast<int>(code), {x}, {new_output(o, at(x).type, at(x).quant)},
         tflite::BuiltinOptions::DepthToSpaceOptions,
         [block](auto& fbb) { return tflite::CreateDepthToSpaceOptions(fbb, block).Union(); });
}

void Generator::space_batch(Op code) {
  int x = image_input();
  Shape s = at(x).shape;
  int bh = in_.range(1, 2), bw = in_.range(1, 2);
  if (code == Op::BATCH_TO_SPACE_ND && s[0] % (bh * bw) != 0) bh = bw = 1;
  std::vector<int64_t> pads = {in_.range(0, 2), in_.range(0, 2), in_.range(0, 2), in_.range(0, 2)};
  if (code == Op::SPACE_TO_BATCH_ND) {  // padded sizes are multiples of the block
    pads[1] += (bh - (s[1] + pads[0] + pads[1]) % bh) % bh;
    pads[3] += (bw - (s[2] + pads[2] + pads[3]) % bw) % bw;
  }
  Shape o = s;
  if (code == Op::SPACE_TO_BATCH_ND)
    o = {s[0] * bh * bw, static_cast<int32_t>((s[1] + pads[0] + pads[1]) / bh),
         static_cast<int32_t>((s[2] + pads[2] + pads[3]) / bw), s[3]};
  else
    o = {s[0] / (bh * bw), static_cast<int32_t>(s[1] * bh - pads[0] - pads[1]),
         static_cast<int32_t>(s[2] * bw - pads[2] - pads[3]), s[3]};
  push(static_cast<int>(code), {x, const_ints({bh, bw}, {2}), const_ints(pads, {2, 2})},
       {new_output(o, at(x).type, at(x).quant)});
}

void Generator::resize(Op code) {
  int x = image_input();
  Shape s = at(x).shape;
  int h = in_.range(1, 8), w = in_.range(1, 8);
  bool align = in_.flag(), half = in_.flag();
  int size = in_.one_in(12) ? data_input(1, Type::INT32) : const_ints({h, w}, {2});
  int y = new_output({s[0], h, w, s[3]}, at(x).type, at(x).quant);
  if (code == Op::RESIZE_BILINEAR)
    push(static_cast<int>(code), {x, size}, {y}, tflite::BuiltinOptions::ResizeBilinearOptions,
         [=](auto& fbb) { return tflite::CreateResizeBilinearOptions(fbb, align, half).Union(); });
  else
    push(static_cast<int>(code), {x, size}, {y},
         tflite::BuiltinOptions::ResizeNearestNeighborOptions, [=](auto& fbb) {
           return tflite::CreateResizeNearestNeighborOptions(fbb, align, half).Union();
         });
}

void Generator::dilated_conv() {
  int x = image_input();
  Shape s = at(x).shape;
  int rate = in_.range(1, 3), k = in_.range(1, 3);
  int pad_total = (k - 1) * rate;
  int ph = pad_total + (rate - (s[1] + pad_total) % rate) % rate;
  int pw = pad_total + (rate - (s[2] + pad_total) % rate) % rate;
  std::vector<int64_t> pads = {pad_total / 2, ph - pad_total / 2, pad_total / 2,
                               pw - pad_total / 2};
  std::vector<int64_t> crops = {0, ph - pad_total, 0, pw - pad_total};
  if (in_.one_in(4)) pads = {0, ph - pad_total, 0, pw - pad_total};  // VALID
  int block = const_ints({rate, rate}, {2});
  Shape sb = {s[0] * rate * rate, static_cast<int32_t>((s[1] + pads[0] + pads[1]) / rate),
              static_cast<int32_t>((s[2] + pads[2] + pads[3]) / rate), s[3]};
  int t1 = new_output(sb, at(x).type, at(x).quant);
  push(static_cast<int>(Op::SPACE_TO_BATCH_ND),
       {x, in_.one_in(8) ? block : const_ints({rate, rate}, {2}), const_ints(pads, {2, 2})}, {t1});
  bool depthwise = in_.flag();
  int oc = depthwise ? s[3] : in_.range(1, kMaxDim);
  int w = depthwise ? weights({1, k, k, oc}, 3) : weights({oc, k, k, s[3]}, 0);
  Shape sc = {sb[0], sb[1] - k + 1, sb[2] - k + 1, oc};
  int t2 = new_output(sc, at(x).type);
  auto fn = activation_fn();
  if (depthwise)
    push(static_cast<int>(Op::DEPTHWISE_CONV_2D), {t1, w, bias(oc)}, {t2},
         tflite::BuiltinOptions::DepthwiseConv2DOptions, [=](auto& fbb) {
           return tflite::CreateDepthwiseConv2DOptions(fbb, tflite::Padding::VALID, 1, 1, 1, fn)
               .Union();
         });
  else
    push(static_cast<int>(Op::CONV_2D), {t1, w, bias(oc)}, {t2},
         tflite::BuiltinOptions::Conv2DOptions, [=](auto& fbb) {
           return tflite::CreateConv2DOptions(fbb, tflite::Padding::VALID, 1, 1, fn).Union();
         });
  Shape o = {s[0], sc[1] * rate - static_cast<int32_t>(crops[0] + crops[1]),
             sc[2] * rate - static_cast<int32_t>(crops[2] + crops[3]), oc};
  push(static_cast<int>(Op::BATCH_TO_SPACE_ND), {t2, block, const_ints(crops, {2, 2})},
       {new_output(o, at(x).type)});
}

}  // namespace lite2onnx::fuzz::gen
