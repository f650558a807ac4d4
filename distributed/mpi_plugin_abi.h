/* The C interface between the engine and libtandem_mpi.so, the plugin that links Open MPI
 * (or any MPI): the engine never links MPI itself, so it runs where no MPI is installed
 * and loads the plugin only for a data-parallel run (distributed/mpi_communicator.h).
 * Every function returns 0 on success, else writes one line into err (err_size bytes). */
#ifndef TANDEM_PROVIDERS_MPI_MPI_PLUGIN_ABI_H_
#define TANDEM_PROVIDERS_MPI_MPI_PLUGIN_ABI_H_
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TANDEM_MPI_PLUGIN_ABI 1
#define TANDEM_MPI_PLUGIN_ENTRY "tandem_mpi_plugin"

typedef struct TandemMpiPlugin {
  int abi_version; /* TANDEM_MPI_PLUGIN_ABI */
  /* MPI_Init_thread (MPI_THREAD_SERIALIZED) unless MPI is initialized already; rank and
   * size in MPI_COMM_WORLD, rank on this host; the library's version and the host name. */
  int (*init)(int* rank, int* size, int* local_rank, char* version, size_t version_size, char* host,
              size_t host_size, char* err, size_t err_size);
  int (*allreduce_sum_f32)(float* data, int64_t count, char* err, size_t err_size);
  int (*allreduce_sum_f64)(double* data, int64_t count, char* err, size_t err_size);
  int (*broadcast)(void* data, int64_t bytes, int root, char* err, size_t err_size);
  int (*barrier)(char* err, size_t err_size);
  /* MPI_Abort(MPI_COMM_WORLD, code): ends every process of the job. */
  void (*abort)(int code);
  /* MPI_Finalize, when init initialized MPI. */
  void (*finalize)(void);
} TandemMpiPlugin;

typedef const TandemMpiPlugin* (*TandemMpiPluginEntry)(void);

#ifdef __cplusplus
}
#endif
#endif
