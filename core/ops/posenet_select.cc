// The poses PosenetDecoderOp keeps (posenet.h): the kernel takes root
// candidates from a std::priority_queue, whose order of equal scores is that
// of libstdc++'s push_heap / pop_heap. Quantized heatmaps give many equal
// scores, and which of two equal roots comes first decides which pose the
// NMS keeps, so the heap is run as the kernel runs it: one Loop pushes the
// candidates in scan order, another pops them (an inner Loop moving the hole
// down, __adjust_heap) and keeps or rejects each root, until enough poses are
// kept or the queue is empty.
#include "core/ops/posenet.h"

namespace lite2onnx::ops::posenet {
namespace {

using ir::DataType;
using ir::TensorId;

constexpr DataType kF32 = DataType::kFloat32;
constexpr DataType kI64 = DataType::kInt64;
constexpr DataType kBool = DataType::kBool;

// Levels of a heap of at most `n` elements: ancestors (hole + 1) >> t, t <= this.
int64_t levels(int64_t n) {
  int64_t d = 1;
  while ((int64_t{1} << d) <= n) ++d;
  return d;
}

// libstdc++'s __push_heap: `value` (a candidate index, of score
// `value_score`) moves up from position `hole` past every ancestor of lower
// score. Along the path from the root scores do not increase, so the
// ancestors it passes are the nearest T of the `depth` above it, each moving
// down one level; one ScatterElements writes them and the value.
TensorId sift_up(NodeBuilder& b, TensorId heap, TensorId hole, TensorId value, TensorId value_score,
                 TensorId scores, int64_t depth) {
  std::vector<int64_t> powers, steps;
  for (int64_t t = 1; t <= depth; ++t) powers.push_back(int64_t{1} << t);
  for (int64_t t = 0; t <= depth; ++t) steps.push_back(t);
  TensorId ancestors =
      b.add("Sub",
            {b.add("Div", {b.add("Add", {hole, b.scalar(kI64, 1)}, kI64), b.ints(powers)}, kI64),
             b.scalar(kI64, 1)},
            kI64);
  TensorId valid = b.add("GreaterOrEqual", {ancestors, b.scalar(kI64, 0)}, kBool);
  TensorId above =
      b.add("Gather", {heap, b.add("Max", {ancestors, b.scalar(kI64, 0)}, kI64)}, kI64);
  TensorId lower = b.add("Less", {b.add("Gather", {scores, above}, kF32), value_score}, kBool);
  TensorId moved = b.add("ReduceSum", {b.cast(b.add("And", {valid, lower}, kBool), kI64)}, kI64,
                         {{"keepdims", int64_t{0}}});
  TensorId one_value = b.reshape(value, {1}, kI64);
  TensorId positions =
      b.add("Concat", {b.reshape(hole, {1}, kI64), ancestors}, kI64, {{"axis", int64_t{0}}});
  TensorId values = b.add("Where",
                          {b.add("Equal", {b.ints(steps), moved}, kBool), one_value,
                           b.add("Concat", {above, one_value}, kI64, {{"axis", int64_t{0}}})},
                          kI64);
  TensorId written = b.reshape(b.add("Add", {moved, b.scalar(kI64, 1)}, kI64), {1}, kI64);
  TensorId zero = b.ints({0});
  return b.add("ScatterElements",
               {heap, b.add("Slice", {positions, zero, written, zero}, kI64),
                b.add("Slice", {values, zero, written, zero}, kI64)},
               kI64, {{"axis", int64_t{0}}});
}

// heap[at] = value (int64 scalars).
TensorId set(NodeBuilder& b, TensorId heap, TensorId at, TensorId value) {
  return b.add("ScatterElements", {heap, b.reshape(at, {1}, kI64), b.reshape(value, {1}, kI64)},
               kI64, {{"axis", int64_t{0}}});
}

TensorId gather(NodeBuilder& b, TensorId data, TensorId index, DataType type) {
  return b.add("Gather", {data, index}, type);
}

// The pushes: candidate i at position i, moved up (scan order, as the kernel
// fills its queue).
TensorId push_all(NodeBuilder& b, const Candidates& c, int64_t depth) {
  TensorId zeros = b.add("Expand", {b.scalar(kI64, 0), b.reshape(c.count, {1}, kI64)}, kI64);
  LoopBuilder loop(b, "push");
  NodeBuilder& body = loop.body();
  TensorId heap = loop.carry(zeros, kI64, {-1});
  TensorId scores = loop.capture(c.score);
  TensorId i = loop.iteration();
  TensorId next = sift_up(body, heap, i, i, gather(body, scores, i, kF32), scores, depth);
  return loop.finish(c.count, ir::kNoTensor, ir::kNoTensor, {next})[0];
}

// __adjust_heap from the root of a heap of `len` elements (the last one
// taken out as `value`): the hole moves down to the larger child (the right
// one unless it is smaller) while it has two, then to a lone last child, and
// `value` is pushed up from there.
TensorId pop(NodeBuilder& b, TensorId heap, TensorId len, TensorId value, TensorId scores,
             int64_t depth) {
  TensorId zero = b.scalar(kI64, 0);
  TensorId one = b.scalar(kI64, 1);
  TensorId two = b.scalar(kI64, 2);
  TensorId parents = b.add("Div", {b.add("Sub", {len, one}, kI64), two}, kI64);  // (len - 1) / 2
  TensorId first = b.add("Less", {zero, parents}, kBool);
  LoopBuilder down(b, "sift_down");
  NodeBuilder& d = down.body();
  TensorId h = down.carry(heap, kI64, {-1});
  TensorId hole = down.carry(zero, kI64, {});
  TensorId s = down.capture(scores);
  TensorId inner_parents = down.capture(parents);
  TensorId right =
      d.add("Mul", {d.add("Add", {hole, d.scalar(kI64, 1)}, kI64), d.scalar(kI64, 2)}, kI64);
  TensorId left = d.add("Sub", {right, d.scalar(kI64, 1)}, kI64);
  TensorId smaller = d.add(
      "Less",
      {gather(d, s, gather(d, h, right, kI64), kF32), gather(d, s, gather(d, h, left, kI64), kF32)},
      kBool);
  TensorId child = d.add("Sub", {right, d.cast(smaller, kI64)}, kI64);
  TensorId moved = set(d, h, hole, gather(d, h, child, kI64));
  auto out = down.finish(ir::kNoTensor, first, d.add("Less", {child, inner_parents}, kBool),
                         {moved, child});
  heap = out[0];
  hole = out[1];
  // An even count leaves the hole one lone child: ((len & 1) == 0 && hole ==
  // (len - 2) / 2).
  TensorId lone = b.add(
      "And",
      {b.add("Equal", {b.add("Mod", {len, two}, kI64), zero}, kBool),
       b.add("Equal", {hole, b.add("Div", {b.add("Sub", {len, two}, kI64), two}, kI64)}, kBool)},
      kBool);
  TensorId last_child =
      b.add("Sub", {b.add("Mul", {b.add("Add", {hole, one}, kI64), two}, kI64), one}, kI64);
  TensorId safe = b.add("Min", {last_child, b.add("Max", {len, zero}, kI64)}, kI64);
  heap =
      set(b, heap, hole,
          b.add("Where", {lone, gather(b, heap, safe, kI64), gather(b, heap, hole, kI64)}, kI64));
  hole = b.add("Where", {lone, last_child, hole}, kI64);
  return sift_up(b, heap, hole, value, gather(b, scores, value, kF32), scores, depth);
}

}  // namespace

Kept select_poses(NodeBuilder& b, const Candidates& c, int64_t max_detections, float squared_radius,
                  float threshold) {
  const int64_t depth = levels(c.max_count);
  TensorId heap0 = push_all(b, c, depth);

  LoopBuilder loop(b, "select");
  NodeBuilder& body = loop.body();
  TensorId heap = loop.carry(heap0, kI64, {-1});
  TensorId size = loop.carry(c.count, kI64, {});
  TensorId kept = loop.carry(b.ints(std::vector<int64_t>(static_cast<size_t>(max_detections), 0)),
                             kI64, {max_detections});
  TensorId count = loop.carry(b.scalar(kI64, 0), kI64, {});
  TensorId scores = loop.capture(c.score);

  // Pop the top.
  TensorId top = gather(body, heap, body.scalar(kI64, 0), kI64);
  TensorId len = body.add("Sub", {size, body.scalar(kI64, 1)}, kI64);
  TensorId next_heap = pop(body, heap, len, gather(body, heap, len, kI64), scores, depth);

  // PassKeypointNMS: the root against the same keypoint of every pose kept.
  TensorId id = gather(body, loop.capture(c.keypoint), top, kI64);
  TensorId y = gather(body, loop.capture(c.root_y), top, kF32);
  TensorId x = gather(body, loop.capture(c.root_x), top, kF32);
  auto kept_coordinate = [&](TensorId pose) {
    TensorId rows = body.add("Gather", {loop.capture(pose), kept}, kF32);
    return body.add("Gather", {rows, id}, kF32, {{"axis", int64_t{1}}});
  };
  TensorId dy = body.add("Sub", {kept_coordinate(c.pose_y), y}, kF32);
  TensorId dx = body.add("Sub", {kept_coordinate(c.pose_x), x}, kF32);
  TensorId squared =
      body.add("Add", {body.add("Mul", {dy, dy}, kF32), body.add("Mul", {dx, dx}, kF32)}, kF32);
  std::vector<int64_t> slots;
  for (int64_t k = 0; k < max_detections; ++k) slots.push_back(k);
  TensorId near =
      body.add("And",
               {body.add("LessOrEqual", {squared, body.scalar(kF32, squared_radius)}, kBool),
                body.add("Less", {body.ints(slots), count}, kBool)},
               kBool);
  TensorId rejected =
      body.add("Greater",
               {body.add("ReduceSum", {body.cast(near, kI64)}, kI64, {{"keepdims", int64_t{0}}}),
                body.scalar(kI64, 0)},
               kBool);
  TensorId good = body.add(
      "GreaterOrEqual",
      {gather(body, loop.capture(c.instance), top, kF32), body.scalar(kF32, threshold)}, kBool);
  TensorId keep = body.add("And", {body.add("Not", {rejected}, kBool), good}, kBool);
  TensorId slot = body.add("Min", {count, body.scalar(kI64, max_detections - 1)}, kI64);
  TensorId next_kept =
      set(body, kept, slot, body.add("Where", {keep, top, gather(body, kept, slot, kI64)}, kI64));
  TensorId next_count = body.add("Add", {count, body.cast(keep, kI64)}, kI64);
  TensorId more = body.add("Less", {next_count, body.scalar(kI64, max_detections)}, kBool);
  auto out = loop.finish(c.count, ir::kNoTensor, more, {next_heap, len, next_kept, next_count});
  return {out[2], out[3]};
}

}  // namespace lite2onnx::ops::posenet
