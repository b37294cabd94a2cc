// Base of every layer and model: owns named parameters and child modules, so
// a whole model's parameters have stable hierarchical names
// ("encoder.fw.t2t.w1.weight") for listing, saving and loading.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "attn/engine/tensor.h"

namespace attn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;  // children are held by address
  Module& operator=(const Module&) = delete;

  // Every parameter of this module and its children, depth first, in
  // registration order, named with dotted paths.
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  int64_t parameter_count() const;
  // Parameters and buffers (saved state that is not trained, such as frozen
  // embeddings): what a checkpoint holds.
  std::vector<std::pair<std::string, Tensor>> named_state() const;

  // Moves every parameter and buffer (children included) to `device` in place:
  // each keeps its identity (handles held elsewhere, such as an optimizer's
  // list or a member, see the move), stays a leaf and keeps requires_grad; an
  // accumulated gradient moves too. Returns *this.
  Module& to(Device device);

  // Training mode switches dropout and sampling behaviour; applies to children.
  void set_training(bool training);
  bool training() const { return training_; }

 protected:
  // Registers a leaf parameter (requires_grad is set) and returns it.
  Tensor register_parameter(const std::string& name, Tensor value);
  // Registers saved, untrained state (requires_grad stays false).
  Tensor register_buffer(const std::string& name, Tensor value);
  // Registers a child; the child must live as long as this module (a member).
  void register_module(const std::string& name, Module& child);

 private:
  std::vector<std::pair<std::string, Tensor>> named(bool with_buffers) const;
  void check_new_name(const std::string& name) const;

  std::vector<std::pair<std::string, Tensor>> params_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, Module*>> children_;
  bool training_ = true;
};

}  // namespace attn
