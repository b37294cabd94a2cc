// The MPI communicator (built when CMake found MPI: ATTN_WITH_MPI). Every
// collective is non-blocking and polled against a deadline, so a process
// whose partner died or hangs stops the whole run with a message instead of
// waiting forever.
#include "attn/train/distributed/communicator.h"

#ifdef ATTN_WITH_MPI
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "attn/util/error.h"

namespace attn {

namespace {

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(double timeout_seconds) : timeout_seconds_(timeout_seconds) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      int provided = 0;
      // Only the main thread calls MPI; the kernels' OpenMP threads never do.
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      owns_mpi_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  // Finalised only on the way out of a run that ended normally: a process
  // leaving with an error calls abort_all, so the launcher stops the rest.
  ~MpiCommunicator() override {
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (owns_mpi_ && !finalised) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // Rank r sums chunk r of every rank's vector in rank order, then every
  // rank gathers the summed chunks: each rank sends about 2 (N-1)/N of the
  // vector's bytes, as a ring all-reduce does, and the order of the
  // additions is fixed.
  void sum_in_rank_order(std::vector<double>& values, const char* what) override {
    sum_chunks(values, MPI_DOUBLE, what);
  }
  void sum_in_rank_order(std::vector<float>& values, const char* what) override {
    sum_chunks(values, MPI_FLOAT, what);
  }

  std::vector<uint64_t> gather_to_all(uint64_t value, const char* what) override {
    std::vector<uint64_t> all(size_);
    MPI_Request request;
    MPI_Iallgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD, &request);
    wait(request, what);
    return all;
  }

  void broadcast(void* data, size_t bytes, int root, const char* what) override {
    auto* p = static_cast<char*>(data);
    // MPI counts are int: large buffers go in pieces.
    for (size_t done = 0; done < bytes;) {
      const int piece = static_cast<int>(std::min<size_t>(bytes - done, size_t{1} << 30));
      MPI_Request request;
      MPI_Ibcast(p + done, piece, MPI_BYTE, root, MPI_COMM_WORLD, &request);
      wait(request, what);
      done += static_cast<size_t>(piece);
    }
  }

  [[noreturn]] void abort_all(const std::string& message) override {
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  }

  std::string describe() const override {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    std::string library(version, static_cast<size_t>(length));
    library = library.substr(0, library.find_first_of(",\n"));
    return library + ", " + std::to_string(size_) + " processes";
  }

 private:
  // The two phases of sum_in_rank_order for values of type T (float64
  // accumulation, one rounding to T).
  template <class T>
  void sum_chunks(std::vector<T>& values, MPI_Datatype type, const char* what) {
    if (size_ == 1) return;
    const int64_t n = static_cast<int64_t>(values.size());
    std::vector<int> counts(size_), offsets(size_);
    for (int r = 0; r < size_; ++r) {
      const int64_t begin = n * r / size_, end = n * (r + 1) / size_;
      ATTN_CHECK(end - begin <= INT32_MAX, "distributed", "a chunk of ", end - begin,
                 " values is too many for one MPI message");
      offsets[r] = static_cast<int>(begin);
      counts[r] = static_cast<int>(end - begin);
    }
    const int mine = counts[rank_];
    std::vector<T> gathered(static_cast<size_t>(mine) * size_);
    std::vector<int> receive_counts(size_, mine), receive_offsets(size_);
    for (int r = 0; r < size_; ++r) receive_offsets[r] = r * mine;
    MPI_Request request;
    MPI_Ialltoallv(values.data(), counts.data(), offsets.data(), type, gathered.data(), receive_counts.data(),
                   receive_offsets.data(), type, MPI_COMM_WORLD, &request);
    wait(request, what);
    std::vector<T> chunk(static_cast<size_t>(mine));
    for (int i = 0; i < mine; ++i) {
      double sum = static_cast<double>(gathered[static_cast<size_t>(i)]);
      for (int r = 1; r < size_; ++r) sum += static_cast<double>(gathered[static_cast<size_t>(r) * mine + i]);
      chunk[static_cast<size_t>(i)] = static_cast<T>(sum);
    }
    MPI_Iallgatherv(chunk.data(), mine, type, values.data(), counts.data(), offsets.data(), type, MPI_COMM_WORLD,
                    &request);
    wait(request, what);
  }

  // Polls `request` until it completes, sleeping between polls once the
  // first millisecond has passed; past the deadline the run is stopped.
  void wait(MPI_Request& request, const char* what) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    int done = 0;
    for (int64_t polls = 0;; ++polls) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done) return;
      const double waited = std::chrono::duration<double>(Clock::now() - start).count();
      if (waited > timeout_seconds_)
        abort_all("attn (rank " + std::to_string(rank_) + " of " + std::to_string(size_) + "): waited " +
                  std::to_string(static_cast<int64_t>(waited)) + " s for the other processes in '" + what +
                  "' (--sync-timeout " + std::to_string(timeout_seconds_) +
                  "); one has died or is stuck, so the run stops. The run folder keeps its last checkpoint: "
                  "continue with --resume.");
      if (waited > 1e-3) std::this_thread::sleep_for(std::chrono::microseconds(polls < 10000 ? 20 : 500));
    }
  }

  double timeout_seconds_;
  int rank_ = 0, size_ = 1;
  bool owns_mpi_ = false;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(double timeout_seconds) {
  return std::make_unique<MpiCommunicator>(timeout_seconds);
}

bool built_with_mpi() { return true; }

}  // namespace attn

#else

namespace attn {

std::unique_ptr<Communicator> make_mpi_communicator(double) { return nullptr; }
bool built_with_mpi() { return false; }

}  // namespace attn

#endif
