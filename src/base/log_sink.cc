#include "base/log_sink.h"

#include <string_view>

#include "base/words.h"

namespace mibz2::base {

void EscapingSink::log(const spdlog::details::log_msg& msg) {
  const std::string text = base::escape_for_log(std::string_view(msg.payload.data(), msg.payload.size()));
  spdlog::details::log_msg escaped = msg;  // the same time, level, thread and source location
  escaped.payload = spdlog::string_view_t(text.data(), text.size());
  inner_->log(escaped);
}

std::shared_ptr<spdlog::logger> escaping_logger(const std::string& name, spdlog::sink_ptr sink) {
  return std::make_shared<spdlog::logger>(name, std::make_shared<EscapingSink>(std::move(sink)));
}

}  // namespace mibz2::base
