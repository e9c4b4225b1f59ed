#include "client/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace lite2onnx {

OutputFile::OutputFile(std::string path) : path_(std::move(path)), target_(path_) {
  if (path_ == "-") return;
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    // A link is written through: the file it names is the one replaced.
    char* real = ::realpath(path_.c_str(), nullptr);
    if (real == nullptr) return;  // a link to nothing: opened (and created) through it
    target_ = real;
    std::free(real);
  }
  if (::stat(target_.c_str(), &st) != 0) {
    positional_ = errno == ENOENT;
    return;
  }
  positional_ = S_ISREG(st.st_mode);
}

OutputFile::~OutputFile() {
  if (fd_ > STDERR_FILENO) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

bool OutputFile::fail(const std::string& why) {
  if (error_.empty())
    error_ = path_ == "-" ? "cannot write the ONNX model to standard output: " + why
                          : "cannot write '" + path_ + "': " + why;
  return false;
}

bool OutputFile::open() {
  opened_ = true;
  if (path_ == "-") {
    fd_ = STDOUT_FILENO;
    return true;
  }
  if (!positional_) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    return fd_ >= 0 || fail(std::strerror(errno));
  }
  // Beside the file it replaces (rename() stays in one file system), hidden,
  // named after this process; created as open(2) creates any file (0666 less
  // the umask), then given the mode of the file it replaces.
  const std::filesystem::path target(target_);
  const std::string stem =
      "." + target.filename().string() + ".lite2onnx-" + std::to_string(::getpid()) + "-";
  for (int n = 0; n < 100 && fd_ < 0; ++n) {
    std::string temp = (target.parent_path() / (stem + std::to_string(n))).string();
    fd_ = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0) {
      temp_ = std::move(temp);
    } else if (errno != EEXIST) {
      return fail(std::strerror(errno));
    }
  }
  if (fd_ < 0) return fail("no free name for a temporary file beside it");
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0 && ::fchmod(fd_, st.st_mode & 07777) != 0)
    return fail(std::strerror(errno));
  return true;
}

bool OutputFile::write(std::span<const std::byte> bytes) {
  if (!error_.empty() || (!opened_ && !open())) return false;
  // A span of a memory-mapped model goes from its pages to the file's in
  // the kernel: no copy in user space.
  for (size_t at = 0; at < bytes.size();) {
    const ssize_t n = ::write(fd_, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(std::strerror(errno));
    at += static_cast<size_t>(n);
  }
  return true;
}

bool OutputFile::write_at(size_t offset, std::span<const std::byte> bytes) {
  if (!error_.empty() || temp_.empty()) return false;
  for (size_t at = 0; at < bytes.size();) {
    const ssize_t n =
        ::pwrite(fd_, bytes.data() + at, bytes.size() - at, static_cast<off_t>(offset + at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(std::strerror(errno));
    at += static_cast<size_t>(n);
  }
  return true;
}

bool OutputFile::commit() {
  if (!error_.empty() || (!opened_ && !open())) return false;
  if (fd_ > STDERR_FILENO) {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return fail(std::strerror(errno));
  }
  if (temp_.empty()) return true;
  // A file replaced is swapped with the temporary one, which then names the
  // old file and is removed: ext4 writes back a file renamed over another
  // at once (auto_da_alloc), 20-100 ms for 108 MiB measured here, where the
  // exchange costs nothing and removing the old file 7-13 ms. Where the file
  // system cannot exchange (or there is no file to replace), a plain rename.
  if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
    ::unlink(temp_.c_str());
    temp_.clear();
    return true;
  }
  if (std::rename(temp_.c_str(), target_.c_str()) != 0) return fail(std::strerror(errno));
  temp_.clear();
  return true;
}

}  // namespace lite2onnx
