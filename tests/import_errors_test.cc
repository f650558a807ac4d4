// Bad input must give a clear error (file, node, op, problem) and never crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <random>

#include "onnx_import/import.h"
#include "runtime/session.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using ::testing::HasSubstr;
using tandem::testing::AddInitializerModel;
using tandem::testing::MakeTempDir;
using tandem::testing::Serialize;
using tandem::testing::UnaryChainModel;
using tandem::testing::WriteFile;

std::string ImportError(const std::string& path) {
  auto g = ImportModelFile(path);
  EXPECT_FALSE(g.ok()) << path << " imported although it is bad";
  return g.ok() ? "" : std::string(g.status().message());
}

TEST(ImportErrors, MissingFileNamesThePath) {
  std::string msg = ImportError("/nonexistent/model.onnx");
  EXPECT_THAT(msg, HasSubstr("/nonexistent/model.onnx"));
  EXPECT_THAT(msg, HasSubstr("cannot open"));
}

// Today's onnx writes IR version 10 and up by default, past libonnx 1.12's 8, even at the
// opsets libonnx knows: such a model is still checked (as of IR 8) and imported, not refused
// ("ir_version is higher than the checker's"); a model the checker rejects still fails.
TEST(ImportErrors, NewerIrVersionAtAKnownOpsetIsCheckedAndImported) {
  std::string dir = MakeTempDir("newer_ir");
  onnx::ModelProto m = UnaryChainModel({"Relu", "Neg"}, 4);
  m.set_ir_version(10);
  WriteFile(dir + "/m.onnx", Serialize(m));
  auto g = ImportModelFile(dir + "/m.onnx");
  EXPECT_TRUE(g.ok()) << g.status();
  m.mutable_graph()->mutable_node(0)->clear_op_type();  // a node without an op: the checker's to reject
  WriteFile(dir + "/bad.onnx", Serialize(m));
  EXPECT_THAT(ImportError(dir + "/bad.onnx"), HasSubstr("ONNX checker"));
}

TEST(ImportErrors, EmptyFile) {
  std::string dir = MakeTempDir("empty");
  WriteFile(dir + "/m.onnx", "");
  EXPECT_THAT(ImportError(dir + "/m.onnx"), HasSubstr("empty"));
}

TEST(ImportErrors, EveryTruncationIsRejectedOrValid) {
  std::string dir = MakeTempDir("trunc");
  std::string bytes = Serialize(AddInitializerModel(64));
  int rejected = 0;
  for (size_t len = 1; len < bytes.size(); len += 7) {
    WriteFile(dir + "/m.onnx", bytes.substr(0, len));
    auto g = ImportModelFile(dir + "/m.onnx");
    if (!g.ok()) {
      ++rejected;
      EXPECT_THAT(std::string(g.status().message()), HasSubstr(dir + "/m.onnx"));
    }
  }
  EXPECT_GT(rejected, 0);
  WriteFile(dir + "/m.onnx", bytes.substr(0, bytes.size() / 2));
  EXPECT_THAT(ImportError(dir + "/m.onnx"), HasSubstr("[import]"));
}

TEST(ImportErrors, GarbageBytes) {
  std::string dir = MakeTempDir("garbage");
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::string bytes(1 + rng() % 4096, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    WriteFile(dir + "/m.onnx", bytes);
    EXPECT_THAT(ImportError(dir + "/m.onnx"), HasSubstr("[import]"));
  }
}

TEST(ImportErrors, CycleNamesANode) {
  onnx::ModelProto m = UnaryChainModel({"Relu", "Relu"}, 4);
  // n0: x -> t0, n1: t0 -> y. Make n0 read y: a cycle n0 -> n1 -> n0.
  m.mutable_graph()->mutable_node(0)->set_input(0, "y");
  std::string dir = MakeTempDir("cycle");
  WriteFile(dir + "/m.onnx", Serialize(m));
  std::string msg = ImportError(dir + "/m.onnx");
  EXPECT_THAT(msg, HasSubstr("m.onnx"));
  EXPECT_TRUE(msg.find("cycle") != std::string::npos || msg.find("topologically") != std::string::npos)
      << msg;
}

TEST(ImportErrors, CycleWithoutCheckerStillCaught) {
  onnx::ModelProto m = UnaryChainModel({"Relu", "Relu"}, 4);
  m.mutable_graph()->mutable_node(0)->set_input(0, "y");
  std::string bytes = Serialize(m);
  ImportOptions o;
  o.run_checker = false;
  o.run_shape_inference = false;
  auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", "cyclic", o);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("cycle"));
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("(Relu)"));
}

TEST(ImportErrors, MissingInputNamesNodeAndValue) {
  onnx::ModelProto m = UnaryChainModel({"Relu", "Sigmoid"}, 4);
  m.mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
  std::string bytes = Serialize(m);
  ImportOptions o;
  o.run_checker = false;
  auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", "missing", o);
  ASSERT_FALSE(g.ok());
  std::string msg(g.status().message());
  EXPECT_THAT(msg, HasSubstr("node 'n1' (Sigmoid)"));
  EXPECT_THAT(msg, HasSubstr("'nowhere'"));
}

TEST(ImportErrors, UnknownOpIsNamedWhenLoadingASession) {
  onnx::ModelProto m = UnaryChainModel({"Relu"}, 4);
  m.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  m.mutable_graph()->mutable_node(0)->set_domain("com.example");
  auto* op = m.add_opset_import();
  op->set_domain("com.example");
  op->set_version(1);
  std::string dir = MakeTempDir("unknown");
  WriteFile(dir + "/m.onnx", Serialize(m));
  auto s = Session::Load(dir + "/m.onnx");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("NoSuchOp"));
}

// External data: x + w with w stored in a file next to the model.
struct ExternalModel {
  std::string dir, path;
};
ExternalModel WriteExternalModel(const std::string& tag, const std::string& location,
                                 const std::string& data_file) {
  onnx::ModelProto m = AddInitializerModel(4);
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  ExternalModel e{MakeTempDir(tag), ""};
  e.path = e.dir + "/model.onnx";
  WriteFile(e.path, Serialize(m));
  float values[4] = {1.f, 2.f, 3.f, 4.f};
  if (!data_file.empty())
    WriteFile(data_file, std::string(reinterpret_cast<char*>(values), sizeof values));
  return e;
}

TEST(ExternalData, LoadsFromTheModelFolder) {
  std::string dir = MakeTempDir("extok");
  onnx::ModelProto m = AddInitializerModel(4);
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  WriteFile(dir + "/model.onnx", Serialize(m));
  float values[4] = {1.f, 2.f, 3.f, 4.f};
  WriteFile(dir + "/weights.bin", std::string(reinterpret_cast<char*>(values), sizeof values));
  auto s = Session::Load(dir + "/model.onnx");
  ASSERT_TRUE(s.ok()) << s.status();
  auto out = (*s)->Run({{"x", Tensor::FromVector<float>({10, 20, 30, 40}, {4})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<float>()[0], 11.f);
  EXPECT_EQ((*out)[0].data<float>()[3], 44.f);
}

TEST(ExternalData, RefusesParentEscape) {
  std::string outside = MakeTempDir("outside");
  ExternalModel e = WriteExternalModel("escape", "../" + outside.substr(outside.rfind('/') + 1) + "/w.bin",
                                       outside + "/w.bin");
  EXPECT_THAT(ImportError(e.path), HasSubstr("escapes the model's folder"));
}

TEST(ExternalData, RefusesAbsolutePath) {
  std::string outside = MakeTempDir("abs");
  ExternalModel e = WriteExternalModel("absolute", outside + "/w.bin", outside + "/w.bin");
  EXPECT_THAT(ImportError(e.path), HasSubstr("must be relative"));
}

TEST(ExternalData, RefusesSymlinkOutOfTheFolder) {
  std::string outside = MakeTempDir("target");
  ExternalModel e = WriteExternalModel("symlink", "link.bin", outside + "/w.bin");
  ASSERT_EQ(symlink((outside + "/w.bin").c_str(), (e.dir + "/link.bin").c_str()), 0);
  EXPECT_THAT(ImportError(e.path), HasSubstr("outside the model's folder"));
}

TEST(ExternalData, RefusesShortFile) {
  std::string dir = MakeTempDir("short");
  ExternalModel e = WriteExternalModel("shortdata", "w.bin", "");
  WriteFile(e.dir + "/w.bin", "abc");
  EXPECT_THAT(ImportError(e.path), HasSubstr("bytes"));
}

TEST(RunErrors, MissingAndMistypedInputs) {
  std::string bytes = Serialize(UnaryChainModel({"Relu"}, 4));
  auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", "relu");
  ASSERT_TRUE(g.ok()) << g.status();
  auto s = Session::FromGraph(*g);
  ASSERT_TRUE(s.ok()) << s.status();
  auto missing = (*s)->Run({});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("missing input 'x'"));
  auto wrong_type = (*s)->Run({{"x", Tensor::FromVector<int64_t>({1, 2, 3, 4}, {4})}});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_THAT(std::string(wrong_type.status().message()), HasSubstr("int64"));
  auto wrong_shape = (*s)->Run({{"x", Tensor::FromVector<float>({1, 2, 3}, {3})}});
  ASSERT_FALSE(wrong_shape.ok());
  EXPECT_THAT(std::string(wrong_shape.status().message()), HasSubstr("[3]"));
  auto unknown = (*s)->Run({{"x", Tensor::FromVector<float>({1, 2, 3, 4}, {4})},
                            {"z", Tensor::FromVector<float>({1}, {1})}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("'z'"));
}

}  // namespace
}  // namespace tandem

namespace tandem {
namespace {

// Flipping bytes of a real model must never crash import, planning or running.
TEST(ImportErrors, ByteFlipsOfARealModelNeverCrash) {
  std::ifstream in(std::string(TANDEM_SOURCE_DIR) + "/models/peaks_mlp.onnx", std::ios::binary);
  ASSERT_TRUE(in) << "models/peaks_mlp.onnx missing";
  std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::mt19937 rng(11);
  int loaded = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = good;
    for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", "flipped");
    if (!g.ok()) continue;
    auto s = Session::FromGraph(std::move(*g));
    if (!s.ok()) continue;
    ++loaded;
    std::map<std::string, Tensor> feeds;
    for (const ValueInfo& vi : (*s)->inputs()) {
      Dims dims;
      for (const Dim& d : vi.shape.dims) dims.push_back(d.known() ? d.value : 2);
      if (vi.dtype != DataType::kUndefined && NumElements(dims) < (1 << 20))
        feeds[vi.name] = Tensor::Host(vi.dtype, dims);
    }
    (void)(*s)->Run(feeds);  // an error is fine; a crash is not
  }
  EXPECT_GT(loaded, 0);
}

}  // namespace
}  // namespace tandem
