// ResidentBatches (training/resident_batches.h) on the CPU provider: the batches it
// gathers through its session are, bit for bit, the BatchIterator's for the same seed
// (float tensors through Gather nodes, integer ones on the host), and training on them
// gives the host-batched run's losses. On a GPU the same code gathers on the device.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "onnx_import/import.h"
#include "training/data.h"
#include "training/resident_batches.h"
#include "training/trainer.h"

namespace tandem::training {
namespace {

std::unique_ptr<Trainer> PeaksTrainer() {
  auto g = ImportModelFile(std::string(TANDEM_SOURCE_DIR) + "/models/peaks_mlp.onnx");
  EXPECT_TRUE(g.ok()) << g.status();
  TrainerOptions o;
  o.spec.loss = LossKind::kMse;
  auto t = Trainer::Create(*g, o);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? std::move(*t) : nullptr;
}

Tensor Uniform(DataType type, Dims dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-3.f, 3.f);
  Tensor t = Tensor::Host(type, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (type == DataType::kFloat) t.data<float>()[i] = u(rng);
    else t.data<int64_t>()[i] = static_cast<int64_t>(rng() % 1000);
  }
  return t;
}

void ExpectSameBits(const Tensor& a, const Tensor& b, const char* what) {
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.dims(), b.dims()) << what;
  ASSERT_EQ(a.device().type, DeviceType::kCpu) << what;
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.bytes()), 0) << what;
}

TEST(ResidentBatches, GathersTheBatchIteratorsBatches) {
  auto t = PeaksTrainer();
  ASSERT_TRUE(t);
  Dataset d;
  d.x = Uniform(DataType::kFloat, {23, 2}, 1);
  d.y = Uniform(DataType::kInt64, {23}, 2);  // labels: gathered on the host
  d.more["z"] = Uniform(DataType::kFloat, {23, 3, 2}, 3);
  EXPECT_EQ(ResidentBatches::ResidentBytes(d), (23 * 2 + 23 * 6) * 4);
  auto r = ResidentBatches::Create(*t, d);
  ASSERT_TRUE(r.ok()) << r.status();
  for (bool drop_last : {false, true}) {
    BatchIterator rows(d, 5, true, 7, drop_last), host(d, 5, true, 7, drop_last);
    for (int epoch = 0; epoch < 2; ++epoch) {
      rows.Reset();
      host.Reset();
      int batches = 0;
      const int64_t* picked = nullptr;
      int64_t count = 0;
      while (rows.NextRows(&picked, &count)) {
        const Dataset* want = host.Next();
        ASSERT_NE(want, nullptr);
        auto got = (*r)->Gather(picked, count);
        ASSERT_TRUE(got.ok()) << got.status();
        ExpectSameBits(got->x, want->x, "x");
        ExpectSameBits(got->y, want->y, "y");
        ExpectSameBits(got->more.at("z"), want->more.at("z"), "z");
        ++batches;
      }
      EXPECT_EQ(host.Next(), nullptr);
      EXPECT_EQ(batches, drop_last ? 4 : 5);
    }
  }
  const Dataset all = (*r)->All();
  ExpectSameBits(all.x, d.x, "x");
  ExpectSameBits(all.y, d.y, "y");
}

TEST(ResidentBatches, TrainingOnThemMatchesHostBatches) {
  Dataset d;
  d.x = Uniform(DataType::kFloat, {40, 2}, 4);
  d.y = Uniform(DataType::kFloat, {40, 1}, 5);
  auto host_run = PeaksTrainer(), resident_run = PeaksTrainer();
  ASSERT_TRUE(host_run && resident_run);
  auto r = ResidentBatches::Create(*resident_run, d);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string input = "x";
  BatchIterator a(d, 8, true, 11), b(d, 8, true, 11);
  for (int epoch = 0; epoch < 3; ++epoch) {
    a.Reset();
    b.Reset();
    const int64_t* picked = nullptr;
    int64_t count = 0;
    while (const Dataset* batch = a.Next()) {
      ASSERT_TRUE(b.NextRows(&picked, &count));
      auto gathered = (*r)->Gather(picked, count);
      ASSERT_TRUE(gathered.ok()) << gathered.status();
      auto want = host_run->Step(batch->Inputs(input), batch->y);
      auto got = resident_run->Step(gathered->Inputs(input), gathered->y);
      ASSERT_TRUE(want.ok() && got.ok());
      EXPECT_EQ(*got, *want);
    }
  }
}

}  // namespace
}  // namespace tandem::training
