//===- OutputFile.cpp ------------------------------------------------------===//
#include "aoa/driver/OutputFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <ostream>
#include <sys/stat.h>
#include <unistd.h>

namespace aoa {

namespace {

/// Keeps text in memory until `flush()` or until it passes `limit` bytes;
/// from then on writes through to `out`.
class SpillBuffer : public std::streambuf {
public:
  SpillBuffer(std::ostream &out, size_t limit) : out_(out), limit_(limit) {}

  /// Writes what is held and passes everything through from now on.
  bool release() {
    if (!spilled_) {
      out_.write(held_.data(), static_cast<std::streamsize>(held_.size()));
      held_.clear();
      held_.shrink_to_fit();
      spilled_ = true;
    }
    out_.flush();
    return static_cast<bool>(out_);
  }

protected:
  std::streamsize xsputn(const char *s, std::streamsize n) override {
    if (spilled_) {
      out_.write(s, n);
      return out_ ? n : 0;
    }
    held_.append(s, static_cast<size_t>(n));
    if (held_.size() > limit_)
      release();
    return n;
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof()))
      return traits_type::not_eof(c);
    char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }

private:
  std::ostream &out_;
  size_t limit_;
  std::string held_;
  bool spilled_ = false;
};

constexpr size_t kStdoutHoldLimit = 64u << 20;

/// A file buffer that has the kernel start writing the file back each time
/// `interval` more bytes went through it (sync_file_range: it does not wait),
/// so that the file is mostly on disk by the time commit() fsyncs it.
class WritebackFileBuffer : public std::filebuf {
public:
  explicit WritebackFileBuffer(std::streamsize interval)
      : interval_(interval) {}
  ~WritebackFileBuffer() override {
    if (fd_ >= 0)
      ::close(fd_);
  }

  /// Opens `path` as std::filebuf::open does, and a second descriptor of it
  /// for the write-back (the buffer hides its own).
  bool openForWriteback(const std::string &path, std::ios::openmode mode) {
    if (!open(path, mode))
      return false;
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    return true;
  }

protected:
  std::streamsize xsputn(const char *s, std::streamsize n) override {
    std::streamsize written = std::filebuf::xsputn(s, n);
    count(written);
    return written;
  }
  int_type overflow(int_type c) override {
    int_type result = std::filebuf::overflow(c);
    if (!traits_type::eq_int_type(c, traits_type::eof()) &&
        !traits_type::eq_int_type(result, traits_type::eof()))
      count(1);
    return result;
  }

private:
  void count(std::streamsize bytes) {
    sinceWriteback_ += bytes;
    if (sinceWriteback_ < interval_ || fd_ < 0)
      return;
    sinceWriteback_ = 0;
    if (std::filebuf::sync() != 0)
      return; // the stream reports the failed write
#ifdef __linux__
    // The whole file: ranges already written back cost nothing, and a
    // seek back (a header written last) is covered too.
    (void)::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
  }

  std::streamsize interval_;
  std::streamsize sinceWriteback_ = 0;
  int fd_ = -1;
};

constexpr std::streamsize kWritebackInterval = std::streamsize(16) << 20;

} // namespace

std::optional<OutputFile> OutputFile::open(const std::string &path,
                                           std::ostream &stdoutStream,
                                           std::string &error) {
  if (path == "-") {
    OutputFile out(path, &stdoutStream);
    out.spill_ = std::make_unique<SpillBuffer>(stdoutStream, kStdoutHoldLimit);
    out.spillStream_ = std::make_unique<std::ostream>(out.spill_.get());
    return out;
  }
  OutputFile out(path, nullptr);
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0 && S_ISDIR(existing.st_mode)) {
    error = "'" + path + "' is a directory";
    out.done_ = true;
    return std::nullopt;
  }
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    // A device or a pipe (/dev/null, a FIFO) is written in place: renaming
    // a temporary over it would replace the device with a plain file.
    out.inPlace_ = true;
    out.fileBuffer_ = std::make_unique<std::filebuf>();
    if (!out.fileBuffer_->open(path, std::ios::out | std::ios::binary)) {
      error = "cannot open '" + path + "': " + std::strerror(errno);
      out.fileBuffer_.reset();
      out.done_ = true;
      return std::nullopt;
    }
    out.file_ = std::make_unique<std::ostream>(out.fileBuffer_.get());
    return out;
  }
  out.temporary_ = path + ".tmp." + std::to_string(::getpid());
  auto buffer = std::make_unique<WritebackFileBuffer>(kWritebackInterval);
  if (!buffer->openForWriteback(out.temporary_, std::ios::out |
                                                    std::ios::binary |
                                                    std::ios::trunc)) {
    error = "cannot create '" + out.temporary_ + "': " + std::strerror(errno);
    out.done_ = true;
    return std::nullopt;
  }
  out.fileBuffer_ = std::move(buffer);
  out.file_ = std::make_unique<std::ostream>(out.fileBuffer_.get());
  return out;
}

OutputFile::OutputFile(OutputFile &&other) noexcept
    : path_(std::move(other.path_)), temporary_(std::move(other.temporary_)),
      stdout_(other.stdout_), spill_(std::move(other.spill_)),
      spillStream_(std::move(other.spillStream_)),
      fileBuffer_(std::move(other.fileBuffer_)),
      file_(std::move(other.file_)), inPlace_(other.inPlace_),
      done_(other.done_) {
  other.done_ = true;
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  if (done_)
    return;
  done_ = true;
  if (fileBuffer_) {
    fileBuffer_->close();
    if (!inPlace_)
      ::unlink(temporary_.c_str());
  }
}

std::ostream &OutputFile::stream() {
  if (file_)
    return *file_;
  return *spillStream_;
}

std::optional<std::string> OutputFile::commit() {
  if (done_)
    return std::string("output already finished");
  if (stdout_) {
    done_ = true;
    if (!static_cast<SpillBuffer &>(*spill_).release())
      return std::string("cannot write to standard output");
    return std::nullopt;
  }
  file_->flush();
  bool written = static_cast<bool>(*file_);
  int savedErrno = errno;
  bool closed = fileBuffer_->close() != nullptr;
  const std::string &writtenTo = inPlace_ ? path_ : temporary_;
  if (!written || !closed) {
    discard();
    return "cannot write '" + writtenTo + "': " +
           std::strerror(savedErrno ? savedErrno : EIO);
  }
  if (inPlace_) {
    done_ = true;
    return std::nullopt;
  }
  // The stream hides its descriptor; fsync through a second one flushes the
  // same file.
  int fd = ::open(temporary_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    std::string message =
        "cannot fsync '" + temporary_ + "': " + std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    discard();
    return message;
  }
  ::close(fd);
  if (::rename(temporary_.c_str(), path_.c_str()) != 0) {
    std::string message = "cannot rename '" + temporary_ + "' to '" + path_ +
                          "': " + std::strerror(errno);
    discard();
    return message;
  }
  done_ = true;
  return std::nullopt;
}

std::optional<std::string> writeOutput(const std::string &path,
                                       const std::string &contents,
                                       std::ostream &stdoutStream) {
  std::string error;
  std::optional<OutputFile> out = OutputFile::open(path, stdoutStream, error);
  if (!out)
    return error;
  out->stream().write(contents.data(),
                      static_cast<std::streamsize>(contents.size()));
  return out->commit();
}

} // namespace aoa
