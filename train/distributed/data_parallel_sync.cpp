#include "attn/train/distributed/data_parallel_sync.h"

#include "attn/util/error.h"

namespace attn {

void DataParallelSync::set_sparse_rows(const Tensor& table, const std::vector<int64_t>& rows) {
  ATTN_CHECK(!table.defined() || table.dim() == 2, "gradient sync", "the sparse table must be a matrix, got ",
             table.dim(), " dimensions");
  for (size_t i = 0; i < rows.size(); ++i)
    ATTN_CHECK(rows[i] >= 0 && rows[i] < table.size(0) && (i == 0 || rows[i] > rows[i - 1]), "gradient sync",
               "sparse row ", rows[i], " is out of range 0..", table.size(0) - 1, " or not sorted and distinct");
  sparse_table_ = table;
  sparse_rows_ = rows;
}

int64_t exchanged_count(const Tensor& param, const std::vector<int64_t>* rows) {
  return rows ? static_cast<int64_t>(rows->size()) * (param.numel() / param.size(0)) : param.numel();
}

int64_t bytes_sent_to_sum(int64_t values, int processes, int64_t bytes_per_value) {
  if (processes <= 1) return 0;
  // Phase 1 sends every chunk but one's own; phase 2 sends the own chunk to
  // every other process: 2 (N-1)/N of the values.
  return 2 * (processes - 1) * values / processes * bytes_per_value;
}

}  // namespace attn
