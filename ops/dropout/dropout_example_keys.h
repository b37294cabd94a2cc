// Dropout and sampling keyed on examples. Inside an ExampleNoiseKeys scope,
// dropout() and bernoulli() give row b of a tensor's leading dimension a
// random stream of its own, keyed by the call's seed and keys[b] (the
// example's index in its data set), instead of one stream over the whole
// tensor. An example then draws the same noise whichever other examples share
// its batch and wherever its row sits: a data-parallel run, whose processes
// each hold a slice of every batch, drops exactly what one process drops.
//
// Within a scope every tensor given to dropout or bernoulli must have the
// batch as its leading dimension (size keys.size()); any other shape is an
// error rather than noise that would depend on the number of processes.
#pragma once
#include <cstdint>
#include <vector>

namespace attn {

class ExampleNoiseKeys {
 public:
  // Installs `keys` on this thread until the scope ends (scopes nest).
  explicit ExampleNoiseKeys(std::vector<uint64_t> keys);
  ~ExampleNoiseKeys();
  ExampleNoiseKeys(const ExampleNoiseKeys&) = delete;
  ExampleNoiseKeys& operator=(const ExampleNoiseKeys&) = delete;

  // The keys of the innermost scope on this thread, or null outside any.
  static const std::vector<uint64_t>* active();

 private:
  std::vector<uint64_t> keys_;
  const std::vector<uint64_t>* previous_;
};

}  // namespace attn
