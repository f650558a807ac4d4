// K-fold layout (training/kfold.h): every row is validated exactly once and trained on in
// the other folds; batches and validation blocks are views of the one doubled copy.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "tests/tagged_host_allocator.h"
#include "training/kfold.h"

namespace tandem::training {
namespace {

TEST(KFold, EveryRowValidatedOnceAndTrainedOnElsewhere) {
  for (int64_t n : {10, 11, 400}) {
    for (int64_t k : {2, 3, 4, 10}) {
      auto folds = MakeFolds(n, k);
      ASSERT_TRUE(folds.ok()) << folds.status();
      ASSERT_EQ(folds->size(), static_cast<size_t>(k));
      std::vector<int> validated(n, 0);
      for (const Fold& f : *folds) {
        std::set<int64_t> held;
        for (int64_t r = f.validation.begin; r < f.validation.end; ++r) {
          held.insert(r);
          ++validated[r];
        }
        EXPECT_EQ(f.training.size() + f.validation.size(), n);
        EXPECT_LE(f.training.end, 2 * n);  // inside the doubled copy
        std::set<int64_t> trained;
        for (int64_t r = f.training.begin; r < f.training.end; ++r) trained.insert(r % n);
        EXPECT_EQ(trained.size(), static_cast<size_t>(f.training.size())) << "a row twice in one fold";
        for (int64_t r : held) EXPECT_FALSE(trained.count(r)) << "row " << r << " trained and validated";
      }
      for (int64_t r = 0; r < n; ++r) EXPECT_EQ(validated[r], 1) << "n " << n << " k " << k << " row " << r;
    }
  }
  EXPECT_FALSE(MakeFolds(5, 1).ok());
  EXPECT_FALSE(MakeFolds(5, 6).ok());
}

TEST(KFold, BatchesCoverTheRangeAndShuffleOnlyTheirOrder) {
  const RowRange range{7, 107};
  auto in_order = Batches(range, 32, false);
  ASSERT_EQ(in_order.size(), 4u);
  EXPECT_EQ(in_order.front().begin, 7);
  EXPECT_EQ(in_order.back().end, 107);
  EXPECT_EQ(in_order.back().size(), 100 - 96);
  EXPECT_EQ(Batches(range, 32, true).size(), 3u);
  EXPECT_EQ(Batches(range, 1000, true).size(), 1u);  // full batch is never dropped
  std::mt19937_64 rng(5);
  auto shuffled = Batches(range, 10, false, &rng);
  std::set<int64_t> begins;
  for (const RowRange& b : shuffled) {
    begins.insert(b.begin);
    EXPECT_EQ(b.size(), 10);
  }
  EXPECT_EQ(begins.size(), 10u);
  EXPECT_NE(shuffled, Batches(range, 10, false)) << "the order should change";
}

TEST(KFold, ViewsShareTheOneCopyOnAnyDevice) {
  Dataset d;
  d.x = Tensor::Host(DataType::kFloat, {5, 3});
  d.y = Tensor::Host(DataType::kInt64, {5});
  for (int64_t i = 0; i < 15; ++i) d.x.data<float>()[i] = static_cast<float>(i);
  for (int64_t i = 0; i < 5; ++i) d.y.data<int64_t>()[i] = 100 + i;
  Dataset twice = DoubleRows(d);
  ASSERT_EQ(twice.x.dims(), (Dims{10, 3}));
  for (int64_t r = 0; r < 10; ++r) EXPECT_EQ(twice.y.data<int64_t>()[r], 100 + r % 5);
  // Fold 2 of 5 trains on rows 2,3,4,0 (then 1 is held out): one view of the doubled copy.
  auto folds = MakeFolds(5, 5);
  ASSERT_TRUE(folds.ok());
  Dataset train = RowsView(twice, (*folds)[1].training);
  EXPECT_EQ(train.x.buffer(), twice.x.buffer());
  EXPECT_EQ(train.x.data<float>(), twice.x.data<float>() + 2 * 3);
  const std::vector<int64_t> want = {102, 103, 104, 100};
  ASSERT_EQ(train.y.dim(0), 4);
  for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(train.y.data<int64_t>()[r], want[r]);
  // On device memory too (host memory tagged cuda:3): same buffer, the device kept.
  testing::TaggedHostAllocator gpu({DeviceType::kCuda, 3});
  Tensor on_device(DataType::kFloat, {10, 3}, gpu.Allocate(10 * 3 * sizeof(float)));
  Tensor rows = on_device.Rows(4, 9);
  EXPECT_EQ(rows.device(), on_device.device());
  EXPECT_EQ(rows.dims(), (Dims{5, 3}));
  EXPECT_EQ(static_cast<const char*>(rows.raw()) - static_cast<const char*>(on_device.raw()), 4 * 3 * 4);
}

}  // namespace
}  // namespace tandem::training
