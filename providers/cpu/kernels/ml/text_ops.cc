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

// Decodes UTF-8 into code points. A byte that is not valid UTF-8 becomes the lone
// surrogate U+DC80+byte (as Python's surrogateescape does), which case mapping leaves alone
// and EncodeUtf8 turns back into the original byte.
std::u32string DecodeUtf8(const std::string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (extra <= 0 || i + extra >= s.size()) {  // ASCII, stray byte or truncated sequence
      out.push_back(c < 0x80 ? c : 0xDC00 + c);
      ++i;
      continue;
    }
    char32_t cp = c & (0x3F >> extra);
    bool ok = true;
    for (int k = 1; k <= extra; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 0x2) { ok = false; break; }
      cp = (cp << 6) | (d & 0x3F);
    }
    if (!ok) {
      out.push_back(0xDC00 + c);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += extra + 1;
  }
  return out;
}

std::string EncodeUtf8(const std::u32string& s) {
  std::string out;
  for (char32_t cp : s) {
    if (cp >= 0xDC80 && cp <= 0xDCFF) {  // escaped invalid byte
      out.push_back(static_cast<char>(cp - 0xDC00));
    } else if (cp < 0x80) {
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
    for (const std::string& w : info.node.attr_strings("stopwords"))
      stopwords_.insert(case_sensitive_ ? w : Convert(w, Case::kLower));
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
      if (!stopwords_.empty() &&
          stopwords_.count(case_sensitive_ ? in[i] : Convert(in[i], Case::kLower)))
        continue;
      kept.push_back(case_ == Case::kNone ? in[i] : Convert(in[i], case_));
    }
    if (kept.empty()) kept.push_back("");  // all dropped: one empty string
    const int64_t c = static_cast<int64_t>(kept.size());
    Tensor& y = ctx.AllocateOutput(0, DataType::kString, two_d ? Dims{1, c} : Dims{c});
    for (int64_t i = 0; i < c; ++i) y.data<std::string>()[i] = std::move(kept[i]);
    return absl::OkStatus();
  }

 private:
  std::string Convert(const std::string& s, Case to) const {
    bool ascii = true;
    for (char ch : s) ascii &= static_cast<unsigned char>(ch) < 0x80;
    if (ascii || !locale_) {
      std::string out = s;
      for (char& ch : out) {
        if (to == Case::kLower && ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
        if (to == Case::kUpper && ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
      }
      return out;
    }
    std::u32string u = DecodeUtf8(s);
    for (char32_t& cp : u)
      cp = static_cast<char32_t>(to == Case::kLower ? towlower_l(static_cast<wint_t>(cp), locale_)
                                                    : towupper_l(static_cast<wint_t>(cp), locale_));
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
