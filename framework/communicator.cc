#include "framework/communicator.h"

#include <atomic>
#include <cstdlib>

namespace tandem {
namespace {
std::atomic<Communicator*> process_communicator{nullptr};
}  // namespace

Communicator* ProcessCommunicator() { return process_communicator.load(); }
void SetProcessCommunicator(Communicator* c) { process_communicator.store(c); }

int LaunchedWorldSize() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    const char* v = std::getenv(var);
    if (v && *v) {
      const int n = std::atoi(v);
      if (n > 0) return n;
    }
  }
  return 0;
}

}  // namespace tandem
