#include "onnx_import/libonnx_isolated.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cerrno>
#include <cstring>
#include <exception>
#include <string>

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include "absl/strings/str_cat.h"

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
      answer += model.SerializeAsString();
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
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return absl::ResourceExhaustedError(absl::StrCat("cannot create a pipe: ", std::strerror(errno)));
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    return absl::ResourceExhaustedError(absl::StrCat("cannot fork for libonnx: ", std::strerror(err)));
  }
  if (pid == 0) {
    close(fds[0]);
    RunChild(fds[1], model, checker_model, check, infer);
  }
  close(fds[1]);
  std::string answer;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(wstatus))
    return absl::InvalidArgumentError(absl::StrCat(
        "libonnx crashed (signal ", WTERMSIG(wstatus),
        ") in the checker or shape inference: the model is malformed in a way libonnx 1.12 "
        "does not report"));
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || answer.empty())
    return absl::InvalidArgumentError(absl::StrCat(
        "libonnx failed (exit status ", WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1,
        ") in the checker or shape inference without an answer"));
  const std::string message = answer.substr(1);
  if (answer[0] == kCheckerError) return absl::InvalidArgumentError("ONNX checker: " + message);
  if (answer[0] == kInferenceError) return absl::InvalidArgumentError("ONNX shape inference: " + message);
  if (!infer) return absl::OkStatus();
  onnx::ModelProto inferred;
  if (!inferred.ParseFromString(message))
    return absl::InternalError("the shape-inferred model came back unreadable");
  inferred.mutable_graph()->mutable_initializer()->Swap(model.mutable_graph()->mutable_initializer());
  model.Swap(&inferred);
  return absl::OkStatus();
}

}  // namespace tandem
