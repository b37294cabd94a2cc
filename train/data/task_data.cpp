#include "attn/train/data/task_data.h"

#include <cstdio>

#include "attn/engine/error.h"
#include "attn/util/atomic_file.h"
#include "attn/util/text.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/spam/spam_assassin.h"

namespace attn {

namespace {

std::string join(const std::string& dir, const std::string& file) { return dir + "/" + file; }

// SNLI/MultiNLI ship as *_train.jsonl etc.; accept the usual names.
std::string first_existing(const std::string& dir, const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (path_exists(join(dir, n))) return join(dir, n);
  ATTN_CHECK(false, "data", "none of ", names.front(), " (or its usual variants) found in '", dir, "'");
  return "";
}

// CR, MPQA and SUBJ as SentEval ships them: one file per class, one sentence
// per line. Fold `fold` of the seeded, stratified 10-fold split is the test
// split; a seeded 10% of the rest is dev.
Dataset load_cross_validation_format(const DataSpec& s) {
  std::vector<std::pair<std::string, std::string>> files;
  const std::string& d = s.data;
  if (s.format == "cr") files = {{"negative", first_existing(d, {"custrev.neg"})}, {"positive", first_existing(d, {"custrev.pos"})}};
  if (s.format == "mpqa") files = {{"negative", first_existing(d, {"mpqa.neg"})}, {"positive", first_existing(d, {"mpqa.pos"})}};
  if (s.format == "subj")
    files = {{"objective", first_existing(d, {"subj.objective", "plot.tok.gt9.5000"})},
             {"subjective", first_existing(d, {"subj.subjective", "quote.tok.gt9.5000"})}};
  ATTN_CHECK(s.fold >= 0 && s.fold < 10, "data", "--fold must be in [0, 9], got ", s.fold);
  Dataset all = load_sentence_per_line(s.format, files);
  auto folds = ten_fold_splits(all.train, kDevSplitSeed);
  Dataset out = all;
  out.train = std::move(folds[static_cast<size_t>(s.fold)].first);
  out.test = std::move(folds[static_cast<size_t>(s.fold)].second);
  out.dev = split_off(out.train, kDevSplitFraction, kDevSplitSeed);
  return out;
}

Dataset load_named_format(const DataSpec& s) {
  const std::string& d = s.data;
  if (s.format == "tsv") {
    if (s.task == TaskKind::Pair) return load_pair_tsv_dir(d, s.allow_similar_labels);
    if (s.task == TaskKind::Tag) return load_tagging_dir(d, s.allow_similar_labels);
    return load_classification_tsv_dir(d, s.allow_similar_labels);
  }
  if (s.format == "snli")
    return load_snli_jsonl(first_existing(d, {"train.jsonl", "snli_1.0_train.jsonl", "multinli_1.0_train.jsonl"}),
                           first_existing(d, {"dev.jsonl", "snli_1.0_dev.jsonl", "multinli_1.0_dev_matched.jsonl"}),
                           first_existing(d, {"test.jsonl", "snli_1.0_test.jsonl", "multinli_1.0_dev_mismatched.jsonl"}));
  if (s.format == "multinli") {
    // One at a time, so a folder without any of them names the train file.
    const std::string train = first_existing(d, {"multinli_1.0_train.jsonl"});
    const std::string matched = first_existing(d, {"multinli_1.0_dev_matched.jsonl"});
    return load_multinli_jsonl(train, matched, first_existing(d, {"multinli_1.0_dev_mismatched.jsonl"}));
  }
  if (s.format.rfind("mtl16-", 0) == 0) return load_mtl16(d, s.format.substr(6));
  if (s.format == "sst5") return load_sst(d, false, 5);
  if (s.format == "sst2") return load_sst(d, false, 2);
  if (s.format == "sst5-phrases") return load_sst(d, true, 5);
  if (s.format == "sst2-phrases") return load_sst(d, true, 2);
  if (s.format == "trec" || s.format == "trec-fine")
    return load_trec(first_existing(d, {"train.txt", "train_5500.label", "train.label"}),
                     first_existing(d, {"test.txt", "TREC_10.label", "test.label"}), s.format == "trec-fine");
  if (s.format == "sick")
    return load_sick(first_existing(d, {"train.txt", "SICK_train.txt"}), first_existing(d, {"dev.txt", "SICK_trial.txt"}),
                     first_existing(d, {"test.txt", "SICK_test_annotated.txt"}));
  if (s.format == "squad")
    return load_squad(first_existing(d, {"train-v1.1.json", "train.json"}),
                      first_existing(d, {"dev-v1.1.json", "dev.json"}));
  if (s.format == "conll") return load_tagging_dir(d, s.allow_similar_labels);
  if (s.format == "conll03" || s.format == "conll03-bioes")
    return load_conll03(d, s.format == "conll03" ? TagScheme::Bio : TagScheme::Bioes);
  if (s.format == "conll12" || s.format == "conll12-bioes")
    return load_conll12(d, s.format == "conll12" ? TagScheme::Bio : TagScheme::Bioes);
  if (s.format == "ptb-pos") return load_ptb_pos(d);
  if (s.format == "conll05") return load_conll05(d);
  if (s.format == "cr" || s.format == "mpqa" || s.format == "subj") return load_cross_validation_format(s);
  if (s.format == "spam") {
    SpamOptions o;
    o.local_copy = d;
    o.max_words = s.max_words;
    return load_spam_assassin(o);
  }
  ATTN_CHECK(false, "data", "unknown --format '", s.format, "' (", data_formats_help(), ")");
  return Dataset();
}

}  // namespace

const char* data_formats_help() {
  return "auto, tsv, snli, multinli (matched and mismatched dev reported apart), mtl16-NAME (NAME: one of MTL-16's "
         "sixteen data sets, the paper's row names in lower case: apparel, baby, books, camera, dvd, "
         "electronics, health, imdb, kitchen, magazines, mr, music, software, sports, toys, video), sst5, sst2, sst5-phrases, sst2-phrases, trec, trec-fine, sick, conll, "
         "conll03, conll03-bioes, conll12, conll12-bioes (NER, tags in BIO or BIOES), ptb-pos (WSJ sections 00..24), conll05 (SRL), squad (SQuAD v1.1 JSON, locate task), cr, mpqa, subj "
         "(SentEval's one-file-per-class text; --fold picks the test fold), spam (a local copy of the SpamAssassin npm "
         "package: its .tgz or folder)";
}

Dataset load_task_data(const DataSpec& spec) {
  Dataset data;
  if (spec.data.empty()) {
    ATTN_CHECK(spec.task == TaskKind::Classify, "data", "--data is required for the ", task_name(spec.task),
               " task (only classify has default data)");
    SpamOptions o;
    o.cache_dir = spec.cache_dir;
    o.max_words = spec.max_words;
    if (spec.verbose) o.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    data = load_spam_assassin(o);
  } else {
    ATTN_CHECK(path_exists(spec.data), "data", "'", spec.data, "' does not exist");
    DataSpec s = spec;
    if (s.format == "auto") {
      switch (s.task) {
        case TaskKind::Translate:
          ATTN_CHECK(false, "data", "the translate task has its own model and loop (train/translation_run.h)");
          break;
        case TaskKind::Classify:
          s.format = s.data.size() > 4 && s.data.compare(s.data.size() - 4, 4, ".tgz") == 0 ? "spam" : "tsv";
          break;
        case TaskKind::Pair: s.format = "tsv"; break;
        case TaskKind::Relatedness: s.format = "sick"; break;
        case TaskKind::Tag: s.format = "conll"; break;
        case TaskKind::Srl: s.format = "conll05"; break;
        case TaskKind::Locate: s.format = "squad"; break;
      }
    }
    // A single file where a folder of split files belongs (`--data train.tsv`).
    ATTN_CHECK(s.format != "tsv" || !text::is_regular_file(s.data), "data", "'", s.data,
               "' is a file; --format tsv reads a folder holding train.tsv, test.tsv and optionally dev.tsv");
    data = load_named_format(s);
  }
  ATTN_CHECK(data.task == spec.task, "data", "the data is for the ", task_name(data.task), " task, not ",
             task_name(spec.task));
  ATTN_CHECK(!data.train.empty(), "data", "the training split is empty");
  return data;
}

}  // namespace attn
