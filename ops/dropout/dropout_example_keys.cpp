#include "attn/ops/dropout/dropout_example_keys.h"

#include <utility>

namespace attn {

namespace {
thread_local const std::vector<uint64_t>* t_active_keys = nullptr;
}  // namespace

ExampleNoiseKeys::ExampleNoiseKeys(std::vector<uint64_t> keys) : keys_(std::move(keys)), previous_(t_active_keys) {
  t_active_keys = &keys_;
}

ExampleNoiseKeys::~ExampleNoiseKeys() { t_active_keys = previous_; }

const std::vector<uint64_t>* ExampleNoiseKeys::active() { return t_active_keys; }

}  // namespace attn
