#include "runtime/npy_header.h"

#include <map>
#include <optional>
#include <string>

#include "graph/parse_number.h"

namespace tandem {

namespace {

// A cursor over the header's text with the few Python literals a header holds.
class Literal {
 public:
  explicit Literal(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && std::string_view(" \t\n\r\f\v").find(text_[pos_]) != std::string_view::npos) ++pos_;
  }
  bool AtEnd() const { return pos_ == text_.size(); }
  // Consumes `c` (after whitespace) when it is next.
  bool Take(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  // A quoted string ('...' or "..."), without escapes.
  absl::StatusOr<std::string> String() {
    SkipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return Error("expected a quoted string");
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return Error("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    if (s.find_first_of("\\\n") != std::string::npos) return Error("escapes and line breaks in strings are not supported");
    pos_ = end + 1;
    return s;
  }
  // True or False.
  absl::StatusOr<bool> Bool() {
    SkipSpace();
    for (const auto& [word, value] : {std::pair<std::string_view, bool>{"True", true}, {"False", false}})
      if (text_.substr(pos_, word.size()) == word && !IsNameChar(pos_ + word.size())) {
        pos_ += word.size();
        return value;
      }
    return Error("expected True or False");
  }
  // A tuple of non-negative decimal integers: (), (3,), (2, 3) or (2, 3,).
  absl::StatusOr<Dims> Shape() {
    if (!Take('(')) return Error("the shape is not a tuple");
    Dims dims;
    while (!Take(')')) {
      SkipSpace();
      size_t end = pos_;
      while (end < text_.size() && text_[end] >= '0' && text_[end] <= '9') ++end;
      auto d = ParseInt64(text_.substr(pos_, end - pos_), 0);
      if (end == pos_ || !d.ok() || (end - pos_ > 1 && text_[pos_] == '0'))
        return Error("a shape entry is not a non-negative decimal integer");
      pos_ = end;
      dims.push_back(*d);
      if (Take(')')) {
        if (dims.size() == 1) return Error("(N) is not a tuple: a one-dimensional shape is written (N,)");
        break;
      }
      if (!Take(',')) return Error("expected ',' or ')' in the shape");
    }
    return dims;
  }
  // "corrupt header: WHAT at character N of '{...}'", the header on one line (control
  // characters as '?', trailing padding dropped).
  absl::Status Error(const std::string& what) const {
    std::string shown(text_.substr(0, 120));
    while (!shown.empty() && (shown.back() == ' ' || shown.back() == '\n')) shown.pop_back();
    for (char& c : shown)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return absl::InvalidArgumentError("corrupt header: " + what + " at character " + std::to_string(pos_) + " of '" +
                                      shown + (text_.size() > 120 ? "...'" : "'"));
  }

 private:
  bool IsNameChar(size_t i) const {
    if (i >= text_.size()) return false;
    const char c = text_[i];
    return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }
  std::string_view text_;
  size_t pos_ = 0;
};

// numpy's type codes (a descr without its byte order) of the types a .npy file holds.
const std::map<std::string, DataType>& TypeCodes() {
  static const std::map<std::string, DataType> codes = {
      {"f2", DataType::kFloat16}, {"f4", DataType::kFloat}, {"f8", DataType::kDouble}, {"i1", DataType::kInt8},
      {"i2", DataType::kInt16},   {"i4", DataType::kInt32}, {"i8", DataType::kInt64},  {"u1", DataType::kUint8},
      {"u2", DataType::kUint16},  {"u4", DataType::kUint32}, {"u8", DataType::kUint64}, {"b1", DataType::kBool}};
  return codes;
}

// 'descr' as numpy writes it: a byte order ('<', '>', '|' or '=') and a type code.
absl::Status ReadDescr(const std::string& descr, NpyHeader* h) {
  auto type = descr.size() == 3 ? TypeCodes().find(descr.substr(1)) : TypeCodes().end();
  if (type == TypeCodes().end() || std::string_view("<>|=").find(descr[0]) == std::string_view::npos)
    return absl::InvalidArgumentError("unsupported dtype '" + descr + "'");
  h->dtype = type->second;
  h->big_endian = descr[0] == '>' && SizeOf(h->dtype) > 1;
  return absl::OkStatus();
}

}  // namespace

std::string NpyDescr(DataType t) {
  for (const auto& [code, type] : TypeCodes())
    if (type == t) return (SizeOf(t) == 1 ? "|" : "<") + code;
  return "";
}

absl::StatusOr<NpyHeader> ParseNpyHeader(std::string_view text) {
  Literal in(text);
  if (!in.Take('{')) return in.Error("the header is not a dict");
  NpyHeader h;
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<Dims> shape;
  while (!in.Take('}')) {
    auto key = in.String();
    if (!key.ok()) return key.status();
    if (!in.Take(':')) return in.Error("expected ':' after '" + *key + "'");
    absl::Status read = absl::OkStatus();
    auto once = [&](bool seen) { return seen ? in.Error("key '" + *key + "' appears twice") : absl::OkStatus(); };
    if (*key == "descr") {
      read = once(descr.has_value());
      auto v = in.String();
      if (read.ok() && !v.ok()) read = v.status();
      if (read.ok()) descr = *v;
    } else if (*key == "fortran_order") {
      read = once(fortran.has_value());
      auto v = in.Bool();
      if (read.ok() && !v.ok()) read = v.status();
      if (read.ok()) fortran = *v;
    } else if (*key == "shape") {
      read = once(shape.has_value());
      auto v = in.Shape();
      if (read.ok() && !v.ok()) read = v.status();
      if (read.ok()) shape = *v;
    } else {
      read = in.Error("unknown key '" + *key + "' (a .npy header has 'descr', 'fortran_order' and 'shape')");
    }
    if (!read.ok()) return read;
    if (in.Take('}')) break;
    if (!in.Take(',')) return in.Error("expected ',' or '}'");
  }
  in.SkipSpace();
  if (!in.AtEnd()) return in.Error("text after the dict");
  if (!descr || !fortran || !shape)
    return in.Error(std::string("key '") + (!descr ? "descr" : !fortran ? "fortran_order" : "shape") + "' is missing");
  if (auto s = ReadDescr(*descr, &h); !s.ok()) return s;
  h.fortran_order = *fortran;
  h.shape = *shape;
  return h;
}

}  // namespace tandem
