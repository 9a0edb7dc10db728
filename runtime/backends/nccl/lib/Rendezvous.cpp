//===- Rendezvous.cpp -----------------------------------------------------===//
#include "Rendezvous.h"

#include "aoa/runtime/storage/AtomicFile.h"

#include <cerrno>
#include <fstream>
#include <iterator>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace aoa::runtime {

namespace {

const char *const kFileName = "aoa-run-nccl-id";

} // namespace

std::string rendezvousFilePath(const std::string &directory) {
  return directory + "/" + kFileName;
}

Status publishRendezvous(const std::string &directory,
                         const std::string &secret) {
  struct stat info;
  if (::stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return Error{"the rendezvous directory '" + directory +
                     "' does not exist",
                 "create it on a file system every rank sees, and pass the "
                 "same --rendezvous to every rank"};
  std::string path = rendezvousFilePath(directory);
  if (::access(path.c_str(), F_OK) == 0)
    return Error{"'" + path + "' already exists: another aoa-run job is "
                 "starting in this directory, or one crashed before it "
                 "removed the file",
                 "remove the file if no job is using the directory, or use "
                 "another --rendezvous directory"};
  return writeFileAtomically(path, secret);
}

Expected<std::string> awaitRendezvous(const std::string &directory, size_t size,
                                      std::chrono::milliseconds timeout) {
  std::string path = rendezvousFilePath(directory);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(10);
  while (true) {
    std::ifstream file(path, std::ios::binary);
    if (file) {
      std::string text((std::istreambuf_iterator<char>(file)),
                       std::istreambuf_iterator<char>());
      if (text.size() != size)
        return Error{"'" + path + "' holds " + std::to_string(text.size()) +
                         " bytes, not the " + std::to_string(size) +
                         " of an aoa-run rendezvous",
                     "remove it if no job is using the directory, and start "
                     "the job again"};
      return text;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return Error{"rank 0 did not publish '" + path + "' within " +
                       std::to_string(timeout.count() / 1000) + " s",
                   "start rank 0 with the same --rendezvous directory (one "
                   "every rank sees), or raise AOA_RENDEZVOUS_TIMEOUT "
                   "(seconds)"};
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
}

Status removeRendezvous(const std::string &directory) {
  std::string path = rendezvousFilePath(directory);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return Error{"cannot remove '" + path + "': " + errnoText(errno),
                 "remove it by hand before the next job uses the directory"};
  return Status();
}

} // namespace aoa::runtime
