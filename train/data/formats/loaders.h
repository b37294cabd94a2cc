// Loaders for the datasets the papers evaluate on, plus generic TSV formats.
// Each returns a tokenised Dataset (train/data/tokenizer.h rules unless the format
// is pre-tokenised) and throws attn::Error "loader: FILE:LINE: what" for a
// malformed line, or "loader: cannot open FILE" for a missing file. Formats
// are described in docs/data.md.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/train/data/dataset.h"
#include "attn/train/data/formats/tag_schemes.h"

namespace attn {

// SNLI / MultiNLI jsonl: one object per line with sentence1, sentence2 and
// gold_label (entailment, neutral, contradiction = labels 0, 1, 2). Lines
// whose gold_label is "-" (no annotator majority) are skipped; blank lines
// are ignored. An empty path gives an empty split (MultiNLI has no public test).
Dataset load_snli_jsonl(const std::string& train, const std::string& dev, const std::string& test);

// MultiNLI 1.0 (multinli_1.0_{train,dev_matched,dev_mismatched}.jsonl), lines
// as load_snli_jsonl reads them (genre and the other keys ignored). The
// labelled evaluation sets are the two dev files; the test sets are Kaggle's
// unlabelled files, which this loader does not read. dev is dev_matched (it
// picks the best checkpoint), test is dev_mismatched (never selected on), and
// both are reported by name as "matched" and "mismatched" (Dataset::reported).
Dataset load_multinli_jsonl(const std::string& train, const std::string& dev_matched,
                            const std::string& dev_mismatched);

// Stanford Sentiment Treebank, PTB-style trees in DIR/train.txt, dev.txt,
// test.txt: "(3 (2 It) (4 (2 's) ...))", node labels 0..4. classes = 5 keeps
// the five labels; classes = 2 maps 0,1 -> negative and 3,4 -> positive and
// drops neutral (2). all_phrases: every node of every training tree (leaves
// included, duplicates kept) is an example; dev/test are whole sentences.
// Leaves are lowercased; -LRB-/-RRB- become ( and ).
Dataset load_sst(const std::string& dir, bool all_phrases, int classes /*5 or 2*/);

// TREC question classification: "COARSE:fine question text" per line. Labels
// are the coarse class (6) or, with `fine`, the whole "COARSE:fine" (50),
// sorted by name over train and test. TREC has no dev set: a seeded 10% of
// train becomes dev (split_off with kDevSplitSeed, as for TSV directories).
Dataset load_trec(const std::string& train, const std::string& test, bool fine);

// One sentence per line, one file per class (CR, MPQA, SUBJ, MR): every
// example goes to train (use ten_fold_splits). Blank lines are skipped; a
// line with a NUL byte (not a text file) is an error.
Dataset load_sentence_per_line(const std::string& name,
                               const std::vector<std::pair<std::string, std::string>>& class_files /*label name, file*/);

// 10-fold cross-validation: ten (train, test) pairs whose test parts
// partition `all`. Seeded; stratified by label (examples with label < 0 form
// their own stratum), so each fold has the class proportions of the whole.
std::vector<std::pair<std::vector<Example>, std::vector<Example>>> ten_fold_splits(const std::vector<Example>& all,
                                                                                   uint64_t seed);

// SICK (SemEval 2014 task 1), tab-separated with a header naming at least
// sentence_A, sentence_B and relatedness_score (pair_ID and
// entailment_judgment are optional; columns are found by name). Task
// Relatedness; score in [1, 5]; label_names are the score bins "1".."5".
Dataset load_sick(const std::string& train, const std::string& dev, const std::string& test);

// label<TAB>text lines in DIR/train.tsv, DIR/dev.tsv (optional: when missing,
// a seeded 10% of train becomes dev), DIR/test.tsv. No header. Label names are
// the distinct labels of all three files, in numeric order when every label is
// an integer, else in byte order. Unless allow_similar_labels, labels that
// differ only by whitespace or number formatting (" 1", "01" beside "1") and
// a first line that looks like a header row are errors (LabelTally).
Dataset load_classification_tsv_dir(const std::string& dir, bool allow_similar_labels = false);

// label<TAB>sentence_a<TAB>sentence_b lines, same files and label rules as
// load_classification_tsv_dir (allow_similar_labels included). Task Pair.
Dataset load_pair_tsv_dir(const std::string& dir, bool allow_similar_labels = false);

// CoNLL-style tagging: one token per line, a blank line between sentences,
// in DIR/train, DIR/dev (optional, as above), DIR/test with extension .tsv
// (exactly token<TAB>tag) or, when no .tsv exists, .conll (whitespace-
// separated columns, token first and tag last, e.g. CoNLL-2003). Lines
// starting with -DOCSTART- are skipped. Tokens are lowercased, not re-split
// (every tagging loader keeps the original case in Example::cased_tokens).
// Tag names are sorted in byte order. Task Tag. Errors: tags as for
// load_classification_tsv_dir's labels; a tag set with B-X/I-X/E-X/S-X tags
// (IOB1, BIO or BIOES: scored by entity F1) that also holds anything but O
// and such tags; a .tsv file that is label<TAB>text (a tag with spaces
// inside, or more distinct tags than tokens over 50+ lines).
Dataset load_tagging_dir(const std::string& dir, bool allow_similar_labels = false);

// CoNLL-2003 NER (English), official layout: DIR/eng.train, eng.testa (dev),
// eng.testb (test), "word POS chunk NER" lines, blank lines between
// sentences, -DOCSTART- lines skipped. The NER column is IOB1 (BIO files
// read the same); it is converted, chunk for chunk, to `scheme`. Errors: a
// line without exactly 4 columns, a tag that is not O, B-X or I-X.
Dataset load_conll03(const std::string& dir, TagScheme scheme);

// CoNLL-2012 (OntoNotes 5.0) NER from the shared task's *_conll files, each
// split's documents concatenated into DIR/{train,dev,test}.english.v4_gold_conll.
// "#begin/#end document" lines are skipped; the word is column 4, the names
// column 11 in bracket notation ("(PERSON*", "*", "*)", "(GPE)"), converted
// to `scheme`. Errors: fewer than 12 columns, a word number out of step
// (a missing blank line), a bracket cell of another form, a name opened
// inside a name, closed without being opened, or open at the sentence end.
Dataset load_conll12(const std::string& dir, TagScheme scheme);

// Penn Treebank WSJ POS tagging: DIR/00 .. DIR/24 (section folders), every
// file one sentence per line of word/TAG tokens (split at the last '/';
// "\/" in a word is '/'). Sections 00-18 train, 19-21 dev, 22-24 test.
// Tokens tagged -NONE- are dropped; an ambiguous "A|B" tag keeps A. Errors:
// a missing or empty section folder, a token that is not word/TAG.
Dataset load_ptb_pos(const std::string& dir);
// CoNLL-2005 SRL (gold predicates) in DIR/train.txt (or train-set), DIR/dev.txt
// (or dev-set; optional, as above), DIR/test.txt (or test-wsj, test-brown):
// per line WORD TARGET ARG_1 ... ARG_k, whitespace-separated, a blank line
// between sentences: the official words column beside the official props
// columns (TARGET is "-" or the predicate's lemma; ARG_j is the bracket
// notation "(A0*", "*", "*)", "(V*)" of the j-th predicate). One example per
// predicate: the lowercased words, Example::predicate = the predicate's row,
// and its argument column as BIO tags ("(A0*" -> B-A0, inside -> I-A0, else
// O; the verb is B-V). Tag names in byte order, "O" always among them. Task
// Srl. Errors: rows of one sentence with different column counts, argument
// columns not one per predicate, unbalanced or nested brackets, a malformed
// cell, an argument column without a (V*) span on its predicate's row.
Dataset load_conll05(const std::string& dir);

// SQuAD v1.1 JSON (train-v1.1.json, dev-v1.1.json) as sentence location
// (seed 002 Sec. 4.2): each context is split into sentences
// (train/data/sentence_splitter.h), one example per question: tokens = the
// question, passage = the context's sentences, label = the sentence holding
// the first answer's start (an answer running into the next sentence keeps
// that label; how many do is said in Dataset::notes). answer_start counts
// characters. test = the dev file (the split the paper reports, SQuAD's
// test set being hidden); dev = the questions of a seeded 10% of train's
// paragraphs (held_out with kDevSplitSeed), so no passage is in both. Task
// Locate; label_names {"other", "answer"}. Errors name the file and the
// question's place: malformed JSON, a missing or mistyped field, an empty
// context, a question without answers, an answer_start outside the context
// or an answer text that is not at answer_start.
Dataset load_squad(const std::string& train, const std::string& test);

// MTL-16 (Liu, Qiu and Huang 2017, the release's mtl-dataset folder): DIR/
// STEM.task.train and DIR/STEM.task.test (STEM: the data set's file name), "label<TAB>text" lines with label
// 0 or 1 (label names "0", "1"); NAME.task.unlabel is not read. The train
// file holds train and dev together (1600 lines, "70%, 10% and 20%" of each
// data set): a seeded eighth of it (kMtl16DevFraction) is dev. Errors: an
// unknown NAME (listing mtl16_datasets()), a line without exactly one tab, a
// label other than 0 or 1, a text without tokens.
Dataset load_mtl16(const std::string& dir, const std::string& dataset);
// The sixteen data sets by the Multi-Scale Transformer paper's row names in
// lower case: apparel, baby, books, camera (the files camera_photo.task.*),
// dvd, electronics, health (health_personal_care), imdb, kitchen
// (kitchen_housewares), magazines, mr (MR), music, software, sports
// (sports_outdoors), toys (toys_games), video.
const std::vector<std::string>& mtl16_datasets();
constexpr double kMtl16DevFraction = 0.125;

// Seed used wherever a loader splits a dev set off train.
constexpr uint64_t kDevSplitSeed = 20240601;
constexpr double kDevSplitFraction = 0.1;

// Parallel text for translation (WMT): one sentence a line, a file per
// language, line i of each the same sentence pair. read_parallel_split gives
// the raw lines of one split of DIR ("train", "dev" or "test"), from the first
// of these that exists (docs/data.md, "Translation"):
//   train: train.SRC + train.TGT
//   dev:   dev.SRC + dev.TGT, newstest2013.SRC + newstest2013.TGT,
//          newstest2013-src.SRC.sgm + newstest2013-ref.TGT.sgm
//   test:  test.SRC + test.TGT, newstest2014.SRC + newstest2014.TGT,
//          newstest2014-PAIR-src.SRC.sgm + newstest2014-PAIR-ref.TGT.sgm
//          (PAIR = SRCTGT or TGTSRC, e.g. deen)
// Errors: no candidate exists (all are named), the two files' line or
// segment counts differ, malformed SGML (read_sgml_segments), a NUL byte.
struct ParallelText {
  std::vector<std::string> source, target;
  std::string source_file, target_file;
};
ParallelText read_parallel_split(const std::string& dir, const std::string& split, const std::string& src_lang,
                                 const std::string& tgt_lang);

// The sentences of a WMT SGML file: the text of every <seg id="N">...</seg>
// line inside a <doc docid="..."> element, whitespace runs made single
// spaces, &quot; &amp; &lt; &gt; unescaped (the four mteval/13a know). `ids`,
// when given, receives "docid:N" of each segment (a source and its reference
// must agree on them). Throws "load_parallel_text: FILE:LINE: ..." for a
// <seg> line that is not closed on its line or has no id, a <seg> outside a
// <doc>, a <doc> without docid, nested or unclosed <doc>, or no segment at all.
std::vector<std::string> read_sgml_segments(const std::string& file, std::vector<std::string>* ids = nullptr);

// The three splits as a Dataset: Example.tokens the source words,
// Example.tokens_b the target words (train/text/pretokenize.h, case kept).
// Training pairs with a blank side are dropped (WMT's crawled corpora hold
// some); a blank sentence in dev or test is an error, since outputs are
// scored line by line against it. Without dev files a seeded 10% of train
// becomes dev. The name is DIR's last component; the task is left as is.
Dataset load_parallel_text_dir(const std::string& dir, const std::string& src_lang, const std::string& tgt_lang);

}  // namespace attn
