#include "onnx_import/libonnx_isolated.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include "absl/strings/str_cat.h"
#include "onnx_import/tensor_proto.h"

namespace tandem {
namespace {

// The child's answer: one tag byte, then the resulting model or an error message.
constexpr char kOk = 'K', kCheckerError = 'C', kInferenceError = 'S', kConverterError = 'V';

bool WriteAll(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Runs `work` in a forked child and returns the answer it wrote; `what` names the work in
// errors ("the checker or shape inference").
absl::StatusOr<std::string> RunIsolated(const std::function<std::string()>& work, const std::string& what) {
  static const bool registry_built = onnx::OpSchemaRegistry::Schema("Relu", 14) != nullptr;
  (void)registry_built;
  static std::mutex fork_mu;  // pipe + fork + close: no sibling child keeps our write end
  int fds[2];
  pid_t pid;
  {
    std::lock_guard<std::mutex> lock(fork_mu);
    if (pipe2(fds, O_CLOEXEC) != 0)
      return absl::ResourceExhaustedError(absl::StrCat("cannot create a pipe: ", std::strerror(errno)));
    pid = fork();
    if (pid == 0) {
      close(fds[0]);
      // A crash must end the child with its signal (sanitizer and fuzzer handlers inherited
      // from the parent would otherwise report it as the parent's).
      for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, SIG_DFL);
      _exit(WriteAll(fds[1], work()) ? 0 : 3);
    }
    close(fds[1]);
  }
  if (pid < 0) {
    close(fds[0]);
    return absl::ResourceExhaustedError(absl::StrCat("cannot fork for libonnx: ", std::strerror(errno)));
  }
  std::string answer;
  std::vector<char> buf(1 << 16);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now()).count();
    pollfd p{fds[0], POLLIN, 0};
    const int ready = left > 0 ? poll(&p, 1, static_cast<int>(left)) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    const ssize_t n = read(fds[0], buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buf.data(), static_cast<size_t>(n));
  }
  close(fds[0]);
  int wstatus = 0;
  pid_t waited;
  while ((waited = waitpid(pid, &wstatus, 0)) < 0 && errno == EINTR) {
  }
  if (timed_out) return absl::DeadlineExceededError("libonnx's " + what + " ran past 120 s");
  if (waited != pid)  // e.g. the host ignores SIGCHLD: no status to trust
    return absl::InternalError(absl::StrCat("cannot wait for the libonnx process: ", std::strerror(errno)));
  if (WIFSIGNALED(wstatus))
    return absl::InvalidArgumentError(absl::StrCat(
        "libonnx crashed (signal ", WTERMSIG(wstatus), ") in the ", what,
        ": the model is malformed in a way libonnx 1.12 does not report"));
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || answer.empty())
    return absl::InvalidArgumentError(absl::StrCat(
        "libonnx failed (exit status ", WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, ") in the ",
        what, " without an answer"));
  return answer;
}

std::string CheckAndInfer(onnx::ModelProto& model, const onnx::ModelProto& checker_model, bool check,
                          bool infer) {
  std::string answer(1, kOk);
  try {
    if (check) onnx::checker::check_model(checker_model);
  } catch (const std::exception& e) {
    answer = std::string(1, kCheckerError) + e.what();
  }
  if (answer[0] == kOk && infer) {
    try {
      onnx::ShapeInferenceOptions si(/*check_type=*/false, /*error_mode=*/0,
                                     /*data_propagation=*/true);
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), si);
      model.mutable_graph()->clear_initializer();
      if (!model.AppendToString(&answer)) answer = std::string(1, kInferenceError) + "cannot serialize the result";
    } catch (const std::exception& e) {
      answer = std::string(1, kInferenceError) + e.what();
    }
  }
  return answer;
}

}  // namespace

absl::Status RunLibOnnxIsolated(onnx::ModelProto& model, const onnx::ModelProto& checker_model,
                                bool check, bool infer) {
  if (!check && !infer) return absl::OkStatus();
  auto answer = RunIsolated([&] { return CheckAndInfer(model, checker_model, check, infer); },
                            "checker or shape inference");
  if (!answer.ok()) return answer.status();
  if ((*answer)[0] == kCheckerError) return absl::InvalidArgumentError("ONNX checker: " + answer->substr(1));
  if ((*answer)[0] == kInferenceError)
    return absl::InvalidArgumentError("ONNX shape inference: " + answer->substr(1));
  if (!infer) return absl::OkStatus();
  onnx::ModelProto inferred;
  if (!ParseModelProto(answer->data() + 1, answer->size() - 1, &inferred))
    return absl::InternalError("the shape-inferred model came back unreadable");
  inferred.mutable_graph()->mutable_initializer()->Swap(model.mutable_graph()->mutable_initializer());
  model.Swap(&inferred);
  return absl::OkStatus();
}

absl::Status ConvertOpsetIsolated(onnx::ModelProto& model, int target) {
  auto answer = RunIsolated(
      [&] {
        try {
          onnx::ModelProto converted = onnx::version_conversion::ConvertVersion(model, target);
          std::string bytes(1, kOk);
          return converted.AppendToString(&bytes) ? bytes : std::string(1, kConverterError) + "cannot serialize";
        } catch (const std::exception& e) {
          return std::string(1, kConverterError) + e.what();
        }
      },
      "version converter");
  if (!answer.ok()) return answer.status();
  if ((*answer)[0] == kConverterError) {
    // libonnx reports a missing adapter as a failed assertion: keep only what failed.
    std::string why = answer->substr(1);
    const size_t failed = why.find("failed: ");
    if (failed != std::string::npos) why = why.substr(failed + 8);
    return absl::InvalidArgumentError("ONNX version converter (libonnx 1.12): " + why);
  }
  onnx::ModelProto converted;
  if (!ParseModelProto(answer->data() + 1, answer->size() - 1, &converted))
    return absl::InternalError("the converted model came back unreadable");
  model.Swap(&converted);
  return absl::OkStatus();
}

}  // namespace tandem
