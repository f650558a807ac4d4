// Training data: loaders (.npy pairs, numeric CSV, gzip IDX / Fashion-MNIST), a seeded
// train/validation split and a BatchIterator that gathers shuffled rows into reusable
// batch tensors. Row i of a Dataset is x[i] and y[i] (dimension 0 indexes samples).
#pragma once
#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tandem::training {

struct Dataset {
  Tensor x;  // [N, ...]
  Tensor y;  // [N, ...]
  // The model's other inputs by name, for models with several (each [N, ...]); x feeds
  // the input the caller names.
  std::map<std::string, Tensor> more;
  int64_t size() const { return x.defined() && x.rank() > 0 ? x.dim(0) : 0; }
  // The model's inputs: x under `x_name`, plus `more`.
  std::map<std::string, Tensor> Inputs(const std::string& x_name) const;
};

// Checks that x, y and `more` are host tensors of rank >= 1, numeric, with equal dim 0.
absl::Status ValidateDataset(const Dataset& d);

// Two .npy files (see runtime/npy.h); dtypes are kept as stored.
absl::StatusOr<Dataset> LoadNpyDataset(const std::string& x_path, const std::string& y_path);
// One .npy file per model input (name -> path) and the targets; `x_name`, one of the
// names, becomes x and the others `more`.
absl::StatusOr<Dataset> LoadNpyInputs(const std::map<std::string, std::string>& inputs,
                                      const std::string& x_name, const std::string& y_path);

struct CsvOptions {
  enum class Header { kAuto, kYes, kNo };
  Header header = Header::kAuto;     // kAuto: the first row is a header if any field of it
                                     // is not a number
  char delimiter = ',';
  std::vector<int> label_columns = {-1};  // negative counts from the end
  bool integer_labels = true;        // one label column -> y int64 [N] (must be integral);
                                     // otherwise y float32 [N, L]
};
// Numeric CSV: x float32 [N, F] from the non-label columns, y as CsvOptions says. Empty
// lines are skipped; a bad row is an error naming the file, line number and field.
absl::StatusOr<Dataset> LoadCsv(const std::string& path, const CsvOptions& options = {});

// IDX files (gzip or plain, read through zlib): images ubyte [N, rows, cols] (magic 0x803)
// become float32 [N, 1, rows, cols] scaled to [0, 1]; labels ubyte [N] (magic 0x801)
// become int64 [N].
absl::StatusOr<Dataset> LoadIdx(const std::string& images_path, const std::string& labels_path);
// Fashion-MNIST as Debian's dataset-fashion-mnist ships it: {train,t10k}-{images-idx3,
// labels-idx1}-ubyte.gz in `dir`.
constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";
absl::StatusOr<Dataset> LoadFashionMnist(bool train, const std::string& dir = kFashionMnistDir);

// Rows `rows` of d, in that order (host, copies).
Dataset Gather(const Dataset& d, const std::vector<int64_t>& rows);
// Rows `rows` of one host tensor t ([N, ...]), in that order (a copy).
Tensor GatherRows(const Tensor& t, const std::vector<int64_t>& rows);
// Rows [begin, end) of d (copies).
Dataset SliceRows(const Dataset& d, int64_t begin, int64_t end);
// Shuffles rows with `seed`, returns {train, validation} where validation holds
// round(fraction * N) rows. fraction must lie in [0, 1).
absl::StatusOr<std::pair<Dataset, Dataset>> SplitValidation(const Dataset& d, double fraction,
                                                            uint64_t seed);

// Deterministic Fisher-Yates permutation of [0, n) drawn from `rng` (same on every platform).
std::vector<int64_t> Permutation(int64_t n, std::mt19937_64& rng);

// Iterates over a dataset in batches. Each epoch (Reset; the first Next starts one itself
// if Reset was never called) draws a new order from one std::mt19937_64 seeded once, so
// the sequence of epochs depends only on the seed.
// Batches are gathered into two tensors allocated once; Next returns views of them, valid
// until the next call to Next (a final partial batch is a view with a smaller dim 0).
// Without shuffling, a batch of the whole dataset is the dataset's own tensors (no copy).
//
//   BatchIterator it(train, 64, /*shuffle=*/true, /*seed=*/1);
//   for (int e = 0; e < epochs; ++e) { it.Reset(); while (const Dataset* b = it.Next()) ...; }
class BatchIterator {
 public:
  BatchIterator(const Dataset& data, int64_t batch_size, bool shuffle = true, uint64_t seed = 0,
                bool drop_last = false);

  // Starts a new epoch (draws a new order when shuffling).
  void Reset();
  // The next batch of this epoch, or nullptr at its end (and until Reset).
  const Dataset* Next();
  // The rows the next batch would hold (a view of order(), `count` of them), advancing
  // as Next does but gathering nothing (for batches gathered elsewhere, e.g. on a
  // device); false at the epoch's end.
  bool NextRows(const int64_t** rows, int64_t* count);
  int64_t num_batches() const;
  int64_t batch_size() const { return batch_size_; }
  // The row order of the current epoch.
  const std::vector<int64_t>& order() const { return order_; }
  // The shuffling generator's state (text), to checkpoint between epochs and restore so a
  // resumed run draws the same epoch orders as an uninterrupted one.
  std::string RngState() const;
  absl::Status RestoreRngState(const std::string& state);

 private:
  Dataset data_;
  int64_t batch_size_;
  bool shuffle_, drop_last_;
  std::mt19937_64 rng_;
  std::vector<int64_t> order_;
  int64_t pos_ = 0;
  bool started_ = false;
  Tensor bx_, by_;    // full-size batch buffers
  std::map<std::string, Tensor> bmore_;
  Dataset current_;   // views handed out by Next
};

}  // namespace tandem::training
