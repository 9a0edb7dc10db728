//===- ByteSource.h - Where a binary plan's bytes come from ------*- C++ -*-===//
//
// The decoder reads ranges it has checked lie inside the source: from
// memory (a plan read whole, or received from rank 0), or from a file by
// pread, so that reading one rank's section reads nothing else.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_BYTESOURCE_H
#define AOA_FORMATS_PLAN_LIB_BYTESOURCE_H

#include <cstdint>
#include <string>
#include <string_view>

namespace aoa {
namespace binplan {

/// Where the bytes come from: memory, or a file read by ranges.
class ByteSource {
public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  /// Bytes [offset, offset + size), which the caller checked lie inside.
  virtual bool read(uint64_t offset, uint64_t size, std::string &storage,
                    std::string_view &bytes, std::string &error) = 0;
};

class MemorySource : public ByteSource {
public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  bool read(uint64_t offset, uint64_t size, std::string &,
            std::string_view &bytes, std::string &) override {
    bytes = bytes_.substr(offset, size);
    return true;
  }

private:
  std::string_view bytes_;
};

class FileSource : public ByteSource {
public:
  FileSource() = default;
  FileSource(const FileSource &) = delete;
  FileSource &operator=(const FileSource &) = delete;
  ~FileSource() override;
  /// Opens `path` for reading; false with `error` set when it cannot.
  bool open(const std::string &path, std::string &error);
  uint64_t size() const override { return size_; }
  bool read(uint64_t offset, uint64_t size, std::string &storage,
            std::string_view &bytes, std::string &error) override;

private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

} // namespace binplan
} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_BYTESOURCE_H
