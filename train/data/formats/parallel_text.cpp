// WMT parallel text: plain one-sentence-a-line files and the SGML test sets.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "attn/engine/error.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/text/mteval_entities.h"
#include "attn/train/text/pretokenize.h"
#include "attn/util/atomic_file.h"

namespace attn {

namespace {

const char* const kLoader = "load_parallel_text";
using loader_util::fail_at;
using loader_util::quote;

struct Candidate {
  std::string source, target;
  bool sgml = false;
};

std::vector<Candidate> candidates(const std::string& split, const std::string& src, const std::string& tgt) {
  if (split == "train") return {{"train." + src, "train." + tgt}};
  if (split == "dev")
    return {{"dev." + src, "dev." + tgt},
            {"newstest2013." + src, "newstest2013." + tgt},
            {"newstest2013-src." + src + ".sgm", "newstest2013-ref." + tgt + ".sgm", true}};
  if (split == "test") {
    std::vector<Candidate> c = {{"test." + src, "test." + tgt}, {"newstest2014." + src, "newstest2014." + tgt}};
    for (const std::string& pair : {src + tgt, tgt + src})
      c.push_back({"newstest2014-" + pair + "-src." + src + ".sgm", "newstest2014-" + pair + "-ref." + tgt + ".sgm", true});
    return c;
  }
  throw Error(std::string(kLoader) + ": unknown split " + quote(split) + " (train, dev or test)");
}

// The first candidate of `split` whose two files exist, with their paths
// under `dir`; false, with the candidates listed in `tried`, when none does.
// One file of a pair without the other is an error, not a miss.
bool find_split_files(const std::string& dir, const std::string& split, const std::string& src, const std::string& tgt,
                Candidate& found, std::string& tried) {
  ATTN_CHECK(!src.empty() && !tgt.empty() && src != tgt, kLoader,
             "the source and target languages must be two different non-empty names, got ", quote(src), " and ",
             quote(tgt));
  for (const Candidate& c : candidates(split, src, tgt)) {
    const std::string source = loader_util::join_path(dir, c.source), target = loader_util::join_path(dir, c.target);
    const bool has_src = loader_util::is_regular_file(source), has_tgt = loader_util::is_regular_file(target);
    if (has_src != has_tgt)
      throw Error(std::string(kLoader) + ": " + (has_src ? source : target) + " has no partner: " +
                  (has_src ? target : source) + " is missing");
    if (has_src) {
      found = {source, target, c.sgml};
      return true;
    }
    tried += (tried.empty() ? "" : ", ") + c.source + " + " + c.target;
  }
  return false;
}

std::vector<std::string> read_plain(const std::string& file) {
  std::vector<std::string> lines = loader_util::read_lines(kLoader, file);
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find('\0') != std::string::npos) fail_at(kLoader, file, i + 1, "NUL byte: not a text file");
  return lines;
}

// The value of attribute `name` ("name=\"v\"") in an SGML tag, or false.
bool attribute(const std::string& tag, const std::string& name, std::string& value) {
  for (size_t at = tag.find(name + "=\""); at != std::string::npos; at = tag.find(name + "=\"", at + 1)) {
    if (at > 0 && tag[at - 1] != ' ' && tag[at - 1] != '\t') continue;  // "docid" inside "xdocid"
    const size_t start = at + name.size() + 2, end = tag.find('"', start);
    if (end == std::string::npos) return false;
    value = tag.substr(start, end - start);
    return true;
  }
  return false;
}

std::string clean_segment(const std::string& text) {
  std::string out;
  for (const std::string& w : loader_util::split_whitespace(text)) out += (out.empty() ? "" : " ") + w;
  return unescape_mteval_entities(out);
}

bool starts_with(const std::string& s, const std::string& head) { return s.compare(0, head.size(), head) == 0; }

std::vector<Example> to_examples(const ParallelText& p, bool drop_blank) {
  std::vector<Example> out;
  for (size_t i = 0; i < p.source.size(); ++i) {
    const bool blank_src = loader_util::is_blank(p.source[i]), blank_tgt = loader_util::is_blank(p.target[i]);
    if (blank_src || blank_tgt) {
      if (drop_blank) continue;
      throw Error(std::string(kLoader) + ": sentence " + std::to_string(i + 1) + " of " +
                  (blank_src ? p.source_file : p.target_file) +
                  " is blank; a dev or test sentence must not be, since outputs are scored line by line");
    }
    Example e;
    e.tokens = pretokenize(p.source[i]);
    e.tokens_b = pretokenize(p.target[i]);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

std::vector<std::string> read_sgml_segments(const std::string& file, std::vector<std::string>* ids) {
  std::vector<std::string> lines = read_plain(file);
  std::vector<std::string> segments;
  std::string docid;
  bool in_doc = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string line = text::trim(lines[i], " \t");
    if (starts_with(line, "<doc ") || starts_with(line, "<doc>") || line == "<doc") {
      if (in_doc) fail_at(kLoader, file, i + 1, "<doc> inside another <doc> (missing </doc>)");
      if (!attribute(line, "docid", docid)) fail_at(kLoader, file, i + 1, "<doc> without a docid=\"...\" attribute");
      in_doc = true;
    } else if (starts_with(line, "</doc>")) {
      if (!in_doc) fail_at(kLoader, file, i + 1, "</doc> without a <doc>");
      in_doc = false;
    } else if (starts_with(line, "<seg")) {
      const size_t open_end = line.find('>');
      const std::string close = "</seg>";
      if (open_end == std::string::npos) fail_at(kLoader, file, i + 1, "<seg tag not closed with '>'");
      if (line.size() < open_end + 1 + close.size() || line.compare(line.size() - close.size(), close.size(), close) != 0)
        fail_at(kLoader, file, i + 1, "<seg> not closed by </seg> at the end of its line: " + quote(line));
      if (!in_doc) fail_at(kLoader, file, i + 1, "<seg> outside a <doc>");
      std::string id;
      if (!attribute(line.substr(0, open_end), "id", id) || id.empty())
        fail_at(kLoader, file, i + 1, "<seg> without an id=\"N\" attribute");
      segments.push_back(clean_segment(line.substr(open_end + 1, line.size() - close.size() - open_end - 1)));
      if (ids) ids->push_back(docid + ":" + id);
    }
  }
  if (in_doc) throw Error(std::string(kLoader) + ": " + file + ": <doc docid=\"" + docid + "\"> is never closed");
  if (segments.empty()) throw Error(std::string(kLoader) + ": " + file + " holds no <seg> lines: not a WMT SGML file");
  return segments;
}

ParallelText read_parallel_split(const std::string& dir, const std::string& split, const std::string& src_lang,
                                 const std::string& tgt_lang) {
  Candidate c;
  std::string tried;
  if (!find_split_files(dir, split, src_lang, tgt_lang, c, tried))
    throw Error(std::string(kLoader) + ": no " + split + " files in " + dir + " (looked for " + tried + ")");
  ParallelText p;
  p.source_file = c.source;
  p.target_file = c.target;
  if (c.sgml) {
    std::vector<std::string> src_ids, tgt_ids;
    p.source = read_sgml_segments(p.source_file, &src_ids);
    p.target = read_sgml_segments(p.target_file, &tgt_ids);
    for (size_t i = 0; i < std::min(src_ids.size(), tgt_ids.size()); ++i)
      if (src_ids[i] != tgt_ids[i])
        throw Error(std::string(kLoader) + ": segment " + std::to_string(i + 1) + " is " + quote(src_ids[i]) + " in " +
                    p.source_file + " but " + quote(tgt_ids[i]) + " in " + p.target_file +
                    " (docid:id): the files are not one test set");
  } else {
    p.source = read_plain(p.source_file);
    p.target = read_plain(p.target_file);
  }
  if (p.source.size() != p.target.size())
    throw Error(std::string(kLoader) + ": " + p.source_file + " has " + std::to_string(p.source.size()) +
                (c.sgml ? " segments" : " lines") + " but " + p.target_file + " has " +
                std::to_string(p.target.size()) + "; parallel files must pair up line by line");
  return p;
}

Dataset load_parallel_text_dir(const std::string& dir, const std::string& src_lang, const std::string& tgt_lang) {
  if (!is_directory(dir)) throw Error(std::string(kLoader) + ": " + quote(dir) + " is not a folder");
  Dataset d;
  d.name = loader_util::base_name(dir);
  d.train = to_examples(read_parallel_split(dir, "train", src_lang, tgt_lang), true);
  if (d.train.empty()) throw Error(std::string(kLoader) + ": the train files in " + dir + " hold no sentence pair");
  Candidate dev;
  std::string tried;
  if (find_split_files(dir, "dev", src_lang, tgt_lang, dev, tried))
    d.dev = to_examples(read_parallel_split(dir, "dev", src_lang, tgt_lang), false);
  else
    d.dev = split_off(d.train, kDevSplitFraction, kDevSplitSeed);
  d.test = to_examples(read_parallel_split(dir, "test", src_lang, tgt_lang), false);
  return d;
}

}  // namespace attn
