// Housekeeping of a run folder when a run starts or resumes after a crash
// or SIGKILL: temporary files of writers that died, and metrics lines that
// were written after the checkpoint the run resumes from.
#pragma once
#include <cstdint>
#include <string>

namespace attn {

// Removes `*.tmp.<pid>` files in `dir` whose writer process no longer exists
// (atomic writes leave them only when killed). A missing folder is fine.
void remove_stale_temporaries(const std::string& dir);

// Rewrites the JSON-lines log `path` (atomically) keeping the lines whose
// "step" is at most `step`, in order; a torn or unparsable line (a write cut
// off by SIGKILL) is dropped too. A missing file is fine.
void keep_metrics_up_to(const std::string& path, int64_t step);

}  // namespace attn
