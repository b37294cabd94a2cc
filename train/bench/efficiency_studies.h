// The papers' efficiency studies as data: for each, the shapes it measures,
// the encoders (with the settings that make them the papers' models) and the
// figures the paper reports, so that `attn study NAME` can run it here and
// set our ratios beside the paper's.
//
//   biblosan-fig6    seed 002 Sec. 4.5, Fig. 6: inference time and memory
//                    against sequence length 16..384, batch 64, 300 features
//   biblosan-table2  seed 002 Table 2: training time per epoch, training
//                    memory and dev inference time on SNLI
//   mtsa-table1      seed 001 Table 1: time per epoch, inference time, and
//                    memory at length 64, batch 64 with back-propagation
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/train/bench/bench_options.h"

namespace attn {

// One encoder of a study: a registry name plus settings, the paper's label
// and, for a table study, the paper's figure per column (NaN: not reported).
struct StudyEncoder {
  std::string label;  // as the paper names the row, "ours" for one it has not
  std::string model;  // registry name
  int64_t hidden = 0;  // 0: the encoder's default
  std::vector<std::pair<std::string, std::string>> config;
  std::vector<double> paper;  // one per StudyColumn
  bool baseline = false;      // an RNN or CNN context-fusion baseline
};

// A column of a table study: a time or a memory measured at one shape,
// scaled to the paper's unit (a step's milliseconds times the steps of an
// epoch, for instance).
struct StudyColumn {
  std::string name;  // "time/epoch (s)"
  std::string paper_unit;
  BenchMode mode = BenchMode::Train;
  bool memory = false;  // the allocator peak instead of the median time
  int64_t batch = 64, length = 64;
  bool random_lengths = false;
  double steps = 1;  // the step time is multiplied by this (steps per epoch or per dev pass)
  std::string how;  // the shape and scaling, for the report
};

struct EfficiencyStudy {
  std::string name;
  std::string source;  // paper, section, figure or table
  std::string figure;  // a sweep's short name for its picture's title: "Bi-BloSAN Fig. 6"
  std::string what;    // one line
  std::string shapes;  // what the paper measured and what is measured here
  bool sweep = false;  // a length sweep (a figure) rather than a table
  // A sweep: lengths, batch and mode; a table: its columns.
  std::string lengths;
  int64_t batch = 64;
  BenchMode sweep_mode = BenchMode::Infer;
  std::vector<StudyColumn> columns;
  std::string reference;  // the label ratios are taken against
  std::vector<StudyEncoder> encoders;
};

const std::vector<EfficiencyStudy>& efficiency_studies();
// The study called `name`; a UsageError naming the known ones otherwise.
const EfficiencyStudy& find_efficiency_study(const std::string& name);

}  // namespace attn
