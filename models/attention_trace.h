// An opt-in recorder of attention weights, for `attn explain`: while an
// AttentionTrace is attached (to the calling thread), the encoders write the
// probability tensors of their forward pass into it under dotted names
// ("forward.alignment", "layer0.scale=3.window", "source2token"); with none
// attached, trace_attention() is one pointer test and computes nothing.
// Names get the prefixes of the AttentionTraceScope objects alive at the
// time, so two instances of one block (a forward and a backward DiSA) record
// under different names. Recorded tensors are detached CPU copies.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "attn/engine/autograd.h"
#include "attn/engine/tensor.h"

namespace attn {

class AttentionTrace {
 public:
  // Stores `value` under the current scope prefix + name (replacing an
  // earlier entry of that name).
  void record(const std::string& name, const Tensor& value);
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  // Throws naming the missing entry and the ones that exist.
  const Tensor& get(const std::string& name) const;
  // In the order first recorded.
  const std::vector<std::string>& names() const { return order_; }

 private:
  friend class AttentionTraceScope;
  std::string prefix_;
  std::map<std::string, Tensor> entries_;
  std::vector<std::string> order_;
};

// The trace attached to this thread, or null.
AttentionTrace* active_attention_trace();

// Attaches `trace` to this thread for the object's lifetime (restoring
// whatever was attached before).
class AttachAttentionTrace {
 public:
  explicit AttachAttentionTrace(AttentionTrace& trace);
  ~AttachAttentionTrace();
  AttachAttentionTrace(const AttachAttentionTrace&) = delete;
  AttachAttentionTrace& operator=(const AttachAttentionTrace&) = delete;

 private:
  AttentionTrace* previous_;
};

// Prefixes "part." to the names recorded while it lives (nothing when no
// trace is attached).
class AttentionTraceScope {
 public:
  explicit AttentionTraceScope(const std::string& part);
  ~AttentionTraceScope();
  AttentionTraceScope(const AttentionTraceScope&) = delete;
  AttentionTraceScope& operator=(const AttentionTraceScope&) = delete;

 private:
  AttentionTrace* trace_;
  size_t previous_size_ = 0;
};

// Records compute() under `name` when a trace is attached; compute runs only
// then, without gradient.
void trace_attention_value(const std::string& name, const Tensor& value);
template <class Compute>
void trace_attention(const char* name, Compute&& compute) {
  if (active_attention_trace() == nullptr) return;
  NoGrad no_grad;
  trace_attention_value(name, compute());
}

}  // namespace attn
