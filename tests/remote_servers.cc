#include "remote_servers.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#ifndef MIBZ2_SOURCE_DIR
#error "remote_servers.cc needs MIBZ2_SOURCE_DIR (the testtools/ scripts)"
#endif

namespace mibz2::test {
namespace {

const std::string kTesttools = std::string(MIBZ2_SOURCE_DIR) + "/testtools/";
// The servers' Python for nginx and the proxy: Debian's, which has python3-aiohttp.
constexpr const char* kSystemPython = "/usr/bin/python3";
constexpr std::chrono::seconds kStartTimeout{60};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string first_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

bool executable(const std::filesystem::path& p) { return ::access(p.c_str(), X_OK) == 0; }

// The moto_server command: on PATH, else in pyenv's shims under $HOME or /root.
std::filesystem::path find_moto_server() {
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty() && executable(std::filesystem::path(dir) / "moto_server")) return std::filesystem::path(dir) / "moto_server";
  }
  for (const char* home : {static_cast<const char*>(std::getenv("HOME")), "/root"})
    if (home && executable(std::filesystem::path(home) / ".pyenv/shims/moto_server"))
      return std::filesystem::path(home) / ".pyenv/shims/moto_server";
  return {};
}

// The Python that runs moto_server (and so has moto, and boto3 beside it): MIBZ2_MOTO_PYTHON, or
// the interpreter of moto_server's script (through pyenv's `which` when it is pyenv's shim).
std::string moto_python(std::string* why) {
  if (const char* p = std::getenv("MIBZ2_MOTO_PYTHON"); p && *p) return p;
  std::filesystem::path script = find_moto_server();
  if (script.empty()) {
    *why = "no moto_server on PATH or in ~/.pyenv/shims (set MIBZ2_MOTO_PYTHON to a Python with moto and boto3)";
    return {};
  }
  if (slurp(script).find("pyenv") != std::string::npos && first_line(script).find("python") == std::string::npos) {
    const std::filesystem::path root = script.parent_path().parent_path();
    const CommandResult r = run_command("PYENV_ROOT=" + shell_quote(root) + " " + shell_quote(root / "libexec/pyenv") +
                                        " which moto_server 2>/dev/null");
    std::string real = r.out_text();
    while (!real.empty() && (real.back() == '\n' || real.back() == '\r')) real.pop_back();
    if (r.status != 0 || real.empty()) {
      *why = "pyenv does not say which moto_server " + script.string() + " runs";
      return {};
    }
    script = real;
  }
  const std::string shebang = first_line(script);
  if (shebang.rfind("#!", 0) != 0 || shebang.find("python") == std::string::npos) {
    *why = script.string() + " is not a Python script";
    return {};
  }
  std::string python = shebang.substr(2);
  while (!python.empty() && python.front() == ' ') python.erase(0, 1);
  python = python.substr(0, python.find(' '));
  if (run_command(shell_quote(python) + " -c 'import moto, boto3' 2>/dev/null").status != 0) {
    *why = python + " (moto_server's Python) cannot import moto and boto3";
    return {};
  }
  return python;
}

size_t collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

HttpAnswer http_request(const std::string& url, const std::string* post_body) {
  HttpAnswer answer;
  CURL* h = curl_easy_init();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &answer.body);
  curl_slist* headers = nullptr;
  if (post_body) {
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, post_body->c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(post_body->size()));
  }
  if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &answer.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  return answer;
}

}  // namespace

std::string json_field(const std::string& json, const std::string& name) {
  const std::regex re("\"" + name + "\"\\s*:\\s*(\"((?:[^\"\\\\]|\\\\.)*)\"|(-?[0-9.]+))");
  std::smatch m;
  if (!std::regex_search(json, m, re)) return {};
  return m[2].matched ? m[2].str() : m[3].str();
}

HttpAnswer http_get(const std::string& url) { return http_request(url, nullptr); }
HttpAnswer http_post(const std::string& url, const std::string& body) { return http_request(url, &body); }

// ---- ServerProcess ------------------------------------------------------------------------------

std::unique_ptr<ServerProcess> ServerProcess::start(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                                                    std::string* why) {
  std::unique_ptr<ServerProcess> p(new ServerProcess());
  char err_template[] = "/tmp/mibz2-server-err-XXXXXX";
  const int err_fd = ::mkstemp(err_template);
  p->err_path_ = err_template;
  int in[2], out[2];
  if (err_fd < 0 || ::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    *why = "cannot make pipes for " + argv[0];
    return nullptr;
  }
  std::vector<char*> args;  // made before the fork: the child of a threaded program only execs
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: its children (nginx) go with it
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err_fd, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err_fd);
  p->pid_ = pid;
  p->in_ = in[1];
  p->out_ = out[0];
  if (pid < 0) {
    *why = "cannot fork";
    return nullptr;
  }
  p->ready_ = p->read_line(timeout);
  if (p->ready_.empty() || p->ready_.front() != '{') {
    *why = argv[argv.size() > 1 ? 1 : 0] + " did not start: " + p->ready_ + slurp(p->err_path_);
    return nullptr;
  }
  return p;
}

ServerProcess::~ServerProcess() {
  if (in_ >= 0) ::close(in_);
  if (pid_ > 0) {
    ::kill(-pid_, SIGTERM);
    for (int i = 0; i < 500; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  if (out_ >= 0) ::close(out_);
  std::error_code ec;
  std::filesystem::remove(err_path_, ec);
}

std::string ServerProcess::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (const size_t nl = buffered_.find('\n'); nl != std::string::npos) {
      std::string line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return {};
    pollfd pfd{out_, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(out_, buf, sizeof buf);
    if (n <= 0) return {};  // it ended
    buffered_.append(buf, static_cast<size_t>(n));
  }
}

std::string ServerProcess::field(const std::string& name) const { return json_field(ready_, name); }

std::string ServerProcess::command(const std::string& line) {
  const std::string text = line + "\n";
  if (::write(in_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) return {};
  return read_line(std::chrono::seconds(60));
}

// ---- NginxServer --------------------------------------------------------------------------------

NginxServer* NginxServer::shared(std::string* why) {
  static std::string failure;
  static std::unique_ptr<NginxServer> server = [] {
    auto s = std::make_unique<NginxServer>();
    s->process_ = ServerProcess::start(
        {kSystemPython, kTesttools + "nginx_server.py", "--root", s->root().string(), "--https", "--stdin-eof-stops"},
        kStartTimeout, &failure);
    if (!s->process_) return std::unique_ptr<NginxServer>();
    s->base_ = s->process_->field("url");
    s->https_base_ = s->process_->field("https_url");
    s->ca_ = s->process_->field("ca");
    return s;
  }();
  if (!server) *why = failure;
  return server.get();
}

void NginxServer::put(const std::string& name, std::span<const uint8_t> data) const {
  const std::filesystem::path target = root() / name;
  std::filesystem::create_directories(target.parent_path());
  const std::filesystem::path temp = target.string() + ".part";
  write_file(temp, data);
  std::filesystem::rename(temp, target);
}

// ---- S3Server -----------------------------------------------------------------------------------

S3Server* S3Server::shared(std::string* why) {
  static std::string failure;
  static std::unique_ptr<S3Server> server = [] {
    const std::string python = moto_python(&failure);
    if (python.empty()) return std::unique_ptr<S3Server>();
    auto s = std::make_unique<S3Server>();
    s->process_ = ServerProcess::start({python, kTesttools + "s3_server.py"}, kStartTimeout, &failure);
    if (!s->process_) return std::unique_ptr<S3Server>();
    s->endpoint_ = s->process_->field("url");
    s->key_ = s->process_->field("key");
    s->secret_ = s->process_->field("secret");
    s->region_ = s->process_->field("region");
    s->session_key_ = s->process_->field("session_key");
    s->session_secret_ = s->process_->field("session_secret");
    s->session_token_ = s->process_->field("session_token");
    return s;
  }();
  if (!server) *why = failure;
  return server.get();
}

void S3Server::command(const std::string& json) {
  const std::string answer = process_->command(json);
  ASSERT_NE(answer.find("\"ok\": true"), std::string::npos) << json << " -> " << answer;
}

void S3Server::make_bucket(const std::string& name) { command("{\"op\": \"bucket\", \"name\": \"" + name + "\"}"); }

void S3Server::put(const std::string& bucket, const std::string& key, std::span<const uint8_t> data, bool is_public) {
  const std::filesystem::path file = scratch_.write("object", data);
  command("{\"op\": \"put\", \"bucket\": \"" + bucket + "\", \"key\": \"" + key + "\", \"file\": \"" + file.string() +
          "\", \"public\": " + (is_public ? "true" : "false") + "}");
}

void S3Server::remove(const std::string& bucket, const std::string& key) {
  command("{\"op\": \"delete\", \"bucket\": \"" + bucket + "\", \"key\": \"" + key + "\"}");
}

std::string S3Server::signing_environment(const std::filesystem::path& home) const {
  return "HOME=" + shell_quote(home.string()) + " AWS_ENDPOINT_URL=" + shell_quote(endpoint_) +
         " AWS_ACCESS_KEY_ID=" + shell_quote(key_) + " AWS_SECRET_ACCESS_KEY=" + shell_quote(secret_) +
         " AWS_REGION=" + shell_quote(region_) + " ";
}

void S3Server::require_signatures(bool on) {
  command(std::string("{\"op\": \"signatures\", \"on\": ") + (on ? "true" : "false") + "}");
}

// ---- FaultProxy ---------------------------------------------------------------------------------

std::unique_ptr<FaultProxy> FaultProxy::start(const std::string& upstream, std::string* why, double latency_ms,
                                              uint64_t rate) {
  auto p = std::make_unique<FaultProxy>();
  p->process_ = ServerProcess::start({kSystemPython, kTesttools + "fault_proxy.py", "--upstream", upstream,
                                      "--latency-ms", std::to_string(latency_ms), "--rate", std::to_string(rate),
                                      "--stdin-eof-stops"},
                                     kStartTimeout, why);
  if (!p->process_) return nullptr;
  p->base_ = p->process_->field("url");
  return p;
}

void FaultProxy::set_faults(const std::string& rules_json) {
  const HttpAnswer a = http_post(base_ + "/_proxy/faults", rules_json);
  ASSERT_EQ(a.status, 200) << rules_json << " -> " << a.body;
}

void FaultProxy::reset() {
  const HttpAnswer a = http_post(base_ + "/_proxy/reset", "{}");
  ASSERT_EQ(a.status, 200) << a.body;
}

std::string FaultProxy::stats() const { return http_get(base_ + "/_proxy/stats").body; }
uint64_t FaultProxy::gets() const { return std::stoull("0" + json_field(stats(), "gets")); }
uint64_t FaultProxy::body_bytes() const { return std::stoull("0" + json_field(stats(), "body_bytes")); }

}  // namespace mibz2::test
