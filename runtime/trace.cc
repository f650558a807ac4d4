#include "runtime/trace.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "onnx_import/atomic_file.h"

namespace tandem {

namespace {

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

std::string ChromeTraceJson(const std::vector<TraceEvent>& events) {
  double origin = events.empty() ? 0 : events.front().start_us;
  for (const TraceEvent& e : events) origin = std::min(origin, e.start_us);
  std::map<std::string, int> pid;  // provider -> process id, in order of appearance
  for (const TraceEvent& e : events) pid.emplace(e.provider, static_cast<int>(pid.size()) + 1);
  std::string json = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  auto add = [&](const std::string& event) {
    json += (first ? "  " : ",\n  ") + event;
    first = false;
  };
  for (const auto& [provider, id] : pid)
    add("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " + std::to_string(id) +
        ", \"tid\": 0, \"args\": {\"name\": " + Quoted("tandem " + provider) + "}}");
  for (const TraceEvent& e : events)
    add("{\"name\": " + Quoted(e.node) + ", \"cat\": " + Quoted(e.op) + ", \"ph\": \"X\", \"ts\": " +
        Number(e.start_us - origin) + ", \"dur\": " + Number(e.duration_us) + ", \"pid\": " +
        std::to_string(pid[e.provider]) + ", \"tid\": 0, \"args\": {\"op\": " + Quoted(e.op) +
        ", \"shapes\": " + Quoted(e.shapes) + ", \"provider\": " + Quoted(e.provider) + "}}");
  return json + "\n]}\n";
}

absl::Status WriteChromeTrace(const std::vector<TraceEvent>& events, const std::string& path) {
  return WriteFileAtomically(path, ChromeTraceJson(events));
}

}  // namespace tandem
