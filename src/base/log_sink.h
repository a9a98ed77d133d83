// The programs' loggers: every message, whatever sink it goes to (syslog, stderr), has its control
// characters escaped (escape_for_log) on its way there. Messages name files of SOURCE, whose names
// anyone who can write there chooses: a name with a newline must not forge a log line of its own,
// nor an ESC drive the terminal of whoever reads the log. One wrapper around the sinks does it for
// every message, so that no message has to remember to.
#pragma once

#include <memory>
#include <string>

#include <spdlog/logger.h>
#include <spdlog/sinks/sink.h>

namespace mibz2::base {

// Hands each message to `inner` with its text (the payload; the pattern's own fields are ours)
// escaped. Thread-safe, and safe across fork(): every call into `inner` is made under one
// base::ProcessMutex, so that the inner sink's own lock (an _mt sink's) is never held when the
// process forks, and a child that logs does not wait for ever on a lock a parent's thread held.
class EscapingSink final : public spdlog::sinks::sink {
 public:
  explicit EscapingSink(spdlog::sink_ptr inner) : inner_(std::move(inner)) {}
  void log(const spdlog::details::log_msg& msg) override;
  void flush() override;
  void set_pattern(const std::string& pattern) override;
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override;

 private:
  const spdlog::sink_ptr inner_;
};

// A logger named `name` writing to `sink` through an EscapingSink.
std::shared_ptr<spdlog::logger> escaping_logger(const std::string& name, spdlog::sink_ptr sink);

}  // namespace mibz2::base
