// Training data loaders, validation split and batch iteration (training/data.h).
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <unistd.h>

#include "runtime/npy.h"
#include "training/data.h"

namespace tandem::training {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/tandem_data_" + std::to_string(getpid()) + "_" + name;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// A dataset with row i: x = [i, 10 i, 100 i], y = i.
Dataset Rows(int64_t n) {
  Dataset d;
  d.x = Tensor::Host(DataType::kFloat, {n, 3});
  d.y = Tensor::Host(DataType::kInt64, {n});
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) d.x.data<float>()[i * 3 + k] = static_cast<float>(i * std::pow(10, k));
    d.y.data<int64_t>()[i] = i;
  }
  return d;
}

TEST(Data, NpyRoundTrip) {
  Dataset d = Rows(7);
  std::string xp = TempPath("x.npy"), yp = TempPath("y.npy");
  ASSERT_TRUE(WriteNpy(xp, d.x).ok());
  ASSERT_TRUE(WriteNpy(yp, d.y).ok());
  auto back = LoadNpyDataset(xp, yp);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->x.dims(), (Dims{7, 3}));
  EXPECT_EQ(back->y.dtype(), DataType::kInt64);
  for (int64_t i = 0; i < 21; ++i) EXPECT_EQ(back->x.data<float>()[i], d.x.data<float>()[i]);
  for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(back->y.data<int64_t>()[i], i);
  // Row count mismatch.
  ASSERT_TRUE(WriteNpy(yp, Tensor::Host(DataType::kInt64, {6})).ok());
  auto bad = LoadNpyDataset(xp, yp);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("7 rows, y has 6"), std::string::npos) << bad.status();
  std::remove(xp.c_str());
  std::remove(yp.c_str());
}

TEST(Data, CsvWithHeaderAndLabelColumn) {
  std::string p = TempPath("a.csv");
  WriteFile(p, "a,b,label,c\n1.5,2,0,3\n\n-4,5e-1,2, 6\n");
  auto d = LoadCsv(p, CsvOptions{CsvOptions::Header::kAuto, ',', {2}, true});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->x.dims(), (Dims{2, 3}));
  EXPECT_EQ(d->y.dims(), (Dims{2}));
  std::vector<float> want = {1.5f, 2, 3, -4, 0.5f, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(d->x.data<float>()[i], want[i]);
  EXPECT_EQ(d->y.data<int64_t>()[1], 2);
  // Float labels, last two columns, no header.
  WriteFile(p, "1,2,3,4\n5,6,7,8\n");
  d = LoadCsv(p, CsvOptions{CsvOptions::Header::kNo, ',', {-2, -1}, false});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->x.dims(), (Dims{2, 2}));
  EXPECT_EQ(d->y.dims(), (Dims{2, 2}));
  EXPECT_EQ(d->y.dtype(), DataType::kFloat);
  EXPECT_EQ(d->y.data<float>()[3], 8.f);
  std::remove(p.c_str());
}

TEST(Data, CsvBadRowsNameTheLine) {
  std::string p = TempPath("bad.csv");
  struct Case { std::string text, expect; };
  for (const Case& c : std::vector<Case>{
           {"x,y\n1,2\n3,abc\n", ":3: field 2: 'abc' is not a number"},
           {"1,2\n3,4,5\n", ":2: has 3 fields, expected 2"},
           {"1,2\n\n3,0.5\n", ":3: label field 2 ('0.5') is not an integer"},
           {"h1,h2\n", "has no data rows"}}) {
    WriteFile(p, c.text);
    auto d = LoadCsv(p);
    ASSERT_FALSE(d.ok()) << c.text;
    std::string msg(d.status().message());
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    EXPECT_NE(msg.find(p), std::string::npos) << msg;
  }
  auto missing = LoadCsv(p + ".missing");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  std::remove(p.c_str());
}

// The first `n` bytes of a gzip file, read here with zlib independently of the loader.
std::vector<uint8_t> GzipHead(const std::string& path, size_t n) {
  std::vector<uint8_t> b(n);
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return {};
  int got = gzread(f, b.data(), static_cast<unsigned>(n));
  gzclose(f);
  b.resize(got < 0 ? 0 : got);
  return b;
}

TEST(Data, FashionMnistIdx) {
  const std::string dir = kFashionMnistDir;
  const std::string images = dir + "/t10k-images-idx3-ubyte.gz", labels = dir + "/t10k-labels-idx1-ubyte.gz";
  std::vector<uint8_t> ih = GzipHead(images, 16 + 2 * 784), lh = GzipHead(labels, 8 + 4);
  if (ih.size() < 16 + 2 * 784) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  // Independent header check: magic 0x803 / 0x801, 10000 items of 28x28.
  EXPECT_EQ(ih[2], 0x08);
  EXPECT_EQ(ih[3], 3);
  EXPECT_EQ((ih[4] << 24) | (ih[5] << 16) | (ih[6] << 8) | ih[7], 10000);
  EXPECT_EQ(lh[3], 1);
  auto d = LoadFashionMnist(/*train=*/false, dir);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->x.dims(), (Dims{10000, 1, 28, 28}));
  EXPECT_EQ(d->y.dims(), (Dims{10000}));
  EXPECT_EQ(d->x.dtype(), DataType::kFloat);
  EXPECT_EQ(d->y.dtype(), DataType::kInt64);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(d->y.data<int64_t>()[i], lh[8 + i]) << i;
  int nonzero = 0;
  for (int k = 0; k < 2 * 784; ++k) {
    EXPECT_FLOAT_EQ(d->x.data<float>()[k], ih[16 + k] / 255.0f) << k;
    nonzero += ih[16 + k] != 0;
  }
  EXPECT_GT(nonzero, 100);
  float lo = 1, hi = 0;
  for (int64_t i = 0; i < d->x.numel(); ++i) lo = std::min(lo, d->x.data<float>()[i]), hi = std::max(hi, d->x.data<float>()[i]);
  EXPECT_EQ(lo, 0.f);
  EXPECT_EQ(hi, 1.f);
  // Swapped files: the header check rejects them.
  auto swapped = LoadIdx(labels, images);
  ASSERT_FALSE(swapped.ok());
  EXPECT_NE(std::string(swapped.status().message()).find("has 1 dimensions, expected 3"), std::string::npos)
      << swapped.status();
}

TEST(Data, SplitValidation) {
  Dataset d = Rows(50);
  auto s = SplitValidation(d, 0.2, 7);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->first.size(), 40);
  EXPECT_EQ(s->second.size(), 10);
  std::set<int64_t> seen;
  for (const Dataset* part : {&s->first, &s->second})
    for (int64_t i = 0; i < part->size(); ++i) {
      int64_t id = part->y.data<int64_t>()[i];
      seen.insert(id);
      EXPECT_EQ(part->x.data<float>()[i * 3 + 1], 10.f * id);  // x moved with y
    }
  EXPECT_EQ(seen.size(), 50u);
  auto again = SplitValidation(d, 0.2, 7);
  for (int64_t i = 0; i < 10; ++i)
    EXPECT_EQ(again->second.y.data<int64_t>()[i], s->second.y.data<int64_t>()[i]);
  EXPECT_FALSE(SplitValidation(d, 1.0, 7).ok());
}

std::vector<int64_t> EpochIds(BatchIterator& it, std::vector<int64_t>* sizes = nullptr) {
  std::vector<int64_t> ids;
  it.Reset();
  while (const Dataset* b = it.Next()) {
    if (sizes) sizes->push_back(b->size());
    for (int64_t i = 0; i < b->size(); ++i) {
      int64_t id = b->y.data<int64_t>()[i];
      EXPECT_EQ(b->x.data<float>()[i * 3 + 2], 100.f * id);
      ids.push_back(id);
    }
  }
  return ids;
}

TEST(Data, BatchIteratorShufflesDeterministically) {
  Dataset d = Rows(23);
  BatchIterator a(d, 5, true, 42), b(d, 5, true, 42), c(d, 5, true, 43);
  EXPECT_EQ(a.num_batches(), 5);
  std::vector<int64_t> sizes;
  std::vector<int64_t> e1 = EpochIds(a, &sizes), e2 = EpochIds(a);
  EXPECT_EQ(sizes, (std::vector<int64_t>{5, 5, 5, 5, 3}));
  EXPECT_EQ(EpochIds(b), e1);  // same seed, same epochs
  EXPECT_EQ(EpochIds(b), e2);
  EXPECT_NE(e1, e2);           // a new order each epoch
  EXPECT_NE(EpochIds(c), e1);  // another seed, another order
  for (const auto& e : {e1, e2}) {
    std::set<int64_t> once(e.begin(), e.end());
    EXPECT_EQ(e.size(), 23u);
    EXPECT_EQ(once.size(), 23u);  // every row exactly once
  }
}

TEST(Data, BatchIteratorReusesBuffersAndDropsLast) {
  Dataset d = Rows(10);
  BatchIterator it(d, 4, false, 0, /*drop_last=*/true);
  EXPECT_EQ(it.num_batches(), 2);
  std::vector<int64_t> sizes;
  EXPECT_EQ(EpochIds(it, &sizes), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4}));
  it.Reset();
  const void* first = it.Next()->x.raw();
  const void* second = it.Next()->x.raw();
  EXPECT_EQ(first, second);
  EXPECT_EQ(it.Next(), nullptr);
  BatchIterator keep(d, 4, false, 0, false);
  sizes.clear();
  EpochIds(keep, &sizes);
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
}

}  // namespace
}  // namespace tandem::training
