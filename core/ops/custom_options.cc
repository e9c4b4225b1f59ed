#include "core/ops/custom_options.h"

#include <flatbuffers/flexbuffers.h>

#include <cmath>
#include <cstring>

namespace lite2onnx::ops {
namespace {

std::string number(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

Status out_of_range(const CustomField& f, double v) {
  return make_error(ErrorCode::kInvalidModel, std::string("custom option '") + f.name + "' is " +
                                                  number(v) + ", outside [" + number(f.lo) + ", " +
                                                  number(f.hi) + "]");
}

// Stores `v` as the field's kind after checking its range.
Status store(const CustomField& f, double v, ir::Attributes& attrs) {
  if (f.kind == CustomField::Kind::kBool) {
    attrs.set(f.name, int64_t{v != 0});
    return ok_status();
  }
  if (!std::isfinite(v) || v < f.lo || v > f.hi) return out_of_range(f, v);
  if (f.kind == CustomField::Kind::kInt)
    attrs.set(f.name, static_cast<int64_t>(v));
  else
    attrs.set(f.name, static_cast<float>(v));
  return ok_status();
}

// A typed vector of integers, each in the field's range.
Status store_ints(const CustomField& f, const flexbuffers::Reference& v, ir::Attributes& attrs) {
  if (!v.IsTypedVector())
    return make_error(ErrorCode::kInvalidModel, std::string("custom option '") + f.name +
                                                    "' has the wrong type (a typed vector of "
                                                    "integers expected)");
  flexbuffers::TypedVector list = v.AsTypedVector();  // ElementType() is not const
  if (list.ElementType() != flexbuffers::FBT_INT && list.ElementType() != flexbuffers::FBT_UINT)
    return make_error(ErrorCode::kInvalidModel,
                      std::string("custom option '") + f.name + "' holds no integers");
  if (f.required && list.size() == 0)
    return make_error(ErrorCode::kInvalidModel,
                      std::string("custom option '") + f.name + "' is empty");
  std::vector<int64_t> values;
  values.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const flexbuffers::Reference e = list[i];
    const double x =
        e.IsUInt() ? static_cast<double>(e.AsUInt64()) : static_cast<double>(e.AsInt64());
    if (x < f.lo || x > f.hi) return out_of_range(f, x);
    values.push_back(static_cast<int64_t>(x));
  }
  attrs.set(f.name, std::move(values));
  return ok_status();
}

}  // namespace

Status read_flex_fields(std::span<const uint8_t> bytes, std::span<const CustomField> fields,
                        ir::Attributes& attrs) {
  // The verifier checks every offset, width, length and key terminator, and
  // bounds nesting and the vectors visited, before anything is read.
  if (bytes.size() < 3 || bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE ||
      !flexbuffers::VerifyBuffer(bytes.data(), bytes.size()))
    return make_error(ErrorCode::kInvalidModel, "custom options: " + std::to_string(bytes.size()) +
                                                    " bytes that are no valid FlexBuffer");
  const flexbuffers::Reference root = flexbuffers::GetRoot(bytes.data(), bytes.size());
  if (!root.IsMap())
    return make_error(ErrorCode::kInvalidModel, "custom options: a FlexBuffer that is no map");
  const flexbuffers::Map map = root.AsMap();
  for (const CustomField& f : fields) {
    const flexbuffers::Reference v = map[f.name];
    if (v.IsNull()) {
      if (f.required)
        return make_error(ErrorCode::kInvalidModel,
                          std::string("custom option '") + f.name + "' is missing");
      if (f.kind == CustomField::Kind::kInts)
        attrs.set(f.name, std::vector<int64_t>{});
      else if (auto st = store(f, f.fallback, attrs); !st)
        return st;
      continue;
    }
    if (f.kind == CustomField::Kind::kInts) {
      if (auto st = store_ints(f, v, attrs); !st) return st;
      continue;
    }
    const bool fits = f.kind == CustomField::Kind::kFloat  ? v.IsNumeric()
                      : f.kind == CustomField::Kind::kBool ? v.IsBool() || v.IsIntOrUint()
                                                           : v.IsIntOrUint();
    if (!fits)
      return make_error(ErrorCode::kInvalidModel,
                        std::string("custom option '") + f.name + "' has the wrong type (" +
                            (f.kind == CustomField::Kind::kFloat  ? "a number"
                             : f.kind == CustomField::Kind::kBool ? "a bool"
                                                                  : "an integer") +
                            " expected)");
    double value = 0;
    if (v.IsBool())
      value = v.AsBool() ? 1 : 0;
    else if (v.IsUInt())
      value = static_cast<double>(v.AsUInt64());
    else if (v.IsInt())
      value = static_cast<double>(v.AsInt64());
    else
      value = v.AsDouble();
    if (auto st = store(f, value, attrs); !st) return st;
  }
  return ok_status();
}

Status read_struct_fields(std::span<const uint8_t> bytes, std::span<const CustomField> fields,
                          ir::Attributes& attrs) {
  if (bytes.size() < 4 * fields.size())
    return make_error(ErrorCode::kInvalidModel, "custom options: " + std::to_string(bytes.size()) +
                                                    " bytes, " + std::to_string(4 * fields.size()) +
                                                    " expected (" + std::to_string(fields.size()) +
                                                    " int32 fields)");
  for (size_t i = 0; i < fields.size(); ++i) {
    const uint8_t* p = bytes.data() + 4 * i;
    const auto u = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                   static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
    int32_t v = 0;
    std::memcpy(&v, &u, sizeof v);
    if (auto st = store(fields[i], v, attrs); !st) return st;
  }
  return ok_status();
}

void set_padding_and_strides(const ir::Attributes& raw, ir::Attributes& a) {
  a.set("padding", std::string(raw.get_int("padding") == 2 ? "VALID" : "SAME"));
  a.set("stride_h", raw.get_int("stride_height"));
  a.set("stride_w", raw.get_int("stride_width"));
}

}  // namespace lite2onnx::ops
