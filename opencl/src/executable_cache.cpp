#include "weft/opencl/executable_cache.h"

#include <algorithm>

namespace weft::opencl {

ExecutableCache::Kept ExecutableCache::keep(const Entry& entry,
                                            const std::shared_ptr<Executable>& executable) {
  if (!entry.reusable) return {};
  return recent_.put(executable.get(), executable);
}

std::shared_ptr<Executable> ExecutableCache::find(const std::string& key) {
  Kept released;  // destroyed after the lock: an executable's callbacks may compile again
  std::lock_guard lock(mutex_);
  auto found = entries_.find(key);
  if (found == entries_.end()) return nullptr;
  std::shared_ptr<Executable> executable = found->second.executable.lock();
  if (!executable) {
    entries_.erase(found);
    return nullptr;
  }
  released = keep(found->second, executable);
  return executable;
}

std::shared_ptr<Executable> ExecutableCache::insert(std::string key,
                                                    std::shared_ptr<Executable> executable,
                                                    bool reusable) {
  Kept released;
  std::lock_guard lock(mutex_);
  Entry& entry = entries_[std::move(key)];
  if (std::shared_ptr<Executable> first = entry.executable.lock()) {
    released = keep(entry, first);
    return first;
  }
  entry = {executable, reusable};
  released = keep(entry, executable);
  if (entries_.size() >= sweep_at_) sweep();
  return executable;
}

void ExecutableCache::sweep() {
  std::erase_if(entries_, [](const auto& item) { return item.second.executable.expired(); });
  sweep_at_ = std::max(2 * recent_.capacity(), 2 * entries_.size());
}

void ExecutableCache::clear() {
  Kept released;
  std::lock_guard lock(mutex_);
  entries_.clear();
  released = recent_.clear();
}

std::size_t ExecutableCache::kept() const {
  std::lock_guard lock(mutex_);
  return recent_.size();
}

}  // namespace weft::opencl
