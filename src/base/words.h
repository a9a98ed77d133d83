// The words of messages, the same in every front end: text made fit for one line or a log line,
// byte counts and plurals.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mibz2::base {

// "'TEXT'": TEXT between single quotes, as it is.
std::string quoted(std::string_view text);

// TEXT made fit for a one-line message: control characters (a newline or escape sequence in an
// argument the user or a script passed) written as \n, \t, \r or \xNN, so that a message never
// spans lines or drives the terminal.
std::string one_line(std::string_view text);

// TEXT made fit for a log line (the daemon's syslog and stderr, every message: names in it come
// from SOURCE, where anyone may have chosen them): as one_line, and also a backslash as \\ (so
// that an escape in the log always stands for one byte of the text, never for itself) and the
// C1 control characters in UTF-8 (U+0080 to U+009F, which some terminals obey like ESC) as
// \u0080 to \u009f. Everything else, other UTF-8 or bytes that are not UTF-8, is kept.
std::string escape_for_log(std::string_view text);

// "1.5 GiB", "512 B".
std::string human_bytes(uint64_t bytes);
// "1 block", "2 blocks", "0 blocks": `noun` is the singular, its plural takes an "s".
std::string plural(uint64_t n, std::string_view noun);

}  // namespace mibz2::base
