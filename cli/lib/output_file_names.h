// File names for values a model names (tandem run --output-dir writes DIR/<output>.npy):
// a model is not trusted to name files, so each name becomes one safe file name inside the
// folder the user gave. Separators ('/', '\'), NUL and other control characters become
// '_'; a name that is empty, "." or ".." (or starts with '.', a hidden file) gets a '_' in
// front; names longer than kMaxFileNameBytes are cut and end in a hash of the whole name;
// two names that would meet get "_2", "_3", ... Nothing can leave the folder.
#pragma once
#include <string>
#include <vector>

namespace tandem::cli {

// Leaves room for a suffix such as ".npy" within the usual 255-byte file name limit.
constexpr size_t kMaxFileNameBytes = 200;

struct OutputFileName {
  std::string file;  // `name` made safe, plus `extension`
  bool changed;      // differs from name + extension
};

// One file name per entry of `names`, distinct, each ending in `extension` (e.g. ".npy").
std::vector<OutputFileName> OutputFileNames(const std::vector<std::string>& names, const std::string& extension);

}  // namespace tandem::cli
