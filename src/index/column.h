// A column of an index (its block records, its newline counts): either owned, a vector an index
// builder fills, or a view into the bytes of an index file mapped from disk (io/mapped_file.h),
// which every process that opens the same index shares. Read like a const vector; every change
// goes through a named mutator, which first makes a view an owned copy (a test or a build changing
// a loaded index), so that nothing writes into a mapping and no read copies one by accident.
//
// A view's elements live in a file that may change under it (mapped_file.h): a reader copies an
// element before it checks and uses it (`BlockRecord r = index.blocks[i]`), and bounds what it
// computes from it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "base/invariant.h"

namespace mibz2::index {

template <class T>
class Column {
 public:
  Column() = default;
  Column(std::vector<T> owned) : owned_(std::move(owned)) {}  // NOLINT: a vector is a column
  Column(std::initializer_list<T> items) : owned_(items) {}
  // A view of `n` elements at `data`, valid while `keep` lives.
  static Column view(std::shared_ptr<const void> keep, const T* data, size_t n) {
    Column c;
    c.keep_ = std::move(keep);
    c.view_ = data;
    c.view_size_ = n;
    return c;
  }

  bool is_view() const { return keep_ != nullptr; }

  // Reading, as a const vector reads.
  size_t size() const { return keep_ ? view_size_ : owned_.size(); }
  bool empty() const { return size() == 0; }
  const T* data() const { return keep_ ? view_ : owned_.data(); }
  const T& operator[](size_t i) const { return data()[i]; }
  const T& at(size_t i) const {
    MIBZ2_INVARIANT(i < size());
    return data()[i];
  }
  const T& front() const { return data()[0]; }
  const T& back() const { return data()[size() - 1]; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }
  std::span<const T> span() const { return {data(), size()}; }
  bool operator==(const Column& o) const { return std::equal(begin(), end(), o.begin(), o.end()); }

  // Changing: on an owned vector (a view is copied into one first).
  std::vector<T>& mutate() {
    if (keep_) {
      owned_.assign(view_, view_ + view_size_);
      keep_.reset();
      view_ = nullptr;
      view_size_ = 0;
    }
    return owned_;
  }
  T& mutable_at(size_t i) { return mutate()[i]; }
  void push_back(const T& v) { mutate().push_back(v); }
  template <class... A>
  T& emplace_back(A&&... a) { return mutate().emplace_back(std::forward<A>(a)...); }
  void pop_back() { mutate().pop_back(); }
  void resize(size_t n) { mutate().resize(n); }
  void resize(size_t n, const T& v) { mutate().resize(n, v); }
  void reserve(size_t n) { mutate().reserve(n); }
  size_t capacity() const { return keep_ ? view_size_ : owned_.capacity(); }
  void clear() { mutate().clear(); }
  template <class It>
  void assign(It first, It last) { mutate().assign(first, last); }
  void assign(size_t n, const T& v) { mutate().assign(n, v); }

 private:
  std::vector<T> owned_;               // when not a view
  std::shared_ptr<const void> keep_;   // a view: what keeps its bytes mapped
  const T* view_ = nullptr;
  size_t view_size_ = 0;
};

}  // namespace mibz2::index
