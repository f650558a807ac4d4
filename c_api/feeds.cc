// Values crossing the C boundary: named inputs from C arrays (Run, the IO binding, the
// training calls) and the rule for outputs that must be copied before the caller gets them.
#include <set>

#include "c_api/handles.h"

namespace tandem::capi {

TandemStatus* CollectFeeds(const char* function, const char* const* names,
                           const TandemTensor* const* inputs, size_t count,
                           std::map<std::string, Tensor>* feeds) {
  if (count > 0 && names == nullptr) return NullArgument(function, "input_names");
  if (count > 0 && inputs == nullptr) return NullArgument(function, "inputs");
  for (size_t i = 0; i < count; ++i) {
    std::string where = std::string("[c_api] ") + function + ": input " + std::to_string(i);
    if (names[i] == nullptr) return MakeStatus(TANDEM_INVALID_ARGUMENT, where + " has a NULL name");
    if (inputs[i] == nullptr)
      return MakeStatus(TANDEM_INVALID_ARGUMENT, where + " ('" + names[i] + "') is NULL");
    if (!feeds->emplace(names[i], inputs[i]->tensor).second)
      return MakeStatus(TANDEM_INVALID_ARGUMENT, where + ": '" + names[i] + "' is given twice");
  }
  return nullptr;
}

bool MustCopyOutput(const TandemSession& s, const Tensor& t,
                    const std::set<const Buffer*>& caller_buffers) {
  const Buffer* b = t.buffer().get();
  return b && (s.constant_buffers.count(b) || caller_buffers.count(b));
}

}  // namespace tandem::capi
