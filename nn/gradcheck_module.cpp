#include "attn/nn/gradcheck_module.h"

#include "attn/engine/error.h"

namespace attn {

ModuleGradcheckResult gradcheck_module(const Module& module, const std::function<Tensor()>& fn,
                                       const ModuleGradcheckOptions& options) {
  ModuleGradcheckResult out;
  std::vector<Tensor> inputs;
  std::vector<std::string> labels;
  for (const auto& [name, p] : module.named_parameters()) {
    if (options.skip && options.skip(name, p)) {
      out.skipped.push_back(name);
      continue;
    }
    inputs.push_back(p);
    labels.push_back("parameter '" + name + "'");
    out.names.push_back(name);
  }
  // The parameters are the module's own tensors: fn reads them where the
  // check perturbs them, so it needs no arguments.
  out.result = gradcheck([&fn](const std::vector<Tensor>&) { return fn(); }, inputs, options.check, labels);
  return out;
}

}  // namespace attn
