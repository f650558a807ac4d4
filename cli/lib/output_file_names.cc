#include "cli/lib/output_file_names.h"

#include <functional>
#include <set>

#include "absl/strings/str_format.h"

namespace tandem::cli {

namespace {

std::string SafeStem(const std::string& name) {
  std::string s = name;
  for (char& c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\' || u < 0x20 || u == 0x7f) c = '_';
  }
  if (s.empty() || s[0] == '.') s.insert(s.begin(), '_');
  if (s.size() > kMaxFileNameBytes) {
    const std::string hash = absl::StrFormat("~%016x", std::hash<std::string>()(name));
    s.resize(kMaxFileNameBytes - hash.size());
    while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();  // UTF-8 tail
    if (!s.empty() && static_cast<unsigned char>(s.back()) >= 0xC0) s.pop_back();               // a lead byte
    s += hash;
  }
  return s;
}

}  // namespace

std::vector<OutputFileName> OutputFileNames(const std::vector<std::string>& names, const std::string& extension) {
  std::vector<OutputFileName> out;
  std::set<std::string> taken;
  for (const std::string& name : names) {
    const std::string stem = SafeStem(name);
    std::string file = stem + extension;
    for (int k = 2; taken.count(file); ++k) file = stem + "_" + std::to_string(k) + extension;
    taken.insert(file);
    out.push_back({file, file != name + extension});
  }
  return out;
}

}  // namespace tandem::cli
