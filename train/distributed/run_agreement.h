// Start-up checks of a data-parallel run: every process must train the same
// model on the same data with the same settings, or the sums of their
// gradients mean nothing. Each process hashes what it read; the hashes are
// exchanged, and a difference is an error on every process (never a hang)
// that names what differs and which processes disagree.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/engine/tensor.h"
#include "attn/train/data/dataset.h"
#include "attn/train/distributed/communicator.h"

namespace attn {

// FNV-1a, 64 bits: a fingerprint, not a defence against a chosen collision.
class Fingerprint {
 public:
  Fingerprint& add(const void* data, size_t bytes);
  Fingerprint& add(const std::string& text);
  Fingerprint& add(int64_t value) { return add(&value, sizeof value); }
  Fingerprint& add(double value) { return add(&value, sizeof value); }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xCBF29CE484222325ULL;
};

uint64_t fingerprint_of(const std::vector<Example>& examples);
uint64_t fingerprint_of(const std::vector<std::string>& words);
// The names, shapes and values (as float64) of tensors.
uint64_t fingerprint_of(const std::vector<std::pair<std::string, Tensor>>& named);

// Throws attn::Error on every process when some process's fingerprint of a
// named item differs from rank 0's.
void check_processes_agree(Communicator& processes, const std::vector<std::pair<std::string, uint64_t>>& items);

}  // namespace attn
