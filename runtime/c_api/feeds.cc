// Named inputs from C arrays, shared by Run, the IO binding and the training calls.
#include <set>

#include "runtime/c_api/handles.h"

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

}  // namespace tandem::capi
