// Fixture files for the data tests: each test writes what it reads into its
// own folder under ::testing::TempDir(), so no test needs the network.
#pragma once
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attn/engine/error.h"
#include "test_util.h"

namespace attn {
namespace test_data {

// What every data test names: `using namespace test_data;` brings them.
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Tokens = std::vector<std::string>;

// A fresh, empty folder named after the running test (one per test: a
// second call in the same test returns the same folder, contents kept).
inline std::string fresh_dir() { return testing_support::scratch_dir(); }

inline std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::filesystem::path p = std::filesystem::path(dir) / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  return p.string();
}

// A two-class TSV task in dir/data (train.tsv, test.tsv; dev is split off
// train): class 1 sentences carry "alpha", class 0 "beta", among filler.
inline std::string write_alpha_beta_tsv(const std::string& dir) {
  std::string train, test;
  const char* fill[] = {"the", "cat", "sat", "on", "a", "mat", "dog", "ran"};
  for (int i = 0; i < 120; ++i) {
    std::string line = std::to_string(i % 2) + "\t" + (i % 2 ? "alpha" : "beta");
    for (int j = 0; j < 5; ++j) line += std::string(" ") + fill[(i * 7 + j * 3) % 8];
    (i < 90 ? train : test) += line + "\n";
  }
  write(dir, "data/train.tsv", train);
  write(dir, "data/test.tsv", test);
  return dir + "/data";
}

// A whole file's bytes ("" when it cannot be read).
inline std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The message of the attn::Error a callable throws (shared with the other suites).
using testing_support::error_of;

// Runs a command with `input` on stdin and returns what it printed.
inline std::string run_command(int (*command)(const std::vector<std::string>&), const std::vector<std::string>& args,
                        const std::string& input, int* code) {
  std::istringstream in(input);
  std::streambuf* old = std::cin.rdbuf(in.rdbuf());
  ::testing::internal::CaptureStdout();
  try {
    *code = command(args);
  } catch (...) {
    std::fflush(stdout);
    ::testing::internal::GetCapturedStdout();
    std::cin.rdbuf(old);
    throw;
  }
  std::fflush(stdout);
  std::string out = ::testing::internal::GetCapturedStdout();
  std::cin.rdbuf(old);
  return out;
}


inline const std::vector<std::string>& filler_words() {
  static const std::vector<std::string> words = {"the", "a",    "cat",  "dog",   "sat", "ran",  "on",    "mat",
                                                 "big", "small", "old", "new",   "red", "tree", "house", "car",
                                                 "walk", "sun",  "rain", "green", "sky", "road", "fast",  "slow"};
  return words;
}

inline std::string join_words(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// label<TAB>text: 1 when the sentence holds "alpha", 0 when it holds "beta",
// at a random place among 10..16 fillers. A task every encoder learns fast.
inline std::string marker_tsv(std::mt19937& rng, int rows) {
  std::string text;
  for (int r = 0; r < rows; ++r) {
    const int label = static_cast<int>(rng() % 2);
    std::vector<std::string> words;
    const int n = 10 + static_cast<int>(rng() % 7);
    for (int i = 0; i < n; ++i) words.push_back(filler_words()[rng() % filler_words().size()]);
    words.insert(words.begin() + static_cast<std::ptrdiff_t>(rng() % (words.size() + 1)), label ? "alpha" : "beta");
    text += std::to_string(label) + "\t" + join_words(words) + "\n";
  }
  return text;
}

// DIR/data/{train,dev,test}.tsv of marker sentences; returns DIR/data.
inline std::string write_marker_data(const std::string& dir, int train_rows, int dev_rows, int test_rows,
                                     unsigned seed = 11) {
  std::mt19937 rng(seed);
  write(dir, "data/train.tsv", marker_tsv(rng, train_rows));
  write(dir, "data/dev.tsv", marker_tsv(rng, dev_rows));
  write(dir, "data/test.tsv", marker_tsv(rng, test_rows));
  return dir + "/data";
}

}  // namespace test_data
}  // namespace attn
