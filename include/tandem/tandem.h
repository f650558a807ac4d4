/* Tandem C API: load ONNX models, run them on the CPU or a GPU, and train them.
 *
 * Conventions (every function follows them):
 *  - Opaque handles (TandemEnv, TandemSession, TandemTensor, ...) are created by a
 *    tandem_*_create (or a call that says it returns a new handle) and freed by the
 *    paired tandem_*_release, which accepts NULL and returns nothing.
 *  - Every other call returns a TandemStatus*: NULL means success; anything else is an
 *    error the caller owns and frees with tandem_status_release(). Its code says what
 *    kind of error, its message says what went wrong and where ("[run] input 'x' has
 *    shape [2,3], the model expects [N,4]"). On error, out-parameters are left as they
 *    were and nothing is leaked.
 *  - Strings the library returns through `const char**` stay valid while the handle they
 *    came from lives; strings returned through `char**` are the caller's, freed with
 *    tandem_free().
 *
 * Versioning: TANDEM_API_VERSION grows by one whenever calls are added; calls are never
 * removed or changed, so a client built against version N works with any library whose
 * tandem_api_version() >= N. tandem_env_create() checks that for the client.
 *
 * Threads: see each handle. In short, a TandemSession may be Run from many threads at
 * once; a TandemTrainingSession and a TandemIoBinding are used by one thread at a time
 * (a concurrent call is refused with TANDEM_BUSY, never corrupts state).
 */
#ifndef TANDEM_TANDEM_H_
#define TANDEM_TANDEM_H_

#include <stddef.h>
#include <stdint.h>

/* The only symbols libtandem.so exports. */
#define TANDEM_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

#define TANDEM_API_VERSION 2

/* ---- Errors ------------------------------------------------------------------------ */

typedef enum TandemCode {
  TANDEM_OK = 0,
  TANDEM_INVALID_ARGUMENT = 1,   /* null handle, wrong shape/dtype, bad option value */
  TANDEM_NOT_FOUND = 2,          /* unknown input/output name, missing file */
  TANDEM_FAILED_PRECONDITION = 3,/* e.g. host data asked of a device tensor */
  TANDEM_RESOURCE_EXHAUSTED = 4, /* out of memory */
  TANDEM_UNAVAILABLE = 5,        /* a provider (e.g. cuda) cannot be used here */
  TANDEM_UNIMPLEMENTED = 6,      /* an op or feature Tandem does not have */
  TANDEM_INTERNAL = 7,
  TANDEM_BUSY = 8,               /* a single-thread handle is in use by another thread */
  TANDEM_INVALID_MODEL = 9,      /* the model file fails to parse or validate */
  TANDEM_IO_ERROR = 10           /* a file cannot be read or written (permissions, disk) */
} TandemCode;

typedef struct TandemStatus TandemStatus;

/* TANDEM_OK and "" for NULL. The message is valid until the status is released. */
TANDEM_EXPORT TandemCode tandem_status_code(const TandemStatus* status);
TANDEM_EXPORT const char* tandem_status_message(const TandemStatus* status);
TANDEM_EXPORT void tandem_status_release(TandemStatus* status);
/* Frees a string the library returned through a `char**`. */
TANDEM_EXPORT void tandem_free(void* p);

/* ---- Version and environment ------------------------------------------------------- */

/* "0.1.0": the library's version. */
TANDEM_EXPORT const char* tandem_version(void);
/* The highest TANDEM_API_VERSION this library implements. */
TANDEM_EXPORT uint32_t tandem_api_version(void);

/* Process-wide state shared by sessions. Thread-safe. `api_version` is the
 * TANDEM_API_VERSION the client was compiled with; a newer one than the library's is
 * refused (TANDEM_UNIMPLEMENTED) instead of failing later on a missing call. */
typedef struct TandemEnv TandemEnv;
TANDEM_EXPORT TandemStatus* tandem_env_create(uint32_t api_version, TandemEnv** out);
TANDEM_EXPORT void tandem_env_release(TandemEnv* env);
/* *available = 1 when provider `name` ("cpu", "cuda") can run here (plugin found and a
 * device visible), else 0. `*why` (may be NULL) says why not; it lives as long as env. */
TANDEM_EXPORT TandemStatus* tandem_env_provider_available(TandemEnv* env, const char* name,
                                                          int* available, const char** why);

/* ---- Tensors ----------------------------------------------------------------------- */

/* Element types; the values are ONNX's TensorProto.DataType. */
typedef enum TandemDataType {
  TANDEM_UNDEFINED = 0, TANDEM_FLOAT = 1, TANDEM_UINT8 = 2, TANDEM_INT8 = 3,
  TANDEM_UINT16 = 4, TANDEM_INT16 = 5, TANDEM_INT32 = 6, TANDEM_INT64 = 7,
  TANDEM_STRING = 8, TANDEM_BOOL = 9, TANDEM_FLOAT16 = 10, TANDEM_DOUBLE = 11,
  TANDEM_UINT32 = 12, TANDEM_UINT64 = 13, TANDEM_BFLOAT16 = 16
} TandemDataType;

typedef enum TandemDeviceType { TANDEM_DEVICE_CPU = 0, TANDEM_DEVICE_CUDA = 1 } TandemDeviceType;

/* A dense tensor on the host or on a device. Not synchronised: one thread may write a
 * tensor while others only read it. String tensors are not supported (yet) by this API. */
typedef struct TandemTensor TandemTensor;

/* A new host tensor of zeros that owns its memory. */
TANDEM_EXPORT TandemStatus* tandem_tensor_create(TandemDataType dtype, const int64_t* dims,
                                                 size_t rank, TandemTensor** out);
/* A host tensor over the caller's memory, without a copy. `byte_size` must be at least
 * numel * element size; `data` must stay valid until the tensor is released and, when
 * it is bound to an IO binding, while it stays bound. Run outputs never alias the
 * caller's memory nor the model's weights (an output that would, e.g. through Identity,
 * is copied). */
TANDEM_EXPORT TandemStatus* tandem_tensor_wrap(TandemDataType dtype, const int64_t* dims,
                                               size_t rank, void* data, size_t byte_size,
                                               TandemTensor** out);
/* A device tensor over the caller's device memory (e.g. another library's CUDA tensor,
 * shared through DLPack), without a copy; `data` must stay valid until the tensor is
 * released. The caller orders the work that wrote it before the session's runs (see
 * tandem_session_device_stream). Since API version 2. */
TANDEM_EXPORT TandemStatus* tandem_tensor_wrap_device(TandemDataType dtype, const int64_t* dims,
                                                      size_t rank, TandemDeviceType device,
                                                      int device_index, void* data, size_t byte_size,
                                                      TandemTensor** out);
TANDEM_EXPORT void tandem_tensor_release(TandemTensor* tensor);
TANDEM_EXPORT TandemStatus* tandem_tensor_dtype(const TandemTensor* t, TandemDataType* dtype);
TANDEM_EXPORT TandemStatus* tandem_tensor_rank(const TandemTensor* t, size_t* rank);
/* Copies the rank dims into `dims`; `capacity` below the rank is an error. (String
 * outputs of a model are returned as tensors whose data is refused.) */
TANDEM_EXPORT TandemStatus* tandem_tensor_dims(const TandemTensor* t, int64_t* dims, size_t capacity);
TANDEM_EXPORT TandemStatus* tandem_tensor_byte_size(const TandemTensor* t, size_t* bytes);
TANDEM_EXPORT TandemStatus* tandem_tensor_device(const TandemTensor* t, TandemDeviceType* type,
                                                 int* index);
/* The host memory of a host tensor (TANDEM_FAILED_PRECONDITION for a device tensor:
 * copy it with tandem_session_tensor_to_host first). */
TANDEM_EXPORT TandemStatus* tandem_tensor_data(TandemTensor* t, void** data);
/* The address of the first element, host or device (tandem_tensor_device says which),
 * for handing the memory to another library (DLPack). Since API version 2. */
TANDEM_EXPORT TandemStatus* tandem_tensor_address(TandemTensor* t, void** data);
/* All a caller needs to read a host tensor, in one call (bindings pay per call): its
 * dtype, rank, dims (as tandem_tensor_dims: `capacity` below the rank is an error, and
 * `rank` is set first so the caller can retry), data (as tandem_tensor_data) and size. */
TANDEM_EXPORT TandemStatus* tandem_tensor_host_view(TandemTensor* t, TandemDataType* dtype,
                                                    size_t* rank, int64_t* dims, size_t capacity,
                                                    void** data, size_t* byte_size);

/* ---- Session options --------------------------------------------------------------- */

typedef struct TandemSessionOptions TandemSessionOptions;
TANDEM_EXPORT TandemStatus* tandem_session_options_create(TandemSessionOptions** out);
TANDEM_EXPORT void tandem_session_options_release(TandemSessionOptions* options);
/* Providers in order of preference, e.g. {"cuda", "cpu"}. A single "auto" means the GPU
 * when one is usable, else the CPU; default {"cpu"}. The CPU is always added last. A
 * provider that cannot be used is an error at session creation (TANDEM_UNAVAILABLE). */
TANDEM_EXPORT TandemStatus* tandem_session_options_set_providers(TandemSessionOptions* options,
                                                                 const char* const* names,
                                                                 size_t count);
/* Intra-op threads for CPU kernels; 0 (default) = all cores. They are GNU OpenMP threads,
 * which spin 300,000 rounds when idle unless told otherwise: on a machine shared with other
 * programs, start yours with GOMP_SPINCOUNT=1000 (what the tandem CLI and Python module set,
 * README "Sharing the CPU"); libgomp reads it only when it loads. While other programs keep
 * cores busy, a CPU session's runs use fewer threads where that measures faster
 * (TANDEM_ADAPTIVE_THREADS=0 in the environment keeps every run on this count). */
TANDEM_EXPORT TandemStatus* tandem_session_options_set_threads(TandemSessionOptions* options,
                                                               int threads);
/* 0: no constant folding or fusion, 1: constant folding, 2 (default): also fusions. */
TANDEM_EXPORT TandemStatus* tandem_session_options_set_optimization_level(
    TandemSessionOptions* options, int level);
/* 1: time every node (see tandem_session_profile). Default 0. */
TANDEM_EXPORT TandemStatus* tandem_session_options_set_profiling(TandemSessionOptions* options,
                                                                 int enabled);
/* 1: outputs stay on the device that produced them (for results fed back into later runs
 * or read with tandem_session_tensor_to_host). Default 0: outputs come back to the host. */
TANDEM_EXPORT TandemStatus* tandem_session_options_set_outputs_on_device(
    TandemSessionOptions* options, int enabled);

/* ---- Inference sessions ------------------------------------------------------------ */

/* A loaded, optimised and partitioned model. Thread-safe: Run may be called from many
 * threads at once on one session (each concurrent call gets its own execution plan;
 * results are the same as those of sequential calls). Releasing a session while a call
 * on it is running is the caller's bug. */
typedef struct TandemSession TandemSession;

/* `options` may be NULL (defaults). Errors name the file, node and op at fault. */
TANDEM_EXPORT TandemStatus* tandem_session_create(TandemEnv* env, const char* model_path,
                                                  const TandemSessionOptions* options,
                                                  TandemSession** out);
/* From a serialized ModelProto in memory (copied; external data is not allowed). */
TANDEM_EXPORT TandemStatus* tandem_session_create_from_memory(TandemEnv* env, const void* data,
                                                              size_t size,
                                                              const TandemSessionOptions* options,
                                                              TandemSession** out);
TANDEM_EXPORT void tandem_session_release(TandemSession* session);

/* Model metadata. `kind` picks the graph inputs or outputs. */
typedef enum TandemIoKind { TANDEM_INPUTS = 0, TANDEM_OUTPUTS = 1 } TandemIoKind;
TANDEM_EXPORT TandemStatus* tandem_session_io_count(const TandemSession* s, TandemIoKind kind,
                                                    size_t* count);
TANDEM_EXPORT TandemStatus* tandem_session_io_name(const TandemSession* s, TandemIoKind kind,
                                                   size_t index, const char** name);
TANDEM_EXPORT TandemStatus* tandem_session_io_dtype(const TandemSession* s, TandemIoKind kind,
                                                    size_t index, TandemDataType* dtype);
/* *rank = -1 when the model does not fix the rank. */
TANDEM_EXPORT TandemStatus* tandem_session_io_rank(const TandemSession* s, TandemIoKind kind,
                                                   size_t index, int64_t* rank);
/* Dimension `axis`: *value is its size, or -1 when it is symbolic or unknown; *symbol
 * (may be NULL) is its name ("batch", "N") or NULL when it has none. */
TANDEM_EXPORT TandemStatus* tandem_session_io_dim(const TandemSession* s, TandemIoKind kind,
                                                  size_t index, size_t axis, int64_t* value,
                                                  const char** symbol);

/* Runs the model. Inputs by name (every model input must be given, each once); outputs
 * by name, or all of them in model order when `output_names` is NULL (then
 * `output_count` must equal the number of outputs). `outputs[i]` receives a new tensor
 * the caller releases. Inputs may be host tensors or device tensors made by
 * tandem_session_tensor_to_device (used in place, no copy). */
TANDEM_EXPORT TandemStatus* tandem_session_run(TandemSession* s, const char* const* input_names,
                                               const TandemTensor* const* inputs, size_t input_count,
                                               const char* const* output_names, size_t output_count,
                                               TandemTensor** outputs);

/* A copy of host tensor `t` on the session's first provider's device (a new handle to
 * the same memory when that is the CPU): upload data once, run many times. */
TANDEM_EXPORT TandemStatus* tandem_session_tensor_to_device(const TandemSession* s,
                                                            const TandemTensor* t,
                                                            TandemTensor** out);
/* A host copy of `t` wherever it lives (a new handle to the same memory when on the host). */
TANDEM_EXPORT TandemStatus* tandem_session_tensor_to_host(const TandemSession* s,
                                                          const TandemTensor* t,
                                                          TandemTensor** out);

/* The native work queue of the session's first provider (CUDA: the cudaStream_t every
 * session on that GPU runs on), NULL when it is the CPU: a producer of device inputs
 * orders its writes before it (DLPack's __dlpack__(stream=...)). Since API version 2. */
TANDEM_EXPORT TandemStatus* tandem_session_device_stream(const TandemSession* s, void** stream);
/* Makes work later enqueued on `stream` (a native queue of the session's device: another
 * library's cudaStream_t, or 1 / 2 for CUDA's legacy / per-thread default stream) wait
 * for everything the session has enqueued so far, without blocking: device outputs are
 * then safe to read there. Nothing to do for a CPU session. Since API version 2. */
TANDEM_EXPORT TandemStatus* tandem_session_order_before(const TandemSession* s, void* stream);

/* Per-node timings since creation as JSON text ({"nodes": [{"node", "op", "provider",
 * "calls", "total_us"}...]}), summed over all threads' runs; calls and times are 0 unless
 * profiling was enabled. Free *json with tandem_free. */
TANDEM_EXPORT TandemStatus* tandem_session_profile(const TandemSession* s, char** json);

/* ---- IO binding: inputs and outputs bound once, run many times ---------------------- */

/* Bound inputs are checked against the model when bound and kept (referenced, not
 * copied) until rebound or the binding is released: a device-resident input is not
 * re-sent per run. An output bound to a tensor receives each run's result in that tensor
 * (same dtype and shape; host or device); an unbound output is kept in the binding and
 * read with tandem_io_binding_output. One thread at a time per binding (TANDEM_BUSY).
 * A bound tensor's memory must stay valid while bound (the binding keeps the library's
 * own buffers alive, not the caller's); release a binding before its session. */
typedef struct TandemIoBinding TandemIoBinding;
TANDEM_EXPORT TandemStatus* tandem_io_binding_create(TandemSession* s, TandemIoBinding** out);
TANDEM_EXPORT void tandem_io_binding_release(TandemIoBinding* binding);
TANDEM_EXPORT TandemStatus* tandem_io_binding_bind_input(TandemIoBinding* b, const char* name,
                                                         const TandemTensor* t);
TANDEM_EXPORT TandemStatus* tandem_io_binding_bind_output(TandemIoBinding* b, const char* name,
                                                          TandemTensor* t);
TANDEM_EXPORT TandemStatus* tandem_session_run_with_binding(TandemSession* s, TandemIoBinding* b);
/* The latest result for output `name` as a new handle (shares memory with the binding's). */
TANDEM_EXPORT TandemStatus* tandem_io_binding_output(TandemIoBinding* b, const char* name,
                                                     TandemTensor** out);

/* ---- Training ---------------------------------------------------------------------- */

typedef struct TandemTrainingOptions TandemTrainingOptions;
TANDEM_EXPORT TandemStatus* tandem_training_options_create(TandemTrainingOptions** out);
TANDEM_EXPORT void tandem_training_options_release(TandemTrainingOptions* options);
/* Settings by name, spelled like `tandem train`'s flags without the dashes
 * (underscores for inner dashes):
 *   loss (mse|l1|cross_entropy|nll|bce_with_logits; cross_entropy and nll take int64 class
 *   labels), reduction (mean|sum), prediction (output
 *   name), optimizer (sgd|momentum|adam|adamw), lr, momentum, nesterov (0|1), beta1,
 *   beta2, epsilon, weight_decay, clip_norm, schedule (constant|step|cosine), step_size,
 *   gamma, total_steps, min_lr, warmup_steps, freeze (a name or prefix*, repeatable),
 *   threads, device (cpu|cuda|auto: parameters and optimizer state then live on the GPU),
 *   profiling (0|1), distributed (mpi|none: in a process that `mpirun -n K` or `srun`
 *   started, join the job and train data-parallel — docs/DISTRIBUTED.md; each rank steps on
 *   its own batch, the parameters start from rank 0's, the gradients, losses and
 *   eval_step's metrics are those of all ranks' batches together).
 * An unknown key or a malformed value is TANDEM_INVALID_ARGUMENT naming both. */
TANDEM_EXPORT TandemStatus* tandem_training_options_set(TandemTrainingOptions* options,
                                                        const char* key, const char* value);

/* A model being trained: parameters and optimizer state owned by the session (on the
 * training device). Not thread-safe: a call made while another thread is inside one on
 * the same training session returns TANDEM_BUSY and changes nothing. */
typedef struct TandemTrainingSession TandemTrainingSession;
TANDEM_EXPORT TandemStatus* tandem_training_session_create(TandemEnv* env, const char* model_path,
                                                           const TandemTrainingOptions* options,
                                                           TandemTrainingSession** out);
TANDEM_EXPORT void tandem_training_session_release(TandemTrainingSession* ts);
/* This process's rank and the number of ranks (0 and 1 without distributed=mpi); either
 * pointer may be NULL. In a data-parallel job, write checkpoints and exports from rank 0. */
TANDEM_EXPORT TandemStatus* tandem_training_session_rank(const TandemTrainingSession* ts, int* rank, int* size);
/* The native work queue of the training session's device (CUDA: its cudaStream_t), NULL
 * on the CPU: producers of device batches order their writes before it (DLPack's
 * __dlpack__(stream=...)). Since API version 2. */
TANDEM_EXPORT TandemStatus* tandem_training_session_device_stream(const TandemTrainingSession* ts,
                                                                  void** stream);
/* The model's data inputs (the inputs a batch feeds), by index. */
TANDEM_EXPORT TandemStatus* tandem_training_session_input_count(const TandemTrainingSession* ts,
                                                                size_t* count);
TANDEM_EXPORT TandemStatus* tandem_training_session_input_name(const TandemTrainingSession* ts,
                                                               size_t index, const char** name);
/* The number of model outputs (what tandem_training_session_predict returns). */
TANDEM_EXPORT TandemStatus* tandem_training_session_output_count(const TandemTrainingSession* ts,
                                                                 size_t* count);
/* One optimizer step on a batch; *loss (may be NULL) is the batch loss before the update. */
TANDEM_EXPORT TandemStatus* tandem_training_session_train_step(
    TandemTrainingSession* ts, const char* const* input_names, const TandemTensor* const* inputs,
    size_t input_count, const TandemTensor* target, double* loss);
/* The loss (mean over samples) and, for classification losses, the accuracy (else -1) of
 * the current weights on a batch, in inference mode; no update. Either pointer may be NULL. */
TANDEM_EXPORT TandemStatus* tandem_training_session_eval_step(
    TandemTrainingSession* ts, const char* const* input_names, const TandemTensor* const* inputs,
    size_t input_count, const TandemTensor* target, double* loss, double* accuracy);
/* The model's outputs with the current weights (inference mode), all of them in model
 * order: `output_count` must equal their number; each is a new host tensor. */
TANDEM_EXPORT TandemStatus* tandem_training_session_predict(
    TandemTrainingSession* ts, const char* const* input_names, const TandemTensor* const* inputs,
    size_t input_count, size_t output_count, TandemTensor** outputs);
/* Base learning rate (the schedule, if any, scales it); *lr is the rate the next step uses.
 * Rates are kept in float32 (0.01 reads back as 0.009999999776...). */
TANDEM_EXPORT TandemStatus* tandem_training_session_set_learning_rate(TandemTrainingSession* ts,
                                                                      double lr);
TANDEM_EXPORT TandemStatus* tandem_training_session_learning_rate(TandemTrainingSession* ts,
                                                                  double* lr);
TANDEM_EXPORT TandemStatus* tandem_training_session_steps(TandemTrainingSession* ts,
                                                          int64_t* steps);
/* Parameters, optimizer state and step count, written atomically (same format as
 * `tandem train --checkpoint-dir`). Loading checks every tensor's name, shape and type. */
TANDEM_EXPORT TandemStatus* tandem_training_session_save_checkpoint(TandemTrainingSession* ts,
                                                                    const char* path);
TANDEM_EXPORT TandemStatus* tandem_training_session_load_checkpoint(TandemTrainingSession* ts,
                                                                    const char* path);
/* The trained model as a standard ONNX inference model. */
TANDEM_EXPORT TandemStatus* tandem_training_session_export(TandemTrainingSession* ts,
                                                           const char* path);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* TANDEM_TANDEM_H_ */
