// A read-only memory map of a file: a model is read without being copied.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string>

namespace lite2onnx {

class MappedFile {
 public:
  // The file at `path`, or nullopt with `*error` saying why ("cannot open 'x': ...").
  static std::optional<MappedFile> open(const std::string& path, std::string* error) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      *error = "cannot open '" + path + "': " + std::strerror(errno);
      return std::nullopt;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      *error = "'" + path + "' is not a regular file";
      ::close(fd);
      return std::nullopt;
    }
    MappedFile f;
    f.size_ = static_cast<size_t>(st.st_size);
    if (f.size_ > 0) {
      void* p = mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        *error = "cannot map '" + path + "': " + std::strerror(errno);
        ::close(fd);
        return std::nullopt;
      }
      f.data_ = p;
    }
    ::close(fd);
    return f;
  }
  MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile() {
    if (data_) munmap(data_, size_);
  }
  std::span<const std::byte> bytes() const {
    return {static_cast<const std::byte*>(data_), data_ ? size_ : 0};
  }

 private:
  MappedFile() = default;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace lite2onnx
