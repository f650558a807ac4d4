// Concurrency soak: one inference session shared by 8 threads x 1000 calls, each call with
// a different input (32 inputs of batch 1-4, so plans also see their shapes change); every
// output must equal, bit for bit, what a single thread computed for that input first.
// Run plainly by ctest, and optionally under ThreadSanitizer (tests/reliability/tsan_soak.sh).
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/session.h"

namespace tandem {
namespace {

constexpr int kThreads = 8, kCallsPerThread = 1000, kInputs = 32;

Tensor Input(int k) {
  const int64_t batch = 1 + k % 4;
  Tensor t = Tensor::Host(DataType::kFloat, {batch, 1, 28, 28});
  uint32_t s = 2654435761u * static_cast<uint32_t>(k + 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>(s >> 8) / 16777216.f;
  }
  return t;
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.dims() == b.dims() &&
         std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

TEST(ConcurrencySoak, EightThreadsMatchSingleThreadedResults) {
  SessionOptions options;
  options.num_threads = 1;  // parallelism comes from the callers
  auto session = Session::Load(std::string(TANDEM_SOURCE_DIR) + "/models/fashion_cnn.onnx", options);
  ASSERT_TRUE(session.ok()) << session.status();
  Session& s = **session;
  const std::string input_name = s.inputs().at(0).name;
  std::vector<Tensor> inputs, expected;
  for (int k = 0; k < kInputs; ++k) {
    inputs.push_back(Input(k));
    auto out = s.Run({{input_name, inputs.back()}});
    ASSERT_TRUE(out.ok()) << out.status();
    expected.push_back(out->at(0).Clone());
  }
  std::atomic<int> failures{0}, mismatches{0}, calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kCallsPerThread; ++r) {
        const int k = (t * 7 + r * 3) % kInputs;
        auto out = s.Run({{input_name, inputs[k]}});
        ++calls;
        if (!out.ok()) {
          if (failures++ == 0) ADD_FAILURE() << "thread " << t << " call " << r << ": " << out.status();
          continue;
        }
        if (!SameBits(out->at(0), expected[k]) && mismatches++ == 0)
          ADD_FAILURE() << "thread " << t << " call " << r << " (input " << k
                        << ") differs from the single-threaded result";
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(calls.load(), kThreads * kCallsPerThread);
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace tandem
