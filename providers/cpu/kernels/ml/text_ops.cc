// String kernels: StringNormalizer (stop-word removal and case change of UTF-8 strings).
#include <locale.h>
#include <wctype.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

namespace {

// Decodes UTF-8 into code points; false at the first byte that does not start a valid
// sequence (a stray continuation byte, a truncated or overlong sequence, a surrogate, a
// code point past U+10FFFF), whose offset goes to *bad.
bool DecodeUtf8(const std::string& s, std::u32string* out, size_t* bad) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (extra < 0 || (extra > 0 && i + extra >= s.size())) return *bad = i, false;
    char32_t cp = extra == 0 ? c : c & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 0x2) return *bad = i, false;
      cp = (cp << 6) | (d & 0x3F);
    }
    static constexpr char32_t kLeast[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kLeast[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return *bad = i, false;
    out->push_back(cp);
    i += extra + 1;
  }
  return true;
}

std::string EncodeUtf8(const std::u32string& s) {
  std::string out;
  for (char32_t cp : s) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

class StringNormalizer : public Kernel {
 public:
  enum class Case { kNone, kLower, kUpper };

  explicit StringNormalizer(const KernelInfo& info)
      : action_(info.node.attr_string("case_change_action", "NONE")),
        case_sensitive_(info.node.attr_int("is_case_sensitive", 0) != 0) {
    if (action_ == "LOWER") case_ = Case::kLower;
    else if (action_ == "UPPER") case_ = Case::kUpper;
    else if (action_ == "NONE") case_ = Case::kNone;
    else bad_action_ = true;
    // Case mapping beyond ASCII needs a UTF-8 locale: the requested one, else C.UTF-8.
    std::string loc = info.node.attr_string("locale", "");
    for (const std::string& name : {loc, loc + ".UTF-8", std::string("C.UTF-8"), std::string("en_US.UTF-8")}) {
      if (name.empty() || name == ".UTF-8") continue;
      locale_ = newlocale(LC_CTYPE_MASK, name.c_str(), static_cast<locale_t>(0));
      if (locale_) break;
    }
    for (const std::string& w : info.node.attr_strings("stopwords")) {
      auto lower = case_sensitive_ ? absl::StatusOr<std::string>(w) : Convert(w, Case::kLower);
      if (lower.ok()) stopwords_.insert(*lower);  // a stop word that is not UTF-8 matches nothing
    }
  }
  ~StringNormalizer() override {
    if (locale_) freelocale(locale_);
  }
  StringNormalizer(const StringNormalizer&) = delete;
  StringNormalizer& operator=(const StringNormalizer&) = delete;

  absl::Status Compute(KernelContext& ctx) override {
    if (bad_action_)
      return absl::InvalidArgumentError("attribute 'case_change_action' must be LOWER, UPPER or NONE, got '" +
                                        action_ + "'");
    const Tensor* x = ctx.input(0);
    if (!x || !x->is_tensor()) return absl::InvalidArgumentError("input 'X' is missing");
    if (x->dtype() != DataType::kString) return absl::InvalidArgumentError("input 'X' must be a string tensor");
    const bool two_d = x->rank() == 2;
    if (!(x->rank() == 1 || (two_d && x->dims()[0] == 1)))
      return absl::InvalidArgumentError("input 'X' must have shape [C] or [1, C], got " +
                                        DimsToString(x->dims()));
    const std::string* in = x->data<std::string>();
    std::vector<std::string> kept;
    for (int64_t i = 0; i < x->numel(); ++i) {
      auto lower = stopwords_.empty() || case_sensitive_ ? absl::StatusOr<std::string>(in[i]) : Convert(in[i], Case::kLower);
      if (!lower.ok()) return Element(i, lower.status());
      if (!stopwords_.empty() && stopwords_.count(*lower)) continue;
      auto converted = case_ == Case::kNone ? absl::StatusOr<std::string>(in[i]) : Convert(in[i], case_);
      if (!converted.ok()) return Element(i, converted.status());
      kept.push_back(*std::move(converted));
    }
    if (kept.empty()) kept.push_back("");  // all dropped: one empty string
    const int64_t c = static_cast<int64_t>(kept.size());
    Tensor& y = ctx.AllocateOutput(0, DataType::kString, two_d ? Dims{1, c} : Dims{c});
    for (int64_t i = 0; i < c; ++i) y.data<std::string>()[i] = std::move(kept[i]);
    return absl::OkStatus();
  }

 private:
  static absl::Status Element(int64_t i, const absl::Status& s) {
    return absl::InvalidArgumentError(absl::StrCat("input 'X' element ", i, ": ", s.message()));
  }
  // `s` in the case `to`: ASCII letters directly, the rest by the locale's case mapping;
  // a string that is not valid UTF-8 is refused, as ONNX Runtime does.
  absl::StatusOr<std::string> Convert(const std::string& s, Case to) const {
    std::u32string u;
    size_t bad = 0;
    if (!DecodeUtf8(s, &u, &bad))
      return absl::InvalidArgumentError(absl::StrCat("not valid UTF-8 (byte 0x",
                                                     absl::Hex(static_cast<unsigned char>(s[bad]), absl::kZeroPad2),
                                                     " at offset ", bad, ")"));
    for (char32_t& cp : u) {
      if (cp < 0x80 || !locale_) {  // ASCII letters directly; without a UTF-8 locale nothing else
        if (to == Case::kLower && cp >= 'A' && cp <= 'Z') cp += 'a' - 'A';
        if (to == Case::kUpper && cp >= 'a' && cp <= 'z') cp -= 'a' - 'A';
      } else {
        cp = static_cast<char32_t>(to == Case::kLower ? towlower_l(static_cast<wint_t>(cp), locale_)
                                                      : towupper_l(static_cast<wint_t>(cp), locale_));
      }
    }
    return EncodeUtf8(u);
  }

  std::string action_;
  Case case_ = Case::kNone;
  bool bad_action_ = false;
  bool case_sensitive_;
  locale_t locale_ = static_cast<locale_t>(0);
  std::set<std::string> stopwords_;
};

}  // namespace

void RegisterTextKernels(KernelRegistry& r) {
  r.Add("StringNormalizer", 10, kMaxOpset, {DataType::kString}, Make<StringNormalizer>());
}

}  // namespace tandem::cpu
