//===- MetadataLoader.cpp - Loading shard metadata files ------------------===//
//
// The public entry points: a file's bytes, padded for simdjson, handed to
// the parser of one document (MetadataParser.h). Large files are
// memory-mapped rather than copied (as LLVM's MemoryBuffer does): on a
// 200 MB file that saves the copy and as many fresh pages.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/metadata/MetadataLoader.h"

#include "MetadataParser.h"

#include <simdjson.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace aoa {

namespace {

using metadatajson::MetadataParser;

/// A file's bytes followed by simdjson's padding. A large file is mapped
/// when its last page has room for the padding (the kernel fills it with
/// zeros); otherwise it is read into a padded buffer. The file must not be
/// truncated while it is mapped, as for any mmap-based reader.
class PaddedFile {
public:
  PaddedFile() = default;
  PaddedFile(const PaddedFile &) = delete;
  PaddedFile &operator=(const PaddedFile &) = delete;
  ~PaddedFile() {
    if (mapping_)
      ::munmap(mapping_, size_);
  }

  /// Opens `path`; on failure returns the system's reason.
  std::optional<std::string> open(const std::string &path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return std::string(std::strerror(errno));
    std::optional<std::string> failure = load(fd);
    ::close(fd);
    return failure;
  }

  std::string_view text() const {
    if (mapping_)
      return std::string_view(static_cast<const char *>(mapping_), size_);
    return std::string_view(buffer_.data(), buffer_.size());
  }

private:
  std::optional<std::string> load(int fd) {
    struct stat st;
    if (::fstat(fd, &st) != 0)
      return std::string(std::strerror(errno));
    if (S_ISDIR(st.st_mode))
      return std::string("is a directory");
    size_t size = static_cast<size_t>(st.st_size);
    // Small files are cheaper to read; regular files only (a pipe cannot be
    // mapped, and its size says nothing).
    constexpr size_t kMapThreshold = 1 << 20;
    size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    if (S_ISREG(st.st_mode) && size >= kMapThreshold && size % page != 0 &&
        page - size % page >= simdjson::SIMDJSON_PADDING) {
      void *mapping = ::mmap(nullptr, size, PROT_READ,
                             MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (mapping != MAP_FAILED) {
        mapping_ = mapping;
        size_ = size;
        return std::nullopt;
      }
    }
    return readAll(fd, S_ISREG(st.st_mode) ? std::optional<size_t>(size)
                                           : std::nullopt);
  }

  /// Reads a regular file of `size` bytes straight into the padded buffer,
  /// anything else in chunks.
  std::optional<std::string> readAll(int fd, std::optional<size_t> size) {
    if (size) {
      buffer_ = simdjson::padded_string(*size);
      if (buffer_.data() == nullptr)
        return std::string("out of memory");
      size_t done = 0;
      while (done < *size) {
        ssize_t n = ::read(fd, buffer_.data() + done, *size - done);
        if (n < 0 && errno == EINTR)
          continue;
        if (n < 0)
          return std::string(std::strerror(errno));
        if (n == 0)
          return std::string("the file shrank while being read");
        done += static_cast<size_t>(n);
      }
      return std::nullopt;
    }
    std::string bytes;
    char chunk[1 << 16];
    for (;;) {
      ssize_t n = ::read(fd, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return std::string(std::strerror(errno));
      if (n == 0)
        break;
      bytes.append(chunk, static_cast<size_t>(n));
    }
    buffer_ = simdjson::padded_string(bytes.data(), bytes.size());
    if (buffer_.data() == nullptr)
      return std::string("out of memory");
    return std::nullopt;
  }

  void *mapping_ = nullptr;
  size_t size_ = 0;
  simdjson::padded_string buffer_;
};

} // namespace

std::optional<ShardMetadata> loadShardMetadata(const std::string &path,
                                               SourceManager &sources,
                                               DiagnosticEngine &diags,
                                               unsigned threads) {
  PaddedFile file;
  if (std::optional<std::string> failure = file.open(path)) {
    diags
        .error(SourceLocation{},
               "cannot read metadata '" + path + "': " + *failure)
        .hint("pass the path of an aoa-metadata JSON file");
    return std::nullopt;
  }
  return MetadataParser(path, file.text(), sources, diags, threads).parse();
}

std::optional<ShardMetadata> loadShardMetadataText(const std::string &path,
                                                   std::string_view text,
                                                   SourceManager &sources,
                                                   DiagnosticEngine &diags) {
  simdjson::padded_string padded(text.data(), text.size());
  return MetadataParser(path, std::string_view(padded.data(), padded.size()),
                        sources, diags)
      .parse();
}

} // namespace aoa
