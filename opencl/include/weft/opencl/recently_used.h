// A fixed number of values, the most recently used ones: how a device bounds what it keeps of
// the programs it has compiled, so a process that keeps making new programs (new jit objects,
// eager ops on new constants) does not grow without bound. Not thread-safe: its owner locks.
#pragma once

#include <cstddef>
#include <list>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace weft::opencl {

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class RecentlyUsed {
 public:
  explicit RecentlyUsed(std::size_t capacity) : capacity_(capacity) {}
  RecentlyUsed(const RecentlyUsed&) = delete;
  RecentlyUsed& operator=(const RecentlyUsed&) = delete;

  // The value under `key`, now the most recently used; nullopt when there is none.
  std::optional<Value> find(const Key& key) {
    auto found = entries_.find(key);
    if (found == entries_.end()) return std::nullopt;
    order_.splice(order_.begin(), order_, found->second.position);
    return found->second.value;
  }

  // Keeps `value` under `key` (replacing what was there) as the most recently used, and returns
  // the values that no longer fit: the caller releases them, outside its lock when releasing
  // one may run code that locks again.
  std::vector<Value> put(Key key, Value value) {
    std::vector<Value> evicted;
    auto [entry, inserted] = entries_.try_emplace(std::move(key));
    if (inserted) {
      order_.push_front(&entry->first);
    } else {
      evicted.push_back(std::move(entry->second.value));
      order_.splice(order_.begin(), order_, entry->second.position);
    }
    entry->second.value = std::move(value);
    entry->second.position = order_.begin();
    while (order_.size() > capacity_) {
      auto oldest = entries_.find(*order_.back());
      evicted.push_back(std::move(oldest->second.value));
      order_.pop_back();
      entries_.erase(oldest);
    }
    return evicted;
  }

  // Forgets every value and returns them.
  std::vector<Value> clear() {
    std::vector<Value> values;
    values.reserve(entries_.size());
    for (auto& [key, entry] : entries_) values.push_back(std::move(entry.value));
    entries_.clear();
    order_.clear();
    return values;
  }

  std::size_t size() const { return entries_.size(); }
  std::size_t capacity() const { return capacity_; }

 private:
  using Order = std::list<const Key*>;  // most recent first; keys live in entries_
  struct Entry {
    Value value{};
    typename Order::iterator position;
  };
  std::size_t capacity_;
  std::unordered_map<Key, Entry, Hash> entries_;  // nodes are stable: Order points into them
  Order order_;
};

}  // namespace weft::opencl
