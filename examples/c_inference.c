/* c_inference: load an ONNX model with the Tandem C API, print its inputs and outputs,
 * run it once on deterministic data and print the outputs.
 *
 *   usage: c_inference MODEL.onnx [BATCH]
 *
 * Symbolic dimensions ("batch", "N", ...) are set to BATCH (default 1). Float inputs get
 * the values sin(0.1 * i) (i = flat element index); inputs of other types get zeros.
 * Every status is checked; on error the message is printed, everything made so far is
 * freed and the exit code is 1. C99. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tandem/tandem.h>

/* Stores the failed call's status in `st` and jumps to the cleanup code. */
#define CHECK(call)                                                                 \
  do {                                                                              \
    st = (call);                                                                    \
    if (st != NULL) {                                                               \
      fflush(stdout);                                                               \
      fprintf(stderr, "error: %s\n  code %d: %s\n", #call, (int)tandem_status_code(st), \
              tandem_status_message(st));                                           \
      goto done;                                                                    \
    }                                                                               \
  } while (0)

static const char* dtype_name(TandemDataType t) {
  switch (t) {
    case TANDEM_FLOAT: return "float";
    case TANDEM_UINT8: return "uint8";
    case TANDEM_INT8: return "int8";
    case TANDEM_UINT16: return "uint16";
    case TANDEM_INT16: return "int16";
    case TANDEM_INT32: return "int32";
    case TANDEM_INT64: return "int64";
    case TANDEM_STRING: return "string";
    case TANDEM_BOOL: return "bool";
    case TANDEM_FLOAT16: return "float16";
    case TANDEM_DOUBLE: return "double";
    case TANDEM_UINT32: return "uint32";
    case TANDEM_UINT64: return "uint64";
    case TANDEM_BFLOAT16: return "bfloat16";
    default: return "undefined";
  }
}

/* Prints "  name  dtype[d0,d1,...]" for input/output `index`, with symbols for symbolic
 * dims, and stores the concrete shape (symbols -> batch) in dims/rank when they are given. */
static TandemStatus* describe_io(const TandemSession* s, TandemIoKind kind, size_t index,
                                 int64_t batch, int64_t* dims, size_t max_rank, size_t* rank_out) {
  const char* name = NULL;
  TandemDataType dtype = TANDEM_UNDEFINED;
  int64_t rank = 0, axis;
  TandemStatus* st;
  if ((st = tandem_session_io_name(s, kind, index, &name)) != NULL) return st;
  if ((st = tandem_session_io_dtype(s, kind, index, &dtype)) != NULL) return st;
  if ((st = tandem_session_io_rank(s, kind, index, &rank)) != NULL) return st;
  printf("  %-20s %s[", name, dtype_name(dtype));
  if (rank < 0) printf("?");
  for (axis = 0; axis < rank; ++axis) {
    int64_t value = -1;
    const char* symbol = NULL;
    if ((st = tandem_session_io_dim(s, kind, index, (size_t)axis, &value, &symbol)) != NULL) return st;
    if (axis > 0) printf(",");
    if (value >= 0) printf("%lld", (long long)value);
    else printf("%s", symbol != NULL ? symbol : "?");
    if (dims != NULL && (size_t)axis < max_rank) dims[axis] = value >= 0 ? value : batch;
  }
  printf("]\n");
  if (rank_out != NULL) *rank_out = rank < 0 ? (size_t)-1 : (size_t)rank;
  return NULL;
}

#define MAX_RANK 8
#define MAX_IO 16

int main(int argc, char** argv) {
  TandemStatus* st = NULL;
  TandemEnv* env = NULL;
  TandemSessionOptions* options = NULL;
  TandemSession* session = NULL;
  TandemTensor* inputs[MAX_IO] = {NULL};
  TandemTensor* outputs[MAX_IO] = {NULL};
  const char* input_names[MAX_IO] = {NULL};
  size_t n_in = 0, n_out = 0, i, j;
  long batch = 1;
  int rc = 1;

  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("usage: %s MODEL.onnx [BATCH]\n"
           "Prints MODEL's inputs and outputs and runs it once on BATCH (default 1) rows of data.\n",
           argv[0]);
    return 0;
  }
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s MODEL.onnx [BATCH]\n", argv[0]);
    return 2;
  }
  if (argc == 3) {
    char* end = NULL;
    batch = strtol(argv[2], &end, 10);
    if (end == argv[2] || *end != '\0' || batch < 1) {
      fprintf(stderr, "error: BATCH must be a positive integer, got '%s'\n", argv[2]);
      return 2;
    }
  }

  printf("tandem %s (API %u)\n", tandem_version(), (unsigned)tandem_api_version());
  CHECK(tandem_env_create(TANDEM_API_VERSION, &env));
  CHECK(tandem_session_options_create(&options));
  CHECK(tandem_session_options_set_threads(options, 1));
  CHECK(tandem_session_create(env, argv[1], options, &session));
  printf("model: %s\n", argv[1]);

  CHECK(tandem_session_io_count(session, TANDEM_INPUTS, &n_in));
  CHECK(tandem_session_io_count(session, TANDEM_OUTPUTS, &n_out));
  if (n_in > MAX_IO || n_out > MAX_IO) {
    fprintf(stderr, "error: this example handles at most %d inputs and outputs\n", MAX_IO);
    goto done;
  }

  printf("inputs (%zu):\n", n_in);
  for (i = 0; i < n_in; ++i) {
    int64_t dims[MAX_RANK];
    size_t rank = 0;
    TandemDataType dtype = TANDEM_UNDEFINED;
    CHECK(describe_io(session, TANDEM_INPUTS, i, batch, dims, MAX_RANK, &rank));
    CHECK(tandem_session_io_name(session, TANDEM_INPUTS, i, &input_names[i]));
    CHECK(tandem_session_io_dtype(session, TANDEM_INPUTS, i, &dtype));
    if (rank == (size_t)-1 || rank > MAX_RANK) {
      fprintf(stderr, "error: input '%s' has an unknown or too large rank\n", input_names[i]);
      goto done;
    }
    /* A new zero-filled host tensor; floats then get deterministic values. */
    CHECK(tandem_tensor_create(dtype, dims, rank, &inputs[i]));
    if (dtype == TANDEM_FLOAT) {
      void* p = NULL;
      size_t bytes = 0, k;
      CHECK(tandem_tensor_data(inputs[i], &p));
      CHECK(tandem_tensor_byte_size(inputs[i], &bytes));
      for (k = 0; k < bytes / sizeof(float); ++k) ((float*)p)[k] = (float)sin(0.1 * (double)k);
    }
  }
  printf("outputs (%zu):\n", n_out);
  for (i = 0; i < n_out; ++i) CHECK(describe_io(session, TANDEM_OUTPUTS, i, batch, NULL, 0, NULL));

  /* All outputs in model order (output_names = NULL). */
  CHECK(tandem_session_run(session, input_names, (const TandemTensor* const*)inputs, n_in, NULL,
                           n_out, outputs));

  printf("ran with batch %ld:\n", batch);
  for (i = 0; i < n_out; ++i) {
    const char* name = NULL;
    TandemDataType dtype = TANDEM_UNDEFINED;
    int64_t dims[MAX_RANK];
    size_t rank = 0, bytes = 0, numel = 1;
    void* p = NULL;
    CHECK(tandem_session_io_name(session, TANDEM_OUTPUTS, i, &name));
    CHECK(tandem_tensor_dtype(outputs[i], &dtype));
    CHECK(tandem_tensor_rank(outputs[i], &rank));
    if (rank > MAX_RANK) {
      fprintf(stderr, "error: output '%s' has rank %zu\n", name, rank);
      goto done;
    }
    CHECK(tandem_tensor_dims(outputs[i], dims, MAX_RANK));
    CHECK(tandem_tensor_byte_size(outputs[i], &bytes));
    CHECK(tandem_tensor_data(outputs[i], &p));
    printf("  %s: %s[", name, dtype_name(dtype));
    for (j = 0; j < rank; ++j) {
      printf(j > 0 ? ",%lld" : "%lld", (long long)dims[j]);
      numel *= (size_t)dims[j];
    }
    printf("]");
    if (dtype == TANDEM_FLOAT) {
      if (bytes != numel * sizeof(float)) {
        fprintf(stderr, "\nerror: output '%s' has %zu bytes for %zu floats\n", name, bytes, numel);
        goto done;
      }
      printf(" first values:");
      for (j = 0; j < numel && j < 6; ++j) printf(" %.6g", (double)((const float*)p)[j]);
      if (numel > 6) printf(" ...");
    }
    printf("\n");
  }
  rc = 0;

done:
  tandem_status_release(st);
  for (i = 0; i < MAX_IO; ++i) {
    tandem_tensor_release(outputs[i]);
    tandem_tensor_release(inputs[i]);
  }
  tandem_session_release(session);
  tandem_session_options_release(options);
  tandem_env_release(env);
  return rc;
}
