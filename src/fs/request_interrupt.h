// A FUSE request's interrupt as a std::stop_token, for the waits a request makes (an index being
// built): when the process that made the request gets a signal, the kernel sends FUSE_INTERRUPT and
// libfuse calls fuse_req_interrupt_func's function, which requests the stop; the wait ends and the
// request is answered EINTR, while the build goes on. Without an answer the kernel would keep the
// process waiting (uninterruptibly, once the request was sent) even for SIGKILL.
//
// The function is unregistered in the destructor, under the request's lock, so it never runs after;
// destroy this before replying (a reply may free the request).
#pragma once

#include <fuse_lowlevel.h>

#include <stop_token>

namespace mibz2::fs {

class RequestInterrupt {
 public:
  explicit RequestInterrupt(fuse_req_t req) : req_(req) { fuse_req_interrupt_func(req_, &on_interrupt, &source_); }
  ~RequestInterrupt() { fuse_req_interrupt_func(req_, nullptr, nullptr); }
  RequestInterrupt(const RequestInterrupt&) = delete;
  RequestInterrupt& operator=(const RequestInterrupt&) = delete;

  std::stop_token token() const { return source_.get_token(); }

 private:
  // Called by libfuse's thread that read the FUSE_INTERRUPT (or at registration, if it came first).
  static void on_interrupt(fuse_req_t, void* data) { static_cast<std::stop_source*>(data)->request_stop(); }

  const fuse_req_t req_;
  std::stop_source source_;
};

}  // namespace mibz2::fs
