#include "core/layout_spec.h"

#include <set>

namespace lite2onnx {
namespace {

Error bad(std::string_view text, const std::string& why) {
  return make_error(ErrorCode::kInvalidOption, "layout '" + std::string(text) + "': " + why);
}

}  // namespace

Result<LayoutSpec> parse_layout_spec(std::string_view text, bool order_only) {
  size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0)
    return bad(text, order_only ? "expected TENSOR=ORDER or TENSOR=SRC:DST"
                                : "expected TENSOR=SRC:DST, e.g. input=NHWC:NCHW");
  LayoutSpec spec;
  spec.tensor = std::string(text.substr(0, eq));
  std::string_view rest = text.substr(eq + 1);
  size_t colon = rest.find(':');
  if (colon != std::string_view::npos) {
    spec.from = std::string(rest.substr(0, colon));
    spec.to = std::string(rest.substr(colon + 1));
  } else if (order_only) {
    spec.to = std::string(rest);
    if (spec.to.find('N') != 0 || spec.to.find('C') == std::string::npos)
      return bad(text, "ORDER alone must start with N and contain C (else write SRC:DST)");
    spec.from = "N";
    for (char c : spec.to)
      if (c != 'N' && c != 'C') spec.from += c;
    spec.from += 'C';
  } else {
    return bad(text, "expected SRC:DST after '=', e.g. NHWC:NCHW");
  }
  if (auto p = layout_perm(spec); !p) return bad(text, p.error().message);
  return spec;
}

Result<ir::Perm> layout_perm(const LayoutSpec& spec) {
  // Letters are ASCII: a message quotes one alone, never a byte of a
  // multi-byte UTF-8 character (messages reach protobuf, which wants UTF-8).
  for (const std::string* order : {&spec.from, &spec.to})
    for (char c : *order)
      if (!(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z'))
        return make_error(ErrorCode::kInvalidOption,
                          "'" + *order + "' has a character that is not an ASCII letter");
  if (spec.from.empty() || spec.from.size() != spec.to.size())
    return make_error(ErrorCode::kInvalidOption, "source and target need the same letters");
  std::set<char> letters(spec.from.begin(), spec.from.end());
  if (letters.size() != spec.from.size())
    return make_error(ErrorCode::kInvalidOption, "a letter repeats in '" + spec.from + "'");
  ir::Perm p;
  for (char c : spec.to) {
    size_t at = spec.from.find(c);
    if (at == std::string::npos)
      return make_error(ErrorCode::kInvalidOption, std::string("letter '") + c + "' of '" +
                                                       spec.to + "' is not in '" + spec.from + "'");
    p.push_back(static_cast<int>(at));
  }
  if (!ir::is_permutation(p, p.size()))
    return make_error(ErrorCode::kInvalidOption, "'" + spec.to + "' repeats a letter");
  return p;
}

}  // namespace lite2onnx
