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
#include <mutex>
#include <string>
#include <vector>

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include "absl/strings/str_cat.h"
#include "onnx_import/tensor_proto.h"

namespace tandem {
namespace {

// The child's answer: one tag byte, then the inferred model or an error message.
constexpr char kOk = 'K', kCheckerError = 'C', kInferenceError = 'S';

bool WriteAll(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void RunChild(int fd, onnx::ModelProto& model, const onnx::ModelProto& checker_model,
                           bool check, bool infer) {
  // A crash must end the child with its signal (sanitizer and fuzzer handlers inherited
  // from the parent would otherwise report it as the parent's).
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, SIG_DFL);
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
  _exit(WriteAll(fd, answer) ? 0 : 3);
}

}  // namespace

absl::Status RunLibOnnxIsolated(onnx::ModelProto& model, const onnx::ModelProto& checker_model,
                                bool check, bool infer) {
  if (!check && !infer) return absl::OkStatus();
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
      RunChild(fds[1], model, checker_model, check, infer);
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
  if (timed_out)
    return absl::DeadlineExceededError("libonnx's checker/shape inference ran past 120 s");
  if (waited != pid)  // e.g. the host ignores SIGCHLD: no status to trust
    return absl::InternalError(absl::StrCat("cannot wait for the libonnx process: ", std::strerror(errno)));
  if (WIFSIGNALED(wstatus))
    return absl::InvalidArgumentError(absl::StrCat(
        "libonnx crashed (signal ", WTERMSIG(wstatus),
        ") in the checker or shape inference: the model is malformed in a way libonnx 1.12 "
        "does not report"));
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || answer.empty())
    return absl::InvalidArgumentError(absl::StrCat(
        "libonnx failed (exit status ", WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1,
        ") in the checker or shape inference without an answer"));
  if (answer[0] == kCheckerError) return absl::InvalidArgumentError("ONNX checker: " + answer.substr(1));
  if (answer[0] == kInferenceError)
    return absl::InvalidArgumentError("ONNX shape inference: " + answer.substr(1));
  if (!infer) return absl::OkStatus();
  onnx::ModelProto inferred;
  if (!ParseModelProto(answer.data() + 1, answer.size() - 1, &inferred))
    return absl::InternalError("the shape-inferred model came back unreadable");
  inferred.mutable_graph()->mutable_initializer()->Swap(model.mutable_graph()->mutable_initializer());
  model.Swap(&inferred);
  return absl::OkStatus();
}

}  // namespace tandem
