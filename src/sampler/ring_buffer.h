// SPDX-License-Identifier: MIT
// RingBuffer<T>: the live history. A fixed number of slots allocated at construction, one
// writer that overwrites the oldest element when full, and readers that copy out the newest
// n elements or a time slice. Memory is capacity * sizeof(T) (plus what the elements own)
// however long the run lasts.
//
// Elements carry a monotonic time (TimeOf<T>, by default the member `mono_time`) and are
// pushed in non-decreasing time order; slice() relies on it.
//
// Thread-safety: RingBuffer is safe for one writer and any number of readers at once (a
// shared mutex; the writer holds it only to swap one element in). detail::RingStorage, with
// the iterators, is not thread-safe: it is the unguarded core, used under RingBuffer's lock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace gpumon {

/// The time an element was taken, for slice(): `element.mono_time` unless specialised.
template <typename T>
struct TimeOf {
  auto operator()(const T& element) const { return element.mono_time; }
};

namespace detail {

template <typename T>
class RingStorage {
 public:
  /// Random-access iterator over the stored elements, oldest first.
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using iterator_concept = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;

    const_iterator() = default;
    const_iterator(const RingStorage* ring, difference_type pos) : ring_(ring), pos_(pos) {}

    reference operator*() const { return ring_->at(static_cast<std::size_t>(pos_)); }
    pointer operator->() const { return &**this; }
    reference operator[](difference_type n) const { return *(*this + n); }
    const_iterator& operator++() { return *this += 1; }
    const_iterator& operator--() { return *this -= 1; }
    const_iterator operator++(int) { return std::exchange(*this, *this + 1); }
    const_iterator operator--(int) { return std::exchange(*this, *this - 1); }
    const_iterator& operator+=(difference_type n) {
      pos_ += n;
      return *this;
    }
    const_iterator& operator-=(difference_type n) {
      pos_ -= n;
      return *this;
    }
    friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
    friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
    friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
    /// Distance in logical positions (oldest = 0): b - a > 0 when b is newer than a.
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return a.pos_ - b.pos_;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.pos_ == b.pos_;
    }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) {
      return a.pos_ <=> b.pos_;
    }

   private:
    const RingStorage* ring_ = nullptr;
    difference_type pos_ = 0;  // logical: 0 is the oldest element
  };

  explicit RingStorage(std::size_t capacity) : slots_(capacity) {
    if (capacity == 0) throw std::invalid_argument("ring buffer capacity must be at least 1");
  }

  std::size_t capacity() const { return slots_.size(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  /// Element `i` counted from the oldest (i < size()).
  const T& at(std::size_t i) const { return slots_[(start() + i) % slots_.size()]; }

  /// Stores `value` as the newest element and returns what it replaced (the evicted oldest
  /// element when full, a default T otherwise), so a writer can reuse its allocations.
  T push(T value) {
    using std::swap;
    swap(slots_[head_], value);
    head_ = (head_ + 1) % slots_.size();
    if (size_ < slots_.size()) {
      ++size_;
      value = T{};
    }
    return value;
  }

  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, static_cast<std::ptrdiff_t>(size_)}; }

 private:
  std::size_t start() const { return (head_ + slots_.size() - size_) % slots_.size(); }

  std::vector<T> slots_;
  std::size_t head_ = 0;  // the slot the next push writes
  std::size_t size_ = 0;
};

}  // namespace detail

template <typename T, typename Time = TimeOf<T>>
class RingBuffer {
 public:
  /// Allocates `capacity` (>= 1) default-constructed slots now.
  explicit RingBuffer(std::size_t capacity) : ring_(capacity) {}

  std::size_t capacity() const { return ring_.capacity(); }
  std::size_t size() const {
    std::shared_lock lock(mutex_);
    return ring_.size();
  }
  /// Elements pushed since construction (the evicted ones included).
  std::uint64_t total_pushed() const {
    std::shared_lock lock(mutex_);
    return pushed_;
  }

  /// Writer only. Returns the element it replaced (see RingStorage::push).
  T push(T value) {
    std::unique_lock lock(mutex_);
    ++pushed_;
    return ring_.push(std::move(value));
  }

  /// Copies of the newest min(n, size()) elements, oldest first.
  std::vector<T> latest(std::size_t n) const {
    std::shared_lock lock(mutex_);
    const auto take = static_cast<std::ptrdiff_t>(std::min(n, ring_.size()));
    return std::vector<T>(ring_.end() - take, ring_.end());
  }

  /// Copies of the elements with from <= time < to, oldest first.
  template <typename TimePoint>
  std::vector<T> slice(TimePoint from, TimePoint to) const {
    std::shared_lock lock(mutex_);
    if (!(from < to)) return {};
    const Time time_of;
    auto first = std::partition_point(ring_.begin(), ring_.end(),
                                      [&](const T& e) { return time_of(e) < from; });
    auto last =
        std::partition_point(first, ring_.end(), [&](const T& e) { return time_of(e) < to; });
    return std::vector<T>(first, last);
  }

 private:
  mutable std::shared_mutex mutex_;
  detail::RingStorage<T> ring_;
  std::uint64_t pushed_ = 0;
};

}  // namespace gpumon
