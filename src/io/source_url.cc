#include "io/source_url.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace mibz2::io {
namespace {

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  return true;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool unreserved(unsigned char c) { return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~'; }

// Whether a query parameter named `name` may carry a secret: the names of presigned S3 URLs
// (SigV4 and SigV2), CloudFront's signed URLs, Azure's SAS and the usual token parameters; and,
// to be safe, any name that speaks of a signature, a credential, a token, a secret, a password
// or a key.
bool secret_parameter(std::string_view name) {
  const std::string n = lower(percent_decode(name));
  static constexpr std::array<std::string_view, 6> kExact = {"sig", "signature", "policy", "key-pair-id", "auth",
                                                             "code"};
  if (std::find(kExact.begin(), kExact.end(), n) != kExact.end()) return true;
  static constexpr std::array<std::string_view, 7> kParts = {"signature", "credential", "token", "secret",
                                                             "password", "key", "session"};
  for (std::string_view part : kParts)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

// "?a=1&X-Amz-Signature=abc" -> "?a=1&X-Amz-Signature=REDACTED" (query holds what follows '?').
std::string redacted_query(std::string_view query) {
  std::string out;
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string_view::npos) amp = query.size();
    const std::string_view pair = query.substr(pos, amp - pos);
    const size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    if (eq != std::string_view::npos && secret_parameter(name)) {
      out.append(name);
      out.append("=REDACTED");
    } else {
      out.append(pair);
    }
    if (amp == query.size()) break;
    out.push_back('&');
    pos = amp + 1;
  }
  return out;
}

base::Status bad_url(std::string_view text, const std::string& why) {
  return base::Status::error(EINVAL, "not a usable URL: " + redacted_url(text) + " (" + why + ")");
}

// Whether the authority "[user@]host[:port]" names a host (and a numeric port, if any).
bool valid_authority(std::string_view authority, std::string* why) {
  const size_t at = authority.rfind('@');
  std::string_view host = at == std::string_view::npos ? authority : authority.substr(at + 1);
  std::string_view port;
  if (!host.empty() && host.front() == '[') {  // [IPv6]:port
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return *why = "an IPv6 address without its ']'", false;
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':') return *why = "text after the IPv6 address", false;
      port = host.substr(close + 2);
    }
    host = host.substr(0, close + 1);
  } else if (const size_t colon = host.rfind(':'); colon != std::string_view::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  if (host.empty() || host == "[]") return *why = "no host", false;
  if (!port.empty() && (port.size() > 5 || !std::all_of(port.begin(), port.end(), ::isdigit) ||
                        std::stoi(std::string(port)) > 65535))
    return *why = "a port that is not a number below 65536", false;
  return true;
}

}  // namespace

bool is_url(std::string_view text) {
  return starts_with_nocase(text, "http://") || starts_with_nocase(text, "https://") ||
         starts_with_nocase(text, "s3://");
}

base::Result<SourceUrl> parse_source_url(std::string_view text) {
  SourceUrl u;
  size_t rest;
  if (starts_with_nocase(text, "https://")) {
    u.scheme = UrlScheme::kHttps;
    rest = 8;
  } else if (starts_with_nocase(text, "http://")) {
    u.scheme = UrlScheme::kHttp;
    rest = 7;
  } else if (starts_with_nocase(text, "s3://")) {
    u.scheme = UrlScheme::kS3;
    rest = 5;
  } else {
    return bad_url(text, "the scheme is not http://, https:// or s3://");
  }
  // A control character is a mistake (a newline pasted with the URL), never part of a name; a
  // space is one in an S3 key (it is sent encoded), but never in a URL (encoded as %20 there).
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) return bad_url(text, "a control character in it");
    if (c == ' ' && !u.is_s3()) return bad_url(text, "a space in it (write it as %20)");
  }
  if (u.is_s3()) {
    const std::string_view body = text.substr(rest);
    const size_t slash = body.find('/');
    u.bucket = std::string(body.substr(0, slash));
    u.key = slash == std::string_view::npos ? std::string() : std::string(body.substr(slash + 1));
    u.url = std::string(text);
    if (u.bucket.empty()) return bad_url(text, "no bucket");
    if (u.bucket.find_first_of("?#@:") != std::string::npos) return bad_url(text, "not a bucket name");
    return u;
  }
  std::string_view body = text.substr(0, text.find('#'));  // a fragment is never sent
  u.url = std::string(body);
  body = body.substr(rest);
  const size_t path_at = body.find_first_of("/?");
  const std::string_view authority = body.substr(0, path_at);
  std::string why;
  if (!valid_authority(authority, &why)) return bad_url(text, why);
  const std::string_view tail = path_at == std::string_view::npos ? std::string_view() : body.substr(path_at);
  u.path.assign(tail.substr(0, tail.find('?')));
  if (u.path.empty()) u.path.assign(1, '/');
  return u;
}

std::string object_name(const SourceUrl& url) {
  std::string name;
  if (url.is_s3()) {
    name = url.key.substr(url.key.rfind('/') + 1);  // npos + 1 == 0: the whole key
  } else {
    name = percent_decode(url.path.substr(url.path.rfind('/') + 1));
  }
  if (name == "." || name == ".." || name.find('/') != std::string::npos || name.find('\0') != std::string::npos)
    return {};
  return name;
}

std::string redacted_url(std::string_view text) {
  std::string out;
  size_t start = 0;
  if (const size_t scheme_end = text.find("://"); scheme_end != std::string_view::npos) {
    start = scheme_end + 3;
    out.append(text.substr(0, start));
    // The authority ends at the first '/', '?' or '#'; a '@' in it ends the user and password.
    const size_t auth_end = std::min(text.find_first_of("/?#", start), text.size());
    const std::string_view authority = text.substr(start, auth_end - start);
    const size_t at = authority.rfind('@');
    out.append(at == std::string_view::npos ? authority : authority.substr(at + 1));
    start = auth_end;
  }
  const std::string_view rest = text.substr(start);
  const size_t q = rest.find('?');
  if (q == std::string_view::npos) return out.append(rest);
  const size_t hash = rest.find('#', q);
  out.append(rest.substr(0, q + 1));
  out.append(redacted_query(rest.substr(q + 1, hash == std::string_view::npos ? std::string_view::npos : hash - q - 1)));
  if (hash != std::string_view::npos) out.append(rest.substr(hash));
  return out;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 && hex_value(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

std::string percent_encode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (unreserved(c) || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace mibz2::io
