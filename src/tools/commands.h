// The subcommands of the mibz2 program. Each parses its own options and returns the exit status:
// 0 success, 1 usage or I/O error, 2 damaged or truncated input (bzip2's convention).
#pragma once

namespace mibz2::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 1;
inline constexpr int kExitDataError = 2;

int cmd_cat(int argc, char** argv);
int cmd_index(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_verify(int argc, char** argv);

// Prints "mibz2 COMMAND: MESSAGE" and returns kExitUsage.
int usage_error(const char* command, const char* message);

}  // namespace mibz2::tools
