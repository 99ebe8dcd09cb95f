// A list of records shared between the cluster view and each cycle's input.
//
// The view keeps every decoded node, pod and SlurmJob, and a cycle reads all of them. Handing a
// cycle its own copy of each cost as much as decoding them (at 10,000 SlurmJobs, a quarter of a
// second and tens of MB per cycle); a SharedList hands it the view's records instead. Reading is
// as from a vector of const records. Writing one record copies it first when anyone else holds
// it (mutableAt), so a cycle that changes its input never changes the view, and the view never
// changes a record a cycle holds: it replaces it.
//
// A record's address is stable while the list holds it (the list moves pointers, not records),
// so indexes of `const T*` into it survive push_back; mutableAt and replace may move the one
// record they touch.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace kubeslurm::controllers {

// The standard container's names (push_back, const_iterator...), so that range-for, <algorithm>
// and code written for a std::vector read a SharedList as they read a vector.
// NOLINTBEGIN(readability-identifier-naming)
template <typename T>
class SharedList {
  using Slots = std::vector<std::shared_ptr<T>>;

 public:
  using value_type = T;
  using size_type = std::size_t;

  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;

    const_iterator() = default;
    explicit const_iterator(typename Slots::const_iterator at) : at_(at) {}
    reference operator*() const { return **at_; }
    pointer operator->() const { return at_->get(); }
    reference operator[](difference_type n) const { return *at_[n]; }
    const_iterator& operator++() { return ++at_, *this; }
    const_iterator operator++(int) { return const_iterator(at_++); }  // NOLINT(cert-dcl21-cpp)
    const_iterator& operator--() { return --at_, *this; }
    const_iterator operator--(int) { return const_iterator(at_--); }  // NOLINT(cert-dcl21-cpp)
    const_iterator& operator+=(difference_type n) { return at_ += n, *this; }
    const_iterator& operator-=(difference_type n) { return at_ -= n, *this; }
    friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
    friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
    friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return a.at_ - b.at_;
    }
    friend auto operator<=>(const const_iterator&, const const_iterator&) = default;

   private:
    typename Slots::const_iterator at_{};
  };
  using iterator = const_iterator;

  SharedList() = default;
  SharedList(std::initializer_list<T> records) : SharedList(records.begin(), records.end()) {}
  // Copies of a vector's records, for a caller that made its own (a test, a LIST's pods): a
  // function that reads a SharedList reads those too.
  SharedList(const std::vector<T>& records)  // NOLINT(google-explicit-constructor)
      : SharedList(records.begin(), records.end()) {}
  template <typename It>
  SharedList(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }

  // A record of its own.
  void push_back(T record) { slots_.push_back(std::make_shared<T>(std::move(record))); }
  // A record shared with whoever else holds `record` (the view).
  void push_back(std::shared_ptr<T> record) { slots_.push_back(std::move(record)); }

  // A new record at `i`; whoever held the old one keeps it.
  void replace(size_type i, T record) { slots_[i] = std::make_shared<T>(std::move(record)); }
  // The record at `i`, copied first if anyone else holds it.
  T& mutableAt(size_type i) {
    std::shared_ptr<T>& slot = slots_[i];
    if (slot.use_count() > 1) slot = std::make_shared<T>(*slot);
    return *slot;
  }

  const T& operator[](size_type i) const { return *slots_[i]; }
  // The record at `i` for a holder that keeps it past this list (another thread): nobody changes
  // it while it is shared, since mutableAt copies a record someone else holds.
  std::shared_ptr<const T> shared(size_type i) const { return slots_[i]; }
  const T& front() const { return *slots_.front(); }
  const T& back() const { return *slots_.back(); }
  size_type size() const { return slots_.size(); }
  bool empty() const { return slots_.empty(); }
  void reserve(size_type n) { slots_.reserve(n); }
  void clear() { slots_.clear(); }
  // Drops the records `drop` is true of (whoever else holds one keeps it).
  template <typename Predicate>
  void eraseIf(Predicate drop) {
    std::erase_if(slots_, [&drop](const std::shared_ptr<T>& slot) { return drop(*slot); });
  }
  const_iterator begin() const { return const_iterator(slots_.begin()); }
  const_iterator end() const { return const_iterator(slots_.end()); }

 private:
  Slots slots_;
};
// NOLINTEND(readability-identifier-naming)

}  // namespace kubeslurm::controllers
