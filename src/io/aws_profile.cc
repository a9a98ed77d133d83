#include "io/aws_profile.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <cstdio>

namespace mibz2::io {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The file's text; no text (and no error) when there is no such file.
base::Result<std::optional<std::string>> read_text(const std::string& path) {
  if (path.empty()) return std::optional<std::string>();
  std::FILE* f = std::fopen(path.c_str(), "rbe");
  if (!f) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return std::optional<std::string>();
    return base::Status::os_error(err, "cannot read the AWS settings file " + path + ": " + std::strerror(err));
  }
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return base::Status::os_error(EIO, "cannot read the AWS settings file " + path);
  return std::optional<std::string>(std::move(text));
}

}  // namespace

std::map<std::string, IniSection> parse_ini(std::string_view text) {
  std::map<std::string, IniSection> sections;
  IniSection* current = nullptr;
  bool nested = false;  // under a key with no value: indented lines belong to its block
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    const bool indented = !line.empty() && (line.front() == ' ' || line.front() == '\t');
    line = trim(line);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      current = &sections[std::string(trim(line.substr(1, line.size() - 2)))];
      nested = false;
      continue;
    }
    if (!current || (indented && nested)) continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key(trim(line.substr(0, eq)));
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string_view value = trim(line.substr(eq + 1));
    nested = value.empty();
    if (!nested) (*current)[key] = std::string(value);
  }
  return sections;
}

base::Result<AwsProfile> read_aws_profile(const std::string& name, const std::string& credentials_path,
                                          const std::string& config_path) {
  AwsProfile profile;
  // The config file first, so that the credentials file's values replace its own.
  const std::string config_section = name == "default" ? "default" : "profile " + name;
  for (const auto& [path, section] : {std::pair{config_path, config_section}, std::pair{credentials_path, name}}) {
    base::Result<std::optional<std::string>> text = read_text(path);
    MIBZ2_FORWARD_IF_ERROR(text);
    if (!*text) continue;
    const std::map<std::string, IniSection> sections = parse_ini(**text);
    const auto it = sections.find(section);
    if (it == sections.end()) continue;
    profile.found = true;
    for (const auto& [key, value] : it->second) profile.values[key] = value;
  }
  return profile;
}

}  // namespace mibz2::io
