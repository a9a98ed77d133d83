// Real servers on loopback for the tests of remote sources, started by the tests themselves and
// stopped when the test program ends (or, should it die, when their standard input closes):
//
//   - NginxServer: Debian's nginx serving a scratch directory over HTTP, and over HTTPS (HTTP/2
//     offered) with a certificate made for the test (ca_file(): trust it with CURL_CA_BUNDLE or
//     HttpOptions::ca_bundle). testtools/nginx_server.py, with /usr/bin/python3.
//   - S3Server: moto's S3 (and IAM) in the Python beside the `moto_server` command (found on PATH,
//     else in ~/.pyenv/shims; MIBZ2_MOTO_PYTHON names an interpreter that has moto and boto3
//     instead), with an IAM user whose key signs. testtools/s3_server.py.
//   - FaultProxy: testtools/fault_proxy.py (python3-aiohttp) in front of a server, adding
//     latency, capping bandwidth, injecting the faults a test asks for.
//
// The first two are shared by every test of a program (started by the first that asks); a proxy
// is the test's own. A server that cannot start makes its tests skip, with a message saying why
// (the servers come from scripts/setup's test group).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "test_support.h"

namespace mibz2::test {

// A child process that prints one line of JSON when it is ready. Its standard input stays a pipe
// to us (commands, and its end when we go); its standard error goes to a file, quoted when it
// fails to start.
class ServerProcess {
 public:
  // Starts `argv` and waits up to `timeout` for its first line; null (and *why) if it fails.
  static std::unique_ptr<ServerProcess> start(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                                              std::string* why);
  ~ServerProcess();  // closes its input, SIGTERM to its process group, SIGKILL after 5 s
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // A field of the ready line: a string's text or a number's digits; empty when absent.
  std::string field(const std::string& name) const;
  // Writes a line to its input and returns the line it answers.
  std::string command(const std::string& line);

 private:
  ServerProcess() = default;
  std::string read_line(std::chrono::milliseconds timeout);

  pid_t pid_ = -1;
  int in_ = -1;   // its standard input
  int out_ = -1;  // its standard output
  std::string buffered_;
  std::string ready_;
  std::filesystem::path err_path_;
};

// A field of a flat JSON object (a string's text, or a number's digits), or empty.
std::string json_field(const std::string& json, const std::string& name);

// The body of a GET, and of a POST with a body, by libcurl (for the proxy's control and checks).
struct HttpAnswer {
  long status = 0;
  std::string body;
};
HttpAnswer http_get(const std::string& url);
HttpAnswer http_post(const std::string& url, const std::string& body);

class NginxServer {
 public:
  // The program's server, started by the first call; null when it cannot start (*why says why).
  static NginxServer* shared(std::string* why);

  const std::filesystem::path& root() const { return root_.path(); }
  // Writes `name` under the root (a new file in place of the old: a new inode, a new ETag).
  void put(const std::string& name, std::span<const uint8_t> data) const;
  std::string url(const std::string& name) const { return base_ + "/" + name; }
  std::string https_url(const std::string& name) const { return https_base_ + "/" + name; }
  std::string base() const { return base_; }
  const std::string& ca_file() const { return ca_; }

 private:
  TempDir root_;
  std::unique_ptr<ServerProcess> process_;
  std::string base_, https_base_, ca_;
};

class S3Server {
 public:
  static S3Server* shared(std::string* why);

  const std::string& endpoint() const { return endpoint_; }  // "http://127.0.0.1:PORT"
  const std::string& key() const { return key_; }            // the IAM user's access key id
  const std::string& secret() const { return secret_; }
  const std::string& region() const { return region_; }
  // Temporary credentials (STS AssumeRole of a role allowed the same): key, secret, token.
  const std::string& session_key() const { return session_key_; }
  const std::string& session_secret() const { return session_secret_; }
  const std::string& session_token() const { return session_token_; }
  // Setup (made with signatures off whatever the tests set); each fails the test if it fails.
  void make_bucket(const std::string& name);
  void put(const std::string& bucket, const std::string& key, std::span<const uint8_t> data, bool is_public = false);
  void remove(const std::string& bucket, const std::string& key);
  // Whether moto checks each request's signature from now on (off: any request is accepted, and
  // an unsigned one reads what is public).
  void require_signatures(bool on);
  // For a program the shell runs: "HOME=... AWS_ENDPOINT_URL=... AWS_ACCESS_KEY_ID=...
  // AWS_SECRET_ACCESS_KEY=... AWS_REGION=... " (quoted, ending in a space), so that it signs with
  // the IAM user's key as the AWS tools take it, and reads no ~/.aws but `home`'s.
  std::string signing_environment(const std::filesystem::path& home) const;

 private:
  void command(const std::string& json);
  TempDir scratch_;
  std::unique_ptr<ServerProcess> process_;
  std::string endpoint_, key_, secret_, region_, session_key_, session_secret_, session_token_;
};

class FaultProxy {
 public:
  // A proxy of the test's own in front of `upstream` ("http://127.0.0.1:PORT"); null (and *why).
  static std::unique_ptr<FaultProxy> start(const std::string& upstream, std::string* why,
                                           double latency_ms = 0, uint64_t rate = 0);

  std::string base() const { return base_; }
  // The proxy's URL of a path of the server ("name" -> "http://127.0.0.1:PROXY/name").
  std::string url(const std::string& path) const { return base_ + "/" + path; }
  // Replaces the fault rules (a JSON list: testtools/fault_proxy.py says what they are).
  void set_faults(const std::string& rules_json);
  // No rules, counters to zero.
  void reset();
  // The counters as JSON, and the ones tests read most.
  std::string stats() const;
  uint64_t gets() const;
  uint64_t body_bytes() const;

 private:
  std::unique_ptr<ServerProcess> process_;
  std::string base_;
};

// Skips the test (with why) when the server is null.
#define MIBZ2_NEED_SERVER(server, why) \
  if (!(server)) GTEST_SKIP() << "no test server: " << (why)

}  // namespace mibz2::test
