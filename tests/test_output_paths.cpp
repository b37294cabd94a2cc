// Outputs that would destroy something: an empty path, a device or folder,
// or the very file being read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "attn/util/atomic_file.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

TEST(OutputPaths, EmptyDeviceAndFolderAreRefused) {
  const std::string dir = fresh_dir();
  EXPECT_THAT(error_of([&] { check_output_file("attn plot --out", "", {}); }),
              HasSubstr("attn plot --out: the output path is empty"));
  EXPECT_THAT(error_of([&] { check_output_file("attn plot --out", "/dev/null", {}); }),
              HasSubstr("'/dev/null' exists and is not a regular file"));
  EXPECT_THAT(error_of([&] { write_file_atomically(dir, "x"); }), HasSubstr("is not a regular file"));
  EXPECT_TRUE(std::filesystem::is_directory(dir));
}

TEST(OutputPaths, TheInputUnderAnySpellingIsRefused) {
  const std::string dir = fresh_dir();
  const std::string weights = write(dir, "w.safetensors", "weights");
  const std::string other_spelling = dir + "/./w.safetensors";
  EXPECT_THAT(error_of([&] { check_output_file("attn forward --output", other_spelling, {"in.st", weights}); }),
              HasSubstr("is the input '" + weights + "'"));
}

TEST(OutputPaths, ANewOrRegularFileIsAccepted) {
  const std::string dir = fresh_dir();
  const std::string existing = write(dir, "out.svg", "old");
  EXPECT_EQ(error_of([&] { check_output_file("attn plot --out", existing, {dir + "/in"}); }), "(no error)");
  EXPECT_EQ(error_of([&] { check_output_file("attn plot --out", dir + "/new.svg", {existing}); }), "(no error)");
  write_file_atomically(existing, "new");
  std::ifstream in(existing);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "new");
}

}  // namespace
}  // namespace attn
