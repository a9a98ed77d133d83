// Messages about a condition that is met again and again (an index file that is not believed is
// found at every load of its file) are logged the first time only: first() says whether a key was
// never seen. Bounded: past kMaxKeys it forgets them all and starts again (a few repeats, never
// unbounded memory from a directory of many such files).
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_set>

namespace mibz2 {

class ReportOnce {
 public:
  static constexpr size_t kMaxKeys = 4096;

  bool first(const std::string& key) {
    std::lock_guard lk(mu_);
    if (seen_.count(key)) return false;
    if (seen_.size() >= kMaxKeys) seen_.clear();
    seen_.insert(key);
    return true;
  }

 private:
  std::mutex mu_;  // a leaf lock
  std::unordered_set<std::string> seen_;  // guarded by mu_
};

}  // namespace mibz2
