// Helpers for the C API tests: status checks, RAII holders for the C handles, and a
// float64 reference of the Gemm(+Tanh/Relu) MLPs in models/ read straight from the ONNX
// file's initializers (independent of the runtime's kernels).
#pragma once
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tandem/tandem.h"

namespace tandem_test {

// Passes when `s` is NULL; otherwise fails with its message. Releases it.
#define EXPECT_TANDEM_OK(call)                                                      \
  do {                                                                              \
    TandemStatus* st_ = (call);                                                     \
    EXPECT_EQ(st_, nullptr) << #call << ": " << tandem_status_message(st_);         \
    tandem_status_release(st_);                                                     \
  } while (0)
#define ASSERT_TANDEM_OK(call)                                                      \
  do {                                                                              \
    TandemStatus* st_ = (call);                                                     \
    std::string msg_ = tandem_status_message(st_);                                  \
    tandem_status_release(st_);                                                     \
    ASSERT_TRUE(msg_.empty()) << #call << ": " << msg_;                             \
  } while (0)

// Expects an error of `code` whose message contains `part`. Releases it.
void ExpectError(TandemStatus* s, TandemCode code, const std::string& part, const char* what);
#define EXPECT_TANDEM_ERROR(call, code, part) ::tandem_test::ExpectError((call), (code), (part), #call)

struct EnvDeleter { void operator()(TandemEnv* p) const { tandem_env_release(p); } };
struct SessionDeleter { void operator()(TandemSession* p) const { tandem_session_release(p); } };
struct TensorDeleter { void operator()(TandemTensor* p) const { tandem_tensor_release(p); } };
struct TrainingDeleter {
  void operator()(TandemTrainingSession* p) const { tandem_training_session_release(p); }
};
using EnvPtr = std::unique_ptr<TandemEnv, EnvDeleter>;
using SessionPtr = std::unique_ptr<TandemSession, SessionDeleter>;
using TensorPtr = std::unique_ptr<TandemTensor, TensorDeleter>;
using TrainingPtr = std::unique_ptr<TandemTrainingSession, TrainingDeleter>;

EnvPtr MakeEnv();
std::string ModelPath(const std::string& name);  // models/<name>
SessionPtr MakeSession(TandemEnv* env, const std::string& path, TandemSessionOptions* o = nullptr);
// A float tensor [rows, cols] wrapping `data` (kept alive by the caller).
TensorPtr Wrap(std::vector<float>& data, int64_t rows, int64_t cols);
std::vector<float> Values(TandemTensor* t);  // host float tensor -> vector

// y = layers(x) in double for models/ode_mlp.onnx and models/peaks_mlp.onnx.
struct ReferenceMlp {
  struct Layer {
    std::vector<double> w, b;  // w: [out, in] (Gemm transB=1)
    int64_t in = 0, out = 0;
    char activation = 0;       // 't' tanh, 'r' relu, 0 none
  };
  std::vector<Layer> layers;
  static ReferenceMlp Load(const std::string& path);
  std::vector<double> Forward(const std::vector<float>& x, int64_t rows) const;
};

}  // namespace tandem_test
