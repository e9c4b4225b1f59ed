#include "core/ir/types.h"

#include <cstring>
#include <limits>
#include <numeric>

#include "schema_generated.h"

namespace lite2onnx::ir {

const char* to_string(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return "FLOAT32";
    case DataType::kFloat16:
      return "FLOAT16";
    case DataType::kInt32:
      return "INT32";
    case DataType::kUInt8:
      return "UINT8";
    case DataType::kInt64:
      return "INT64";
    case DataType::kString:
      return "STRING";
    case DataType::kBool:
      return "BOOL";
    case DataType::kInt16:
      return "INT16";
    case DataType::kComplex64:
      return "COMPLEX64";
    case DataType::kInt8:
      return "INT8";
    case DataType::kFloat64:
      return "FLOAT64";
    case DataType::kComplex128:
      return "COMPLEX128";
    case DataType::kUInt64:
      return "UINT64";
    case DataType::kResource:
      return "RESOURCE";
    case DataType::kVariant:
      return "VARIANT";
    case DataType::kUInt32:
      return "UINT32";
    case DataType::kUInt16:
      return "UINT16";
    case DataType::kInt4:
      return "INT4";
    case DataType::kBFloat16:
      return "BFLOAT16";
  }
  return "UNKNOWN";
}

size_t element_size(DataType t) {
  switch (t) {
    case DataType::kBool:
    case DataType::kInt8:
    case DataType::kUInt8:
      return 1;
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kInt16:
    case DataType::kUInt16:
      return 2;
    case DataType::kFloat32:
    case DataType::kInt32:
    case DataType::kUInt32:
      return 4;
    case DataType::kInt64:
    case DataType::kUInt64:
    case DataType::kFloat64:
    case DataType::kComplex64:
      return 8;
    case DataType::kComplex128:
      return 16;
    case DataType::kString:
    case DataType::kResource:
    case DataType::kVariant:
    case DataType::kInt4:
      return 0;
  }
  return 0;
}

bool onnx_representable(DataType t) {
  switch (t) {
    case DataType::kResource:
    case DataType::kVariant:
    case DataType::kInt4:
      return false;
    default:
      return true;
  }
}

int onnx_type_code(DataType t) {
  switch (t) {  // onnx.proto's TensorProto.DataType
    case DataType::kFloat32:
      return 1;
    case DataType::kUInt8:
      return 2;
    case DataType::kInt8:
      return 3;
    case DataType::kUInt16:
      return 4;
    case DataType::kInt16:
      return 5;
    case DataType::kInt32:
      return 6;
    case DataType::kInt64:
      return 7;
    case DataType::kString:
      return 8;
    case DataType::kBool:
      return 9;
    case DataType::kFloat16:
      return 10;
    case DataType::kFloat64:
      return 11;
    case DataType::kUInt32:
      return 12;
    case DataType::kUInt64:
      return 13;
    case DataType::kComplex64:
      return 14;
    case DataType::kComplex128:
      return 15;
    case DataType::kBFloat16:
      return 16;
    default:
      return 0;
  }
}

std::optional<int64_t> element_count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return std::nullopt;
    n *= d;
  }
  return n;
}

std::string to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return s + "]";
}

bool is_identity(const Perm& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int>(i)) return false;
  return true;
}

Perm identity_perm(size_t rank) {
  Perm p(rank);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

Perm full_perm(const Perm& p, size_t rank) { return p.empty() ? identity_perm(rank) : p; }

Perm normalized(Perm p) { return is_identity(p) ? Perm{} : p; }

Perm inverse(const Perm& p) {
  Perm inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int>(i);
  return inv;
}

Perm compose(const Perm& first, const Perm& second) {
  // y = transpose(transpose(x, first), second): y axis i = x axis first[second[i]].
  if (first.empty()) return second;
  if (second.empty()) return first;
  Perm r(second.size());
  for (size_t i = 0; i < second.size(); ++i) r[i] = first[second[i]];
  return normalized(r);
}

Perm channels_first(size_t rank) {
  if (rank < 3) return {};
  Perm p;
  p.push_back(0);
  p.push_back(static_cast<int>(rank) - 1);
  for (size_t i = 1; i + 1 < rank; ++i) p.push_back(static_cast<int>(i));
  return p;
}

Shape permute_shape(const Shape& shape, const Perm& p) {
  if (p.empty()) return shape;
  Shape r(shape.size());
  for (size_t i = 0; i < p.size(); ++i) r[i] = shape[p[i]];
  return r;
}

int onnx_axis(const Perm& p, int axis) {
  if (p.empty()) return axis;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] == axis) return static_cast<int>(i);
  return axis;
}

Perm drop_axes(const Perm& p, const std::vector<int>& tflite_axes, size_t rank) {
  Perm full = p.empty() ? identity_perm(rank) : p;
  std::vector<bool> dropped(rank, false);
  for (int a : tflite_axes) dropped[a] = true;
  // New index of each surviving TFLite axis.
  std::vector<int> renumber(rank, -1);
  int next = 0;
  for (size_t a = 0; a < rank; ++a)
    if (!dropped[a]) renumber[a] = next++;
  Perm r;
  for (int a : full)
    if (!dropped[a]) r.push_back(renumber[a]);
  return normalized(r);
}

std::string to_string(const Perm& p) {
  std::string s = "[";
  for (size_t i = 0; i < p.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(p[i]);
  }
  return s + "]";
}

bool keeps_memory_order(const Shape& shape, const Perm& p) {
  int last = -1;
  for (int a : p.empty() ? identity_perm(shape.size()) : p) {
    if (shape[static_cast<size_t>(a)] == 1) continue;
    if (a < last) return false;
    last = a;
  }
  return true;
}

std::optional<int> axis_in_view(const Shape& from, int axis, const Shape& to) {
  if (axis < 0 || static_cast<size_t>(axis) >= from.size()) return std::nullopt;
  int64_t before = 1;
  for (int a = 0; a < axis; ++a) before *= from[static_cast<size_t>(a)];
  const int64_t dim = from[static_cast<size_t>(axis)];
  int64_t seen = 1;
  for (size_t j = 0; j < to.size(); ++j) {
    if (seen == before && to[j] == dim) return static_cast<int>(j);
    seen *= to[j];
  }
  return std::nullopt;
}

bool is_permutation(const Perm& p, size_t rank) {
  if (p.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int a : p) {
    if (a < 0 || static_cast<size_t>(a) >= rank || seen[a]) return false;
    seen[a] = true;
  }
  return true;
}

std::string builtin_name(int code) {
  // The schema's own names (EnumNameBuiltinOperator gives "" outside the enum).
  const char* name = tflite::EnumNameBuiltinOperator(static_cast<tflite::BuiltinOperator>(code));
  if (name && *name) return name;
  return "BUILTIN_" + std::to_string(code);
}

std::string camel_name(const std::string& builtin) {
  std::string out;
  bool word_start = true;
  for (char c : builtin) {
    if (c == '_') {
      word_start = true;
      continue;
    }
    bool digit_word = word_start && c >= '0' && c <= '9';
    if (word_start || digit_word) {
      out += c;
    } else {
      // Keep "2D"/"3D"/"V2" style suffixes upper case after a digit.
      char prev = out.empty() ? ' ' : out.back();
      bool after_digit = prev >= '0' && prev <= '9';
      out += after_digit ? c : static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    word_start = false;
  }
  return out;
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace lite2onnx::ir
