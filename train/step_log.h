// steps.jsonl: one JSON line per logged training step (every --log-every
// steps), beside metrics.jsonl's one line per dev evaluation. A line holds
// the step's own loss and gradient norm before clipping, the epoch's running
// mean loss, the learning rate, the throughput since the previous line and
// the bytes the device's allocator holds:
//   {"step":50,"epoch":1,"loss":0.57562,"mean_loss":0.591841,"grad_norm":0.442969,"clipped":false,
//    "lr":0.001,"examples_per_s":396.284,"tokens_per_s":68327.3,"allocator_bytes":58705504}
// On --resume the trainer drops the lines after the checkpoint's step
// (keep_metrics_up_to) before training goes on, so the file ends with one
// line per logged step, in order, whatever interrupted the run.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "attn/engine/device.h"
#include "attn/train/data/batching.h"

namespace attn {

struct StepLine {
  int64_t step = 0;
  int64_t epoch = 0;       // 1-based, as metrics.jsonl
  double loss = 0;         // this step's mini-batch loss (weight decay penalty included)
  double mean_loss = 0;    // the mean loss of the epoch's steps so far (the progress bar's)
  double grad_norm = 0;    // the global L2 norm before clipping (StepResult)
  bool clipped = false;
  double lr = 0;           // the model optimiser's learning rate
  // Over the steps since the previous line (or since this process started
  // training): examples and non-padding tokens per second of the time spent
  // in those steps (building the batch, forward, backward, update); dev
  // evaluations and checkpoints between them are not counted.
  double examples_per_s = 0;
  double tokens_per_s = 0;
  int64_t allocator_bytes = 0;  // in use by the training device's allocator (MemoryStats::current_bytes)
};

// The line as steps.jsonl holds it (no newline); integers as integers, a
// non-finite number as null.
std::string step_line_json(const StepLine& line);

// The tokens of a batch, padding excluded (both sentences of a pair): the
// valid positions of its masks, which must still be on the CPU.
int64_t tokens_in(const Batch& batch);

// Times the steps and writes the line of every `every`-th step (0: none).
class StepLog {
 public:
  StepLog(std::string path, int64_t every, Device device);
  ~StepLog();
  StepLog(const StepLog&) = delete;
  StepLog& operator=(const StepLog&) = delete;
  bool on() const { return every_ > 0; }
  // A step begins (before its batch is built): its clock starts.
  void step_begins();
  // The step ended: its time, examples and tokens are counted and, at a
  // logged step, the line is written with the rates and allocator bytes
  // filled in; the counts then start again.
  void step_ends(StepLine line, int64_t examples, int64_t tokens);

 private:
  void write(const std::string& line);

  std::string path_;
  // Opened at the first line, once a resume has trimmed the file, and kept
  // open (an open per line would cost a small model's step); each line is
  // flushed, so a killed process leaves at most its last line torn.
  std::FILE* file_ = nullptr;
  int64_t every_;
  Device device_;
  std::chrono::steady_clock::time_point began_;
  double seconds_ = 0;
  int64_t examples_ = 0, tokens_ = 0;
};

}  // namespace attn
