#include "tests/c_api/c_api_helpers.h"

#include <cmath>

#include "onnx_import/import.h"

namespace tandem_test {

void ExpectError(TandemStatus* s, TandemCode code, const std::string& part, const char* what) {
  ASSERT_NE(s, nullptr) << what << " succeeded, expected an error containing '" << part << "'";
  EXPECT_EQ(tandem_status_code(s), code) << what << ": " << tandem_status_message(s);
  EXPECT_NE(std::string(tandem_status_message(s)).find(part), std::string::npos)
      << what << ": message '" << tandem_status_message(s) << "' lacks '" << part << "'";
  tandem_status_release(s);
}

EnvPtr MakeEnv() {
  TandemEnv* env = nullptr;
  TandemStatus* s = tandem_env_create(TANDEM_API_VERSION, &env);
  EXPECT_EQ(s, nullptr) << tandem_status_message(s);
  tandem_status_release(s);
  return EnvPtr(env);
}

std::string ModelPath(const std::string& name) { return std::string(TANDEM_SOURCE_DIR) + "/models/" + name; }

SessionPtr MakeSession(TandemEnv* env, const std::string& path, TandemSessionOptions* o) {
  TandemSession* s = nullptr;
  EXPECT_TANDEM_OK(tandem_session_create(env, path.c_str(), o, &s));
  return SessionPtr(s);
}

TensorPtr Wrap(std::vector<float>& data, int64_t rows, int64_t cols) {
  int64_t dims[2] = {rows, cols};
  TandemTensor* t = nullptr;
  EXPECT_TANDEM_OK(tandem_tensor_wrap(TANDEM_FLOAT, dims, 2, data.data(), data.size() * sizeof(float), &t));
  return TensorPtr(t);
}

std::vector<float> Values(TandemTensor* t) {
  size_t bytes = 0;
  void* data = nullptr;
  EXPECT_TANDEM_OK(tandem_tensor_byte_size(t, &bytes));
  EXPECT_TANDEM_OK(tandem_tensor_data(t, &data));
  const float* f = static_cast<const float*>(data);
  return std::vector<float>(f, f + bytes / sizeof(float));
}

ReferenceMlp ReferenceMlp::Load(const std::string& path) {
  ReferenceMlp mlp;
  auto g = tandem::ImportModelFile(path);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return mlp;
  for (const tandem::Node& n : g->nodes) {
    if (n.op_type == "Gemm") {
      Layer l;
      const tandem::Tensor& w = g->initializers.at(n.inputs[1]);
      const tandem::Tensor& b = g->initializers.at(n.inputs[2]);
      l.out = w.dim(0);
      l.in = w.dim(1);
      for (int64_t i = 0; i < w.numel(); ++i) l.w.push_back(w.ElementAsDouble(i));
      for (int64_t i = 0; i < b.numel(); ++i) l.b.push_back(b.ElementAsDouble(i));
      mlp.layers.push_back(l);
    } else if (n.op_type == "Tanh" || n.op_type == "Relu") {
      mlp.layers.back().activation = n.op_type == "Tanh" ? 't' : 'r';
    } else {
      ADD_FAILURE() << "reference MLP: unexpected op " << n.op_type;
    }
  }
  return mlp;
}

std::vector<double> ReferenceMlp::Forward(const std::vector<float>& x, int64_t rows) const {
  std::vector<double> a(x.begin(), x.end());
  for (const Layer& l : layers) {
    std::vector<double> y(rows * l.out);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < l.out; ++o) {
        double s = l.b[o];
        for (int64_t i = 0; i < l.in; ++i) s += a[r * l.in + i] * l.w[o * l.in + i];
        if (l.activation == 't') s = std::tanh(s);
        if (l.activation == 'r') s = s > 0 ? s : 0;
        y[r * l.out + o] = s;
      }
    a = std::move(y);
  }
  return a;
}

}  // namespace tandem_test
