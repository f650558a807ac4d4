// Chrome trace JSON (the "Trace Event Format" that Perfetto and chrome://tracing open):
// one complete event ("ph": "X") per executed node with name, ts and dur in microseconds
// (ts relative to the first event), one process per provider (pid, named by a metadata
// event), and args {op, shapes, provider}.
#pragma once
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/plan.h"

namespace tandem {

std::string ChromeTraceJson(const std::vector<TraceEvent>& events);
// Writes ChromeTraceJson(events) to `path` atomically.
absl::Status WriteChromeTrace(const std::vector<TraceEvent>& events, const std::string& path);

}  // namespace tandem
