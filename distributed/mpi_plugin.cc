// libtandem_mpi.so: the MPI calls behind distributed/mpi_plugin_abi.h, on MPI_COMM_WORLD.
// Counts above INT_MAX are sent in pieces (MPI counts are int).
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "distributed/mpi_plugin_abi.h"

namespace {

bool initialized_here = false;

int Fail(int code, const char* what, char* err, size_t err_size) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  MPI_Error_string(code, text, &len);
  std::snprintf(err, err_size, "%s failed: %s", what, text);
  return 1;
}

int Init(int* rank, int* size, int* local_rank, char* version, size_t version_size, char* host, size_t host_size,
         char* err, size_t err_size) {
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) {
    int provided = 0;
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) return Fail(rc, "MPI_Init_thread", err, err_size);
    initialized_here = true;
  }
  // Errors come back as codes (and become messages naming the step) instead of aborting.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, local_rank);
  MPI_Comm_free(&node);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(lib, &len);
  const char* end = std::strpbrk(lib, ",\n");  // "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4"
  std::snprintf(version, version_size, "%.*s", static_cast<int>(end ? end - lib : std::strlen(lib)), lib);
  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  MPI_Get_processor_name(name, &len);
  std::snprintf(host, host_size, "%s", name);
  return 0;
}

template <typename T>
int AllReduceSum(T* data, int64_t count, MPI_Datatype type, char* err, size_t err_size) {
  for (int64_t done = 0; done < count;) {
    const int n = static_cast<int>(std::min<int64_t>(count - done, INT_MAX));
    const int rc = MPI_Allreduce(MPI_IN_PLACE, data + done, n, type, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return Fail(rc, "MPI_Allreduce", err, err_size);
    done += n;
  }
  return 0;
}

int AllReduceF32(float* data, int64_t count, char* err, size_t err_size) {
  return AllReduceSum(data, count, MPI_FLOAT, err, err_size);
}
int AllReduceF64(double* data, int64_t count, char* err, size_t err_size) {
  return AllReduceSum(data, count, MPI_DOUBLE, err, err_size);
}

int Broadcast(void* data, int64_t bytes, int root, char* err, size_t err_size) {
  char* p = static_cast<char*>(data);
  for (int64_t done = 0; done < bytes;) {
    const int n = static_cast<int>(std::min<int64_t>(bytes - done, INT_MAX));
    const int rc = MPI_Bcast(p + done, n, MPI_BYTE, root, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return Fail(rc, "MPI_Bcast", err, err_size);
    done += n;
  }
  return 0;
}

int Barrier(char* err, size_t err_size) {
  const int rc = MPI_Barrier(MPI_COMM_WORLD);
  return rc == MPI_SUCCESS ? 0 : Fail(rc, "MPI_Barrier", err, err_size);
}

void Abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

void Finalize() {
  int done = 0;
  MPI_Finalized(&done);
  if (initialized_here && !done) MPI_Finalize();
}

const TandemMpiPlugin kPlugin = {TANDEM_MPI_PLUGIN_ABI, Init, AllReduceF32, AllReduceF64, Broadcast, Barrier, Abort,
                                 Finalize};

}  // namespace

extern "C" __attribute__((visibility("default"))) const TandemMpiPlugin* tandem_mpi_plugin() { return &kPlugin; }
