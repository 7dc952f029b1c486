// SPDX-License-Identifier: MIT
#include "sampler/ring_buffer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <iterator>
#include <thread>
#include <vector>

namespace gpumon {
namespace {

using std::chrono::seconds;

struct Item {
  int value = 0;
  std::chrono::steady_clock::time_point mono_time{};
};

Item item(int v) {
  return {v, std::chrono::steady_clock::time_point(seconds(v))};
}
std::chrono::steady_clock::time_point at(int s) {
  return std::chrono::steady_clock::time_point(seconds(s));
}

std::vector<int> values(const std::vector<Item>& items) {
  std::vector<int> v;
  for (const Item& i : items) v.push_back(i.value);
  return v;
}

std::vector<int> range(int from, int to) {  // [from, to)
  std::vector<int> v;
  for (int i = from; i < to; ++i) v.push_back(i);
  return v;
}

static_assert(std::random_access_iterator<detail::RingStorage<Item>::const_iterator>);

TEST(RingBuffer, ZeroCapacityIsRejected) {
  EXPECT_THROW(RingBuffer<Item>(0), std::invalid_argument);
}

TEST(RingBuffer, Empty) {
  RingBuffer<Item> r(4);
  EXPECT_EQ(r.size(), 0U);
  EXPECT_EQ(r.capacity(), 4U);
  EXPECT_TRUE(r.latest(3).empty());
  EXPECT_TRUE(r.latest(0).empty());
  EXPECT_TRUE(r.slice(at(0), at(100)).empty());
  EXPECT_EQ(r.total_pushed(), 0U);
}

TEST(RingBuffer, OneElement) {
  RingBuffer<Item> r(4);
  EXPECT_EQ(r.push(item(7)).value, 0);  // nothing evicted: a default element comes back
  EXPECT_EQ(values(r.latest(1)), std::vector<int>{7});
  EXPECT_EQ(values(r.latest(10)), std::vector<int>{7});
  EXPECT_TRUE(r.latest(0).empty());
  EXPECT_EQ(values(r.slice(at(7), at(8))), std::vector<int>{7});
  EXPECT_TRUE(r.slice(at(6), at(7)).empty());  // `to` is excluded
  EXPECT_TRUE(r.slice(at(8), at(9)).empty());
}

TEST(RingBuffer, CapacityOne) {
  RingBuffer<Item> r(1);
  for (int i = 1; i <= 5; ++i) {
    const Item evicted = r.push(item(i));
    EXPECT_EQ(evicted.value, i - 1);
    EXPECT_EQ(values(r.latest(5)), std::vector<int>{i});
  }
}

TEST(RingBuffer, FullThenEvictsOldestFirst) {
  RingBuffer<Item> r(4);
  for (int i = 1; i <= 4; ++i) r.push(item(i));
  EXPECT_EQ(r.size(), 4U);
  EXPECT_EQ(values(r.latest(4)), range(1, 5));
  EXPECT_EQ(r.push(item(5)).value, 1);
  EXPECT_EQ(values(r.latest(4)), range(2, 6));
  EXPECT_EQ(values(r.latest(2)), range(4, 6));
  EXPECT_EQ(r.size(), 4U);
}

TEST(RingBuffer, WrapsManyTimesAtEveryFillLevel) {
  for (std::size_t cap : {1U, 2U, 3U, 7U, 16U}) {
    RingBuffer<Item> r(cap);
    const int total = static_cast<int>(cap) * 10 + 3;
    for (int i = 0; i < total; ++i) {
      r.push(item(i));
      const int kept = std::min<int>(i + 1, static_cast<int>(cap));
      for (std::size_t n : {std::size_t{0}, std::size_t{1}, cap / 2, cap, cap + 5}) {
        const int want = std::min<int>(static_cast<int>(n), kept);
        ASSERT_EQ(values(r.latest(n)), range(i + 1 - want, i + 1)) << "cap " << cap << " i " << i;
      }
    }
    EXPECT_EQ(r.total_pushed(), static_cast<std::uint64_t>(total));
  }
}

TEST(RingBuffer, SlicesAtTheEdges) {
  RingBuffer<Item> r(5);
  for (int i = 0; i < 13; ++i) r.push(item(i));  // keeps 8..12, wrapped
  EXPECT_EQ(values(r.slice(at(0), at(100))), range(8, 13));
  EXPECT_EQ(values(r.slice(at(8), at(13))), range(8, 13));
  EXPECT_EQ(values(r.slice(at(8), at(12))), range(8, 12));
  EXPECT_EQ(values(r.slice(at(9), at(13))), range(9, 13));
  EXPECT_EQ(values(r.slice(at(12), at(13))), range(12, 13));
  EXPECT_EQ(values(r.slice(at(10), at(11))), range(10, 11));
  EXPECT_TRUE(r.slice(at(0), at(8)).empty());  // before the oldest kept
  EXPECT_TRUE(r.slice(at(13), at(20)).empty());
  EXPECT_TRUE(r.slice(at(11), at(11)).empty());  // empty and reversed windows
  EXPECT_TRUE(r.slice(at(12), at(9)).empty());
}

TEST(RingBuffer, SliceKeepsEqualTimes) {
  RingBuffer<Item> r(6);
  for (int v : {1, 2, 3}) r.push({v, at(5)});
  r.push({4, at(6)});
  EXPECT_EQ(values(r.slice(at(5), at(6))), range(1, 4));
  EXPECT_EQ(values(r.slice(at(6), at(7))), std::vector<int>{4});
}

TEST(RingBufferStorage, IteratorArithmeticBothWays) {
  detail::RingStorage<Item> s(5);
  for (int i = 0; i < 8; ++i) s.push(item(i));  // 3..7, wrapped around the end of the slots
  auto b = s.begin();
  auto e = s.end();
  EXPECT_EQ(e - b, 5);
  EXPECT_EQ(b - e, -5);  // the sign dynolog's iterator got wrong
  EXPECT_EQ(std::distance(b, e), 5);
  EXPECT_EQ(std::distance(e, b), -5);
  EXPECT_EQ((b + 4)->value, 7);
  EXPECT_EQ((4 + b)->value, 7);
  EXPECT_EQ((e - 1)->value, 7);
  EXPECT_EQ((e - 5)->value, 3);
  EXPECT_EQ(b[2].value, 5);
  EXPECT_EQ((e + -2)->value, 6);
  EXPECT_EQ((b - -1)->value, 4);
  auto it = b;
  it += 3;
  EXPECT_EQ(it->value, 6);
  it -= 2;
  EXPECT_EQ(it->value, 4);
  EXPECT_EQ((it++)->value, 4);
  EXPECT_EQ((it--)->value, 5);
  EXPECT_EQ((--it)->value, 3);
  EXPECT_EQ(it, b);
  EXPECT_LT(b, e);
  EXPECT_GT(e, b + 4);
  EXPECT_LE(b + 5, e);
  std::vector<int> backwards;
  for (auto r = std::make_reverse_iterator(e); r != std::make_reverse_iterator(b); ++r) {
    backwards.push_back(r->value);
  }
  EXPECT_EQ(backwards, (std::vector<int>{7, 6, 5, 4, 3}));
}

TEST(RingBuffer, MemoryStaysBoundedByCapacity) {
  struct Heavy {
    std::vector<int> data;
    std::chrono::steady_clock::time_point mono_time{};
  };
  RingBuffer<Heavy> r(3);
  std::size_t evicted_with_data = 0;
  for (int i = 0; i < 1000; ++i) {
    Heavy h{std::vector<int>(100, i), at(i)};
    if (!r.push(std::move(h)).data.empty()) ++evicted_with_data;
  }
  EXPECT_EQ(r.size(), 3U);
  EXPECT_EQ(evicted_with_data, 997U);  // every element beyond capacity came back to the writer
}

// Meant for ThreadSanitizer: one writer, three readers, each read checked for order.
TEST(RingBuffer, ConcurrentWriterAndReaders) {
  RingBuffer<Item> r(64);
  constexpr int kItems = 20000;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int k = 0; k < 3; ++k) {
    readers.emplace_back([&, k] {
      while (!done.load()) {
        const std::vector<Item> got = k == 0 ? r.latest(16) : r.slice(at(0), at(kItems + 1));
        for (std::size_t i = 1; i < got.size(); ++i) {
          if (got[i].value != got[i - 1].value + 1) bad.fetch_add(1);
        }
        if (got.size() > 64) bad.fetch_add(1);
      }
    });
  }
  for (int i = 0; i < kItems; ++i) r.push(item(i));
  done.store(true);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(values(r.latest(2)), range(kItems - 2, kItems));
}

}  // namespace
}  // namespace gpumon
