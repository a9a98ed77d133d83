#include "base/log_sink.h"

#include <mutex>
#include <string_view>

#include "base/process_mutex.h"
#include "base/words.h"

namespace mibz2::base {
namespace {

// One for every EscapingSink (a process has one logger): held only while a message is written.
ProcessMutex& sink_mutex() {
  static ProcessMutex* const mu = new ProcessMutex;
  return *mu;
}
// Made at load, before any thread (as buffer_memory.cc's free list, and for the same reason).
[[maybe_unused]] ProcessMutex& g_made_at_load = sink_mutex();

}  // namespace

void EscapingSink::log(const spdlog::details::log_msg& msg) {
  const std::string text = base::escape_for_log(std::string_view(msg.payload.data(), msg.payload.size()));
  spdlog::details::log_msg escaped = msg;  // the same time, level, thread and source location
  escaped.payload = spdlog::string_view_t(text.data(), text.size());
  std::lock_guard lk(sink_mutex());
  inner_->log(escaped);
}

void EscapingSink::flush() {
  std::lock_guard lk(sink_mutex());
  inner_->flush();
}

void EscapingSink::set_pattern(const std::string& pattern) {
  std::lock_guard lk(sink_mutex());
  inner_->set_pattern(pattern);
}

void EscapingSink::set_formatter(std::unique_ptr<spdlog::formatter> formatter) {
  std::lock_guard lk(sink_mutex());
  inner_->set_formatter(std::move(formatter));
}

std::shared_ptr<spdlog::logger> escaping_logger(const std::string& name, spdlog::sink_ptr sink) {
  return std::make_shared<spdlog::logger>(name, std::make_shared<EscapingSink>(std::move(sink)));
}

}  // namespace mibz2::base
