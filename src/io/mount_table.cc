#include "io/mount_table.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace mibz2::io {
namespace {

bool is_octal(char c) { return c >= '0' && c <= '7'; }

// The next space-separated field of `line` from *pos; empty at the end of the line.
std::string_view next_field(std::string_view line, size_t* pos) {
  while (*pos < line.size() && line[*pos] == ' ') ++*pos;
  const size_t start = *pos;
  while (*pos < line.size() && line[*pos] != ' ') ++*pos;
  return line.substr(start, *pos - start);
}

// One line: "ID PARENT MAJOR:MINOR ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS".
std::optional<MountEntry> parse_line(std::string_view line) {
  size_t pos = 0;
  std::string_view f[5];
  for (auto& field : f) {
    field = next_field(line, &pos);
    if (field.empty()) return std::nullopt;
  }
  // Options, then optional fields ("shared:1", "master:2"...) up to the "-" separator.
  std::string_view field;
  do {
    field = next_field(line, &pos);
  } while (!field.empty() && field != "-");
  if (field.empty()) return std::nullopt;
  const std::string_view type = next_field(line, &pos);
  const std::string_view source = next_field(line, &pos);
  if (type.empty()) return std::nullopt;
  return MountEntry{unescape_mount_field(f[3]), unescape_mount_field(f[4]), unescape_mount_field(type),
                    unescape_mount_field(source), std::string(f[2])};
}

}  // namespace

std::string unescape_mount_field(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    // A byte is at most \377: the first digit is 0..3.
    if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] >= '0' && field[i + 1] <= '3' &&
        is_octal(field[i + 2]) && is_octal(field[i + 3])) {
      out += static_cast<char>(((field[i + 1] - '0') << 6) | ((field[i + 2] - '0') << 3) | (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
  std::vector<MountEntry> out;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (auto e = parse_line(line)) out.push_back(std::move(*e));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

std::vector<MountEntry> read_mount_table() {
  // A proc file has no size to stat: read until the end.
  const int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buf[16384];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return parse_mountinfo(text);
}

std::optional<MountEntry> find_mount(const std::vector<MountEntry>& table, std::string_view mount_point) {
  for (auto it = table.rbegin(); it != table.rend(); ++it)
    if (it->mount_point == mount_point) return *it;
  return std::nullopt;
}

bool is_mount_point(std::string_view mount_point) {
  return find_mount(read_mount_table(), mount_point).has_value();
}

}  // namespace mibz2::io
