// libonnx's checker, shape inference and version converter, run in a forked child process.
//
// Debian's libonnx 1.12 crashes (null and out-of-bounds reads) on some malformed models
// instead of throwing — the fuzzer found several (ConvTranspose with a rank-2 input, STFT
// with a mangled shape; tests/fuzz/regressions/) — and a library cannot be patched from
// here, so model bytes from the internet never reach it in the importing process. The
// child sees the model through copy-on-write memory (nothing is sent to it), runs the
// passes and sends back the inferred model without its top-level initializers (the
// parent keeps its own, so weights never cross the pipe). A child killed by a signal
// becomes an error, not a crash; one that runs past 120 s is killed. Costs one fork per
// import (~1-5 ms; the parent warms libonnx's schema registry once so children don't
// rebuild it).
//
// Caveat: after fork() in a multithreaded host, POSIX only promises async-signal-safe
// calls in the child; this child runs malloc, protobuf and libonnx (glibc makes malloc
// fork-safe; the schema registry is built before any fork). Forks are serialized so no
// child inherits another import's pipe.
#pragma once
#include <onnx/onnx_pb.h>

#include "absl/status/status.h"

namespace tandem {

// Runs onnx::checker::check_model on `checker_model` (when `check`) and shape inference on
// `model` (when `infer`; `model` then holds the inferred value_info). Errors, as
// InvalidArgument: "ONNX checker: ...", "ONNX shape inference: ...", or "libonnx crashed
// (signal N) in the checker or shape inference ...".
absl::Status RunLibOnnxIsolated(onnx::ModelProto& model, const onnx::ModelProto& checker_model,
                                bool check, bool infer);

// Runs libonnx's version converter on `model` (initializers included; they do cross the
// pipe, since adapters may rewrite them) to ai.onnx opset `target`; `model` then holds the
// result. Errors: "ONNX version converter: ..." (e.g. an op with no adapter), or a crash
// as above.
absl::Status ConvertOpsetIsolated(onnx::ModelProto& model, int target);

}  // namespace tandem
