// `attn`: the command-line program. Dispatches to a subcommand; user errors
// become one clear message and a non-zero exit, never a crash.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "attn/engine/error.h"
#include "attn/util/cli_args.h"
#include "attn/util/text.h"
#include "attn/ops/cpu/sgemm_avx512.h"
#include "attn/train/cli/blas_core.h"
#include "attn/train/cli/commands.h"
#include "attn/train/cli/thread_wait_policy.h"

namespace {

void print_usage() {
  std::printf("usage: attn COMMAND [options]\n\nA from-scratch deep learning engine and the self-attention models of\n"
              "MTSA, Bi-BloSAN, the Multi-Scale Transformer and ReSAN.\n\ncommands:\n");
  for (const attn::Command& c : attn::all_commands()) std::printf("  %-14s %s\n", c.name, c.summary);
  std::printf("\n'attn COMMAND --help' or 'attn help COMMAND' describes a command's options;\n"
              "'attn --version' prints the version and build.\n");
#ifdef ATTN_CUDA_EMULATED
  std::printf("\nThis is the emulated CUDA build (ATTN_CUDA=EMULATE): a test harness that runs the CUDA kernels\n"
              "on the CPU, not a GPU backend. --device cuda is refused unless ATTN_CUDA_EMULATE=1 is set.\n");
#endif
}

void print_version() {
  std::printf("attn %s (%s build%s)\n", ATTN_VERSION,
#ifdef ATTN_CUDA_EMULATED
              "emulated CUDA",
#elif defined(ATTN_WITH_CUDA)
              "CUDA",
#else
              "CPU",
#endif
              attn::sgemm_avx512_available() ? ", AVX-512 GEMM on this CPU" : ", OpenBLAS GEMM on this CPU");
}

// The command whose name is nearest to a mistyped one, or null.
const attn::Command* closest_command(const std::string& name) {
  std::vector<std::string> names;
  for (const attn::Command& c : attn::all_commands()) names.push_back(c.name);
  const std::string guess = attn::text::nearest_word(name, names);
  for (const attn::Command& c : attn::all_commands())
    if (!guess.empty() && guess == c.name) return &c;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  // libgomp and OpenBLAS read their variables while they load, before main:
  // defaults for them take a second start of the program. They are set before
  // it, so the new image finds them and starts only once more. If the exec
  // fails, the program goes on with the libraries' own choices.
  const bool passive = attn::prefer_passive_wait_policy();
  const bool blas_core = attn::prefer_openblas_core_over_fallback();
  if (passive || blas_core) execv("/proc/self/exe", argv);
  // Which float32 GEMM the CPU uses (ops/cpu/sgemm_avx512.h): ATTN_SGEMM=openblas
  // keeps OpenBLAS where the engine's AVX-512 kernel would run.
  if (const char* sgemm = std::getenv("ATTN_SGEMM")) {
    try {
      attn::set_cpu_sgemm(attn::cpu_sgemm_from_name(sgemm));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 2;
    }
  }
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  std::string name = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (name == "--version" || name == "version") {
    print_version();
    return 0;
  }
  // `attn help train` is `attn train --help`; `attn help` alone is the usage.
  if (name == "help") {
    if (args.empty()) {
      print_usage();
      return 0;
    }
    name = args[0];
    args = {"--help"};
  }
  for (const attn::Command& c : attn::all_commands()) {
    if (name != c.name) continue;
    try {
      return c.run(args);
    } catch (const attn::UsageError& e) {
      std::fprintf(stderr, "error: %s\n(see 'attn %s --help')\n", e.what(), c.name);
      return 2;
    } catch (const attn::Error& e) {
      // The source location of the failed check is for developers.
      const char* debug = std::getenv("ATTN_DEBUG");
      const bool show_location = debug != nullptr && std::strcmp(debug, "1") == 0;
      std::fprintf(stderr, "error: %s\n", show_location ? e.what() : e.user_message().c_str());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 1;
    }
  }
  const attn::Command* guess = closest_command(name);
  if (guess)
    std::fprintf(stderr, "error: unknown command '%s' (did you mean '%s'? see 'attn --help')\n", name.c_str(),
                 guess->name);
  else
    std::fprintf(stderr, "error: unknown command '%s' (see 'attn --help')\n", name.c_str());
  return 2;
}
