// Anomaly detection (PyTorch's detect_anomaly is the model): while an
// AnomalyDetector is alive, every kernel's tensor arguments are checked after
// the call, and the first kernel that writes a non-finite value stops the
// program with an AnomalyError naming the kernel, its arguments' shapes and,
// inside a backward pass, the forward op whose backward was running.
//
// A NaN is always an anomaly. An infinity is one only when the kernel made it
// from finite arguments (an overflow): the models place -inf on purpose
// (a fill for masked maxima, logsumexp's shift) and ops pass it on until a
// select removes it. Values already non-finite before the call and left unchanged
// (a NaN at a padded input position that a select drops) are not reported.
// Off unless installed; costs nothing then (kernel_table.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attn/engine/error.h"
#include "attn/engine/kernel_table.h"

namespace attn {

class AnomalyError : public Error {
 public:
  using Error::Error;
};

class AnomalyDetector : public KernelObserver {
 public:
  AnomalyDetector();  // installs itself
  ~AnomalyDetector() override;  // restores the previous observer
  AnomalyDetector(const AnomalyDetector&) = delete;
  AnomalyDetector& operator=(const AnomalyDetector&) = delete;

  void before(const char* op, Device device) override;
  void after(const char* op, Device device) override;
  void inspect_before(const char* op, Device device, KernelTensors args) override;
  void inspect_after(const char* op, Device device, KernelTensors args) override;

  int64_t kernels_checked() const { return checked_; }

 private:
  KernelObserver* previous_;
  int depth_ = 0;  // > 0 while the detector's own copies run kernels
  int64_t checked_ = 0;
  std::vector<std::vector<double>> before_values_;  // per argument: values when non-finite before the call
  std::vector<bool> had_nonfinite_;
};

}  // namespace attn
