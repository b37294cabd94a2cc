// The processes of a data-parallel run, as the training loop needs them: who
// am I, how many are we, and three collective operations. Every process calls
// each collective the same number of times in the same order; the loop is
// written so that it does (docs/distributed.md, "What is exchanged when").
//
// Sums are taken in rank order (rank 0's value + rank 1's + ...), on every
// process, so the result has the same bits everywhere and does not depend on
// how the transport combines messages: the weights of every process stay
// bitwise equal, and a run is reproducible for a given number of processes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Replaces values[i] by the sum over ranks of values[i], added in rank
  // order. Every rank passes the same length.
  virtual void sum_in_rank_order(std::vector<double>& values, const char* what) = 0;
  // The same for float32 values: added in float64 in rank order, then
  // rounded once to float32, so the result is the float64 sum's rounding
  // (what a float32 parameter would get from the float64 sum) at half the
  // bytes on the wire.
  virtual void sum_in_rank_order(std::vector<float>& values, const char* what) = 0;
  // Every rank's `value`, indexed by rank.
  virtual std::vector<uint64_t> gather_to_all(uint64_t value, const char* what) = 0;
  // Rank `root`'s bytes, copied into every rank's `data`.
  virtual void broadcast(void* data, size_t bytes, int root, const char* what) = 0;
  // Ends every process of the run after `message` was printed here (the
  // other processes are stopped by the transport, never left waiting).
  [[noreturn]] virtual void abort_all(const std::string& message) = 0;
  // What the launcher and transport are, for the log ("Open MPI 4.1.4, 2 processes").
  virtual std::string describe() const = 0;

  bool writes_run_folder() const { return rank() == 0; }
};

// One process: every collective is the identity.
class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void sum_in_rank_order(std::vector<double>&, const char*) override {}
  void sum_in_rank_order(std::vector<float>&, const char*) override {}
  std::vector<uint64_t> gather_to_all(uint64_t value, const char*) override { return {value}; }
  void broadcast(void*, size_t, int, const char*) override {}
  [[noreturn]] void abort_all(const std::string& message) override;
  std::string describe() const override { return "one process"; }
};

// The communicator of this process: MPI's when the program was started by an
// MPI launcher (mpirun sets OMPI_COMM_WORLD_SIZE / PMIX_RANK / PMI_SIZE) and
// was built with MPI, one process otherwise. Started by a launcher but built
// without MPI is an error: each process would train alone on the whole data.
// `timeout_seconds` bounds how long a collective waits for the other
// processes before the run is stopped (a dead or stuck process).
std::unique_ptr<Communicator> make_communicator(double timeout_seconds);

// Whether an MPI launcher started this process (its environment says so).
bool started_by_mpi_launcher();
// Whether this program was built with MPI.
bool built_with_mpi();

}  // namespace attn
