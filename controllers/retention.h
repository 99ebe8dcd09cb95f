// Which finished jobs retention deletes (--job-retention). PURE: the caller says what `now` is
// and which runs have their ended record committed; the Reconciler deletes what this returns.
//
// A finished job goes once its end is `retention` seconds old and the accounting store holds its
// ended record (with no store, at once): the record must outlive the object, so that sacct finds
// every job a month on. An array's record goes with its tasks (they are deleted with it, by
// owner reference): it waits until every task's record is committed too. A task is never
// deleted on its own: sacct lists an array's tasks together.
#pragma once

#include <functional>
#include <vector>

#include "controllers/shared_list.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/core/model.h"

namespace kubeslurm::controllers {

// Whether the ended record of the job's current run is committed
// (AccountingWriter::endedRecordWritten); empty: no store, every record counts as kept.
using EndedRecordWritten = std::function<bool(const api::SlurmJobObject&)>;

// The jobs of `jobs` to delete at `now`, in their order; none when `retention` <= 0 (kept for
// good).
std::vector<const api::SlurmJobObject*> expiredJobs(const SharedList<api::SlurmJobObject>& jobs,
                                                    core::Time now, core::Duration retention,
                                                    const EndedRecordWritten& recorded);

}  // namespace kubeslurm::controllers
