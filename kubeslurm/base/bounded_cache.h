// A cache of answers that expire, holding at most so many: the least recently used goes first.
// For state kept per outside caller (access reviews by token, rate limits by peer): a flood of
// distinct callers must cost the operator a bounded amount of memory, and each lookup a
// logarithm, not a scan. Not thread-safe: the caller holds its lock.
#pragma once

#include <cstddef>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace kubeslurm {

template <typename Value, typename TimePoint>
class BoundedCache {
 public:
  explicit BoundedCache(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // The value for `key` unless it expired by `now` (an expired entry is dropped).
  std::optional<Value> get(const std::string& key, TimePoint now) {
    const auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    if (it->second.expires <= now) {
      order_.erase(it->second.position);
      entries_.erase(it);
      return std::nullopt;
    }
    order_.splice(order_.begin(), order_, it->second.position);
    return it->second.value;
  }

  void put(const std::string& key, Value value, TimePoint expires) {
    if (const auto it = entries_.find(key); it != entries_.end()) {
      order_.erase(it->second.position);
      entries_.erase(it);
    }
    while (entries_.size() >= capacity_) {
      entries_.erase(order_.back());
      order_.pop_back();
    }
    order_.push_front(key);
    entries_.emplace(key, Entry{std::move(value), expires, order_.begin()});
  }

  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    Value value;
    TimePoint expires;
    std::list<std::string>::iterator position;
  };
  std::size_t capacity_;
  std::list<std::string> order_;  // most recently used first
  std::map<std::string, Entry> entries_;
};

}  // namespace kubeslurm
