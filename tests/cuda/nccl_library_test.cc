// The NCCL loader of the CUDA plugin (providers/cuda/nccl_library.h), on the host: opening
// NCCL and drawing a communicator id need no GPU. Skips where NCCL is not installed.
#include "providers/cuda/nccl_library.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tandem::cuda {
namespace {

TEST(NcclLibrary, OpensTheInstalledNccl2AndDrawsDistinctIds) {
  auto nccl = LoadNccl();
  if (!nccl.ok()) GTEST_SKIP() << "NCCL is not installed here: " << nccl.status();
  // The header this was built with and the library found at run time share the major.
  EXPECT_EQ((*nccl)->version / 10000, NCCL_MAJOR) << (*nccl)->path;
  EXPECT_GE((*nccl)->version, 21300) << "ncclGetLastError needs 2.13";
  EXPECT_EQ((*nccl)->description().rfind("NCCL 2.", 0), 0u) << (*nccl)->description();
  ncclUniqueId a{}, b{};
  ASSERT_TRUE((*nccl)->Check((*nccl)->get_unique_id(&a), "ncclGetUniqueId").ok());
  ASSERT_TRUE((*nccl)->Check((*nccl)->get_unique_id(&b), "ncclGetUniqueId").ok());
  EXPECT_TRUE(std::any_of(a.internal, a.internal + NCCL_UNIQUE_ID_BYTES, [](char c) { return c != 0; }));
  EXPECT_FALSE(std::equal(a.internal, a.internal + NCCL_UNIQUE_ID_BYTES, b.internal)) << "two draws, one id";
  EXPECT_EQ(LoadNccl().value(), *nccl) << "opened once per process";
}

TEST(NcclLibrary, ErrorsNameTheCallAndNcclsReason) {
  auto nccl = LoadNccl();
  if (!nccl.ok()) GTEST_SKIP() << "NCCL is not installed here: " << nccl.status();
  EXPECT_TRUE((*nccl)->Check(ncclSuccess, "ncclAllReduce").ok());
  const absl::Status st = (*nccl)->Check(ncclInvalidArgument, "ncclAllReduce");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(std::string(st.message()).rfind("ncclAllReduce: ", 0), 0u) << st;
  EXPECT_NE(std::string(st.message()).find("invalid argument"), std::string::npos) << st;
}

TEST(NcclLibrary, AMissingOrForeignLibraryIsRefusedWithTheReason) {
  auto missing = OpenNccl("/nonexistent/libnccl.so.2");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("/nonexistent/libnccl.so.2"), std::string::npos)
      << missing.status();
  EXPECT_NE(std::string(missing.status().message()).find("TANDEM_NCCL_LIBRARY"), std::string::npos);
  auto foreign = OpenNccl("libm.so.6");  // loads, but is not NCCL
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(std::string(foreign.status().message()).find("lacks ncclGetVersion"), std::string::npos)
      << foreign.status();
}

}  // namespace
}  // namespace tandem::cuda
