// The WMT parallel-text loader (train/data/formats/parallel_text.cpp) on the
// fixture data/fixtures/wmt14/ and on damaged copies of it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "attn/train/data/formats/loaders.h"
#include "test_util.h"

namespace attn {
namespace {

using testing_support::error_of;
using testing_support::scratch_dir;
using Words = std::vector<std::string>;

const std::string kFixture = std::string(ATTN_SOURCE_DIR) + "/data/fixtures/wmt14";

// A copy of the fixture to damage.
std::string fixture_copy() {
  const std::string dir = scratch_dir() + "/wmt14";
  std::filesystem::create_directories(dir);
  for (const auto& f : std::filesystem::directory_iterator(kFixture))
    std::filesystem::copy_file(f.path(), dir + "/" + f.path().filename().string());
  return dir;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(ParallelText, LoadsTheFixture) {
  const Dataset d = load_parallel_text_dir(kFixture, "en", "de");
  EXPECT_EQ(d.name, "wmt14");
  // train.en line 4 is blank: that pair is dropped.
  ASSERT_EQ(d.train.size(), 4u);
  EXPECT_EQ(d.train[0].tokens, (Words{"The", "house", "is", "small", "."}));
  EXPECT_EQ(d.train[0].tokens_b, (Words{"Das", "Haus", "ist", "klein", "."}));
  EXPECT_EQ(d.train[3].tokens_b, (Words{"Der", "Preis", "stieg", "2013-2014", "um", "3,5", "Prozent", "."}));
  // dev from newstest2013.{en,de}, test from the SGML files.
  ASSERT_EQ(d.dev.size(), 2u);
  EXPECT_EQ(d.dev[1].tokens, (Words{"Where", "is", "the", "station", "?"}));
  ASSERT_EQ(d.test.size(), 3u);
  EXPECT_EQ(d.test[1].tokens, (Words{"He", "said", ":", "\"", "That", "is", "not", "true", ".", "\""}));
  EXPECT_EQ(d.test[2].tokens_b, (Words{"Preise", "&", "Löhne", "stiegen", "um", "2,1", "Prozent", "."}));
}

TEST(ParallelText, ReadsSgmlSegments) {
  std::vector<std::string> ids;
  const auto segs = read_sgml_segments(kFixture + "/newstest2014-deen-src.en.sgm", &ids);
  // Entities unescaped, the double space made one.
  EXPECT_EQ(segs, (Words{"The children play in the garden.", "He said: \"That is not true.\"",
                         "Prices & wages rose by 2.1 percent."}));
  EXPECT_EQ(ids, (Words{"1001-example:1", "1001-example:2", "1002-example:1"}));
  // The other direction finds the same files by their pair name "deen".
  EXPECT_EQ(read_parallel_split(kFixture, "test", "en", "de").target.size(), 3u);
}

TEST(ParallelText, WithoutDevFilesSplitsDevOffTrain) {
  const std::string dir = fixture_copy();
  std::filesystem::remove(dir + "/newstest2013.en");
  std::filesystem::remove(dir + "/newstest2013.de");
  const Dataset d = load_parallel_text_dir(dir, "en", "de");
  EXPECT_EQ(d.train.size() + d.dev.size(), 4u);
  EXPECT_EQ(d.dev.size(), 1u);
}

TEST(ParallelText, RefusesLineCountsThatDiffer) {
  const std::string dir = fixture_copy();
  write(dir + "/train.de", "Nur eine Zeile.\n");
  EXPECT_NE(error_of([&] { load_parallel_text_dir(dir, "en", "de"); }).find("train.en has 5 lines but"),
            std::string::npos);
}

TEST(ParallelText, RefusesMissingFiles) {
  const std::string dir = fixture_copy();
  std::filesystem::remove(dir + "/newstest2013.de");
  EXPECT_NE(error_of([&] { load_parallel_text_dir(dir, "en", "de"); }).find("newstest2013.en has no partner"),
            std::string::npos);
  EXPECT_NE(error_of([&] { load_parallel_text_dir(dir, "en", "fr"); }).find("train.fr is missing"), std::string::npos);
  EXPECT_NE(error_of([&] { load_parallel_text_dir(dir, "fr", "es"); }).find("no train files"), std::string::npos);
  EXPECT_NE(error_of([] { load_parallel_text_dir("/nonexistent/wmt", "en", "de"); }).find("is not a folder"),
            std::string::npos);
  std::filesystem::remove(dir + "/newstest2014-deen-src.en.sgm");
  std::filesystem::remove(dir + "/newstest2014-deen-ref.de.sgm");
  const std::string e = error_of([&] { read_parallel_split(dir, "test", "en", "de"); });
  EXPECT_NE(e.find("no test files"), std::string::npos) << e;
  EXPECT_NE(e.find("newstest2014-deen-src.en.sgm + newstest2014-deen-ref.de.sgm"), std::string::npos) << e;
}

TEST(ParallelText, RefusesMalformedSgml) {
  const std::string dir = scratch_dir();
  auto error_for = [&](const std::string& body) {
    write(dir + "/x.sgm", body);
    return error_of([&] { read_sgml_segments(dir + "/x.sgm"); });
  };
  const std::string doc = "<doc sysid=\"ref\" docid=\"d1\">\n";
  EXPECT_NE(error_for(doc + "<seg id=\"1\">open text\n</doc>\n").find(":2: <seg> not closed by </seg>"),
            std::string::npos);
  EXPECT_NE(error_for(doc + "<seg>no id</seg>\n</doc>\n").find("without an id"), std::string::npos);
  EXPECT_NE(error_for("<seg id=\"1\">loose</seg>\n").find("outside a <doc>"), std::string::npos);
  EXPECT_NE(error_for("<doc sysid=\"ref\">\n<seg id=\"1\">a</seg>\n</doc>\n").find("without a docid"),
            std::string::npos);
  EXPECT_NE(error_for(doc + "<seg id=\"1\">a</seg>\n").find("never closed"), std::string::npos);
  EXPECT_NE(error_for("just text\n").find("holds no <seg> lines"), std::string::npos);
}

TEST(ParallelText, RefusesSgmlFilesOfDifferentTestSets) {
  const std::string dir = fixture_copy();
  std::string ref;
  {
    std::ifstream in(dir + "/newstest2014-deen-ref.de.sgm");
    ref.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ref.replace(ref.find("1002-example"), 12, "9999-other");
  write(dir + "/newstest2014-deen-ref.de.sgm", ref);
  EXPECT_NE(error_of([&] { read_parallel_split(dir, "test", "en", "de"); }).find("not one test set"),
            std::string::npos);
}

TEST(ParallelText, RefusesBlankTestSentences) {
  const std::string dir = fixture_copy();
  write(dir + "/newstest2013.de", "Das Wetter ist heute gut.\n\n");
  EXPECT_NE(error_of([&] { load_parallel_text_dir(dir, "en", "de"); }).find("is blank"), std::string::npos);
}

}  // namespace
}  // namespace attn
