// A stand-in for a data-parallel group in one process (framework/communicator.h): K ranks
// that all hold this rank's values, so a sum over them is K times this rank's, a broadcast
// changes nothing. The trainer's wiring and the providers' AllReduce kernels run against
// it without MPI. Counts the calls it gets.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "framework/communicator.h"

namespace tandem {

class MirrorCommunicator : public Communicator {
 public:
  explicit MirrorCommunicator(int size) : size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  int local_rank() const override { return 0; }
  std::string description() const override { return "mirror"; }
  absl::Status AllReduceSum(float* data, int64_t count) override {
    for (int64_t i = 0; i < count; ++i) data[i] *= static_cast<float>(size_);
    ++reductions;
    return absl::OkStatus();
  }
  absl::Status AllReduceSum(double* data, int64_t count) override {
    for (int64_t i = 0; i < count; ++i) data[i] *= size_;
    ++reductions;
    return absl::OkStatus();
  }
  absl::Status Broadcast(void*, int64_t, int) override {
    ++broadcasts;
    return absl::OkStatus();
  }
  absl::Status Barrier() override { return absl::OkStatus(); }
  [[noreturn]] void Abort(const std::string& message) override {
    ADD_FAILURE() << message;
    std::abort();
  }
  int reductions = 0, broadcasts = 0;

 private:
  int size_;
};

// Makes `c` the process communicator (SetProcessCommunicator) for a scope.
struct ScopedCommunicator {
  explicit ScopedCommunicator(Communicator* c) { SetProcessCommunicator(c); }
  ~ScopedCommunicator() { SetProcessCommunicator(nullptr); }
};

}  // namespace tandem
