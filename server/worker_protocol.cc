#include "server/worker_protocol.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lite2onnx::worker {

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) reset(o.release());
  return *this;
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

bool send_frame(int socket, const void* frame, size_t bytes, int fd) {
  iovec iov{const_cast<void*>(frame), bytes};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  for (;;) {
    const ssize_t n = sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(bytes)) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

int receive_frame(int socket, void* frame, size_t bytes, UniqueFd* fd) {
  iovec iov{frame, bytes};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  // Room for a few descriptors, so that a peer sending more than one cannot
  // make them vanish unclosed (MSG_CTRUNC): every one received is closed but the first.
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  // A peer that ends with frames of ours unread resets the socket
  // (ECONNRESET) instead of closing it: a worker crashing mid-job.
  if (n == 0 || (n < 0 && errno == ECONNRESET)) return 0;
  bool well_formed =
      n == static_cast<ssize_t>(bytes) && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
  int received = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int one;
      std::memcpy(&one, CMSG_DATA(c) + i * sizeof(int), sizeof one);
      if (received++ == 0 && fd) {
        fd->reset(one);
      } else {
        ::close(one);
        well_formed = false;
      }
    }
  }
  return n > 0 && well_formed ? 1 : -1;
}

UniqueFd make_memfd(const char* name) {
  return UniqueFd(memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
}

Mapping Mapping::map(int fd, size_t size, bool writable) {
  Mapping m;
  if (size > 0) {
    void* p = mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return m;
    m.data_ = p;
  }
  m.size_ = size;
  m.ok_ = true;
  return m;
}

Mapping::Mapping(Mapping&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      ok_(std::exchange(o.ok_, false)) {}

Mapping& Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    if (data_) munmap(data_, size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    ok_ = std::exchange(o.ok_, false);
  }
  return *this;
}

Mapping::~Mapping() {
  if (data_) munmap(data_, size_);
}

}  // namespace lite2onnx::worker
