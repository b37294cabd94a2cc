// SQuAD v1.1 as sentence location (seed 002 Sec. 4.2, App. B).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "attn/engine/error.h"
#include "attn/util/json.h"
#include "attn/train/data/formats/loader_util.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/sentence_splitter.h"
#include "attn/train/data/tokenizer.h"

namespace attn {

namespace {

const char* const kLoader = "load_squad";

struct Counts {
  int64_t questions = 0;
  int64_t crossing = 0;  // first answers that run past the end of their sentence
};

// The byte offset of code point `chars` of UTF-8 `text` (SQuAD's
// answer_start counts characters, as Python's str does), or npos when the
// text has fewer.
size_t byte_offset(const std::string& text, int64_t chars) {
  size_t at = 0;
  for (int64_t k = 0; k < chars; ++k) {
    if (at >= text.size()) return std::string::npos;
    ++at;
    while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  }
  return at;
}

[[noreturn]] void fail(const std::string& file, const std::string& where, const std::string& what) {
  throw Error(std::string(kLoader) + ": " + file + ": " + where + ": " + what);
}

const Json& member(const Json& object, const char* key, Json::Type type, const std::string& file,
                   const std::string& where) {
  if (!object.is_object()) fail(file, where, "expected a JSON object");
  const Json* v = object.find(key);
  if (!v) fail(file, where, std::string("missing \"") + key + "\"");
  if (v->type() != type)
    fail(file, where, std::string("\"") + key + "\" is " + json_type_name(v->type()) + ", not " + json_type_name(type));
  return *v;
}

// Each paragraph's questions, in file order.
std::vector<std::vector<Example>> read_squad(const std::string& file, Counts& counts) {
  std::ifstream in(file, std::ios::binary);
  ATTN_CHECK(in.good(), kLoader, "cannot open ", file);
  std::stringstream text;
  text << in.rdbuf();
  Json root;
  try {
    root = Json::parse(text.str());
  } catch (const Error& e) {
    fail(file, "not SQuAD JSON", e.what());
  }
  std::vector<std::vector<Example>> out;
  const Json::Array& articles = member(root, "data", Json::Type::Array, file, "top level").as_array();
  for (size_t a = 0; a < articles.size(); ++a) {
    const std::string at_article = "data[" + std::to_string(a) + "]";
    const Json::Array& paragraphs =
        member(articles[a], "paragraphs", Json::Type::Array, file, at_article).as_array();
    for (size_t p = 0; p < paragraphs.size(); ++p) {
      const std::string at_paragraph = at_article + ".paragraphs[" + std::to_string(p) + "]";
      const std::string& context = member(paragraphs[p], "context", Json::Type::String, file, at_paragraph).as_string();
      const std::vector<SentenceSpan> spans = split_sentences(context);
      if (spans.empty()) fail(file, at_paragraph, "the context is empty");
      std::vector<std::vector<std::string>> passage;
      for (const SentenceSpan& s : spans) passage.push_back(tokenize(context.substr(s.begin, s.end - s.begin)));
      const Json::Array& qas = member(paragraphs[p], "qas", Json::Type::Array, file, at_paragraph).as_array();
      out.emplace_back();
      for (size_t q = 0; q < qas.size(); ++q) {
        std::string where = at_paragraph + ".qas[" + std::to_string(q) + "]";
        if (const Json* id = qas[q].is_object() ? qas[q].find("id") : nullptr)
          if (id->is_string()) where += " (id " + id->as_string() + ")";
        const std::string& question = member(qas[q], "question", Json::Type::String, file, where).as_string();
        const Json::Array& answers = member(qas[q], "answers", Json::Type::Array, file, where).as_array();
        if (answers.empty()) fail(file, where, "the question has no answers (SQuAD v1.1 answers every question)");
        // The first answer is the label, as in the authors' code (answers[0]).
        const Json& answer = answers.front();
        const double start_value = member(answer, "answer_start", Json::Type::Number, file, where).as_number();
        const std::string& answer_text = member(answer, "text", Json::Type::String, file, where).as_string();
        const int64_t start_chars = static_cast<int64_t>(start_value);
        const size_t start = start_value >= 0 && static_cast<double>(start_chars) == start_value
                                 ? byte_offset(context, start_chars)
                                 : std::string::npos;
        if (start == std::string::npos || start >= context.size())
          fail(file, where, "answer_start " + loader_util::quote(answer.at("answer_start").dump()) +
                                " is not a character of the context (" + std::to_string(context.size()) + " bytes)");
        if (context.compare(start, answer_text.size(), answer_text) != 0)
          fail(file, where, "the answer text " + loader_util::quote(answer_text) +
                                " is not in the context at answer_start " + std::to_string(start_chars));
        Example e;
        e.tokens = tokenize(question);
        e.passage = passage;
        for (size_t k = 0; k < spans.size(); ++k)
          if (start >= spans[k].begin && start < spans[k].end) e.label = static_cast<int64_t>(k);
        const SentenceSpan& holding = spans[static_cast<size_t>(e.label)];
        if (start + answer_text.size() > holding.end) ++counts.crossing;
        ++counts.questions;
        out.back().push_back(std::move(e));
      }
    }
  }
  if (counts.questions == 0) fail(file, "data", "no questions");
  return out;
}

}  // namespace

Dataset load_squad(const std::string& train, const std::string& test) {
  Dataset d;
  d.name = "squad";
  d.task = TaskKind::Locate;
  d.label_names = {"other", "answer"};
  Counts train_counts, test_counts;
  // dev holds whole paragraphs: a passage is never in both train and dev.
  const std::vector<std::vector<Example>> train_paragraphs = read_squad(train, train_counts);
  const std::vector<bool> held = held_out(train_paragraphs.size(), kDevSplitFraction, kDevSplitSeed);
  for (size_t p = 0; p < train_paragraphs.size(); ++p)
    for (const Example& e : train_paragraphs[p]) (held[p] ? d.dev : d.train).push_back(e);
  for (const std::vector<Example>& paragraph : read_squad(test, test_counts))
    d.test.insert(d.test.end(), paragraph.begin(), paragraph.end());
  d.notes = "answers running past their sentence's end (labelled with the sentence of their start): train " +
            std::to_string(train_counts.crossing) + " of " + std::to_string(train_counts.questions) + ", test " +
            std::to_string(test_counts.crossing) + " of " + std::to_string(test_counts.questions);
  return d;
}

}  // namespace attn
