// The process's memory, as the kernel counts it.
//
// residentBytes: the process's resident set in bytes, after malloc_trim: memory freed since (parse
// buffers, a dropped copy) is given back first, so a difference of two readings is what was kept.
#pragma once

#include <cstdint>
#include <fstream>

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

namespace kubeslurm::bench {

inline std::int64_t residentBytes() {
  ::malloc_trim(0);
  std::ifstream statm("/proc/self/statm");
  std::int64_t pages = 0;
  std::int64_t resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

// Page faults the process has taken that needed no I/O: memory it touched for the first time
// since it was mapped (or since the allocator gave it back).
inline std::int64_t minorFaults() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

}  // namespace kubeslurm::bench
