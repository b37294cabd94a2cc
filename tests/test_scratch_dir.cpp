// The per-test scratch folder (test_util.h) that the file-writing suites use.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// A file that an earlier process with this process id left behind (ids come
// round again under CTest) is gone when the test first asks for its folder;
// later calls in the same test keep what the test wrote.
TEST(ScratchDir, LeftoversOfAnEarlierProcessAreRemovedOnFirstUseOnly) {
  const fs::path expected = fs::path(::testing::TempDir()) / "attn_tests" /
                            ("ScratchDir.LeftoversOfAnEarlierProcessAreRemovedOnFirstUseOnly." +
                             std::to_string(::getpid()));
  fs::create_directories(expected);
  std::ofstream(expected / "w.safetensors") << "stale";
  ASSERT_TRUE(fs::exists(expected / "w.safetensors"));

  EXPECT_EQ(fs::path(testing_support::scratch_dir()), expected);
  EXPECT_FALSE(fs::exists(expected / "w.safetensors"));
  EXPECT_TRUE(fs::is_directory(expected));

  std::ofstream(testing_support::scratch_path("mine.txt")) << "kept";
  EXPECT_EQ(fs::path(testing_support::scratch_path("mine.txt")), expected / "mine.txt");
  EXPECT_TRUE(fs::exists(expected / "mine.txt"));
}

}  // namespace
}  // namespace attn
