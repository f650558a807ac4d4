// Mini-batches of a dataset kept on the training device for the whole run. The float
// tensors (the model's inputs) are uploaded once; each batch is gathered there by a small
// session (one Gather per tensor, on the trainer's providers), so per step only the
// batch's row numbers go to the device. Integer tensors (class labels) stay on the host
// and are gathered there (a batch of labels is a few hundred bytes; the GPU's Gather
// takes float data only). The rows are the caller's (a BatchIterator's order), so the
// batches, and the losses, are those of a host-side run with the same seed.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/session.h"
#include "training/data.h"
#include "training/trainer.h"

namespace tandem::training {

class ResidentBatches {
 public:
  // Uploads `host`'s float tensors to `trainer`'s device. An error when the device
  // cannot hold them (the caller then gathers on the host as before).
  static absl::StatusOr<std::unique_ptr<ResidentBatches>> Create(const Trainer& trainer, const Dataset& host);

  // Rows rows[0..count) as a batch: float tensors on the device, the others on the host.
  absl::StatusOr<Dataset> Gather(const int64_t* rows, int64_t count);
  // The whole dataset in its own order, nothing gathered (a full batch: its mean loss
  // and gradient do not depend on the order).
  Dataset All() const;

  // Bytes of the float tensors a device would hold (what Create uploads).
  static int64_t ResidentBytes(const Dataset& host);

 private:
  ResidentBatches() = default;
  Dataset host_;                          // the integer tensors are gathered from here
  std::map<std::string, Tensor> device_;  // gather-session input name -> uploaded tensor
  std::map<std::string, std::string> output_of_;  // dataset slot ("x", "y", "more:NAME") -> input name
  std::unique_ptr<Session> gather_;
};

}  // namespace tandem::training
