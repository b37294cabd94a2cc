#include "attn/models/attention_trace.h"

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"

namespace attn {

namespace {
thread_local AttentionTrace* attached = nullptr;
}  // namespace

void AttentionTrace::record(const std::string& name, const Tensor& value) {
  NoGrad no_grad;
  const std::string full = prefix_ + name;
  if (!has(full)) order_.push_back(full);
  entries_[full] = value.detach().to(Device::CPU);
}

const Tensor& AttentionTrace::get(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    std::string known;
    for (const auto& entry : entries_) known += (known.empty() ? "" : ", ") + entry.first;
    ATTN_CHECK(false, "attention trace", "nothing was recorded as '", name, "' (recorded: ",
               known.empty() ? "nothing" : known, ")");
  }
  return it->second;
}

AttentionTrace* active_attention_trace() { return attached; }

AttachAttentionTrace::AttachAttentionTrace(AttentionTrace& trace) : previous_(attached) { attached = &trace; }

AttachAttentionTrace::~AttachAttentionTrace() { attached = previous_; }

AttentionTraceScope::AttentionTraceScope(const std::string& part) : trace_(attached) {
  if (!trace_) return;
  previous_size_ = trace_->prefix_.size();
  trace_->prefix_ += part + ".";
}

AttentionTraceScope::~AttentionTraceScope() {
  if (trace_) trace_->prefix_.resize(previous_size_);
}

void trace_attention_value(const std::string& name, const Tensor& value) {
  if (AttentionTrace* trace = attached) trace->record(name, value);
}

}  // namespace attn
