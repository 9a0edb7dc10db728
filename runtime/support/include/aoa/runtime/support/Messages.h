//===- Messages.h - Wording shared by runtime errors ------------*- C++ -*-===//
//
// Storage errors of the runtime and of the checkpoint tools are phrased
// alike ("FILE: tensor 'NAME': what is wrong"), and shapes and ranges are
// written alike in every error.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_SUPPORT_MESSAGES_H
#define AOA_RUNTIME_SUPPORT_MESSAGES_H

#include <cstdint>
#include <string>
#include <string_view>

namespace aoa::runtime {

/// The dtypes this runtime reads and writes, as the header spells them.
inline constexpr const char *kSupportedDTypeList =
    "F64, F32, F16, BF16, F8_E4M3, F8_E5M2, F8_E8M0, I64, I32, I16, I8, U64, "
    "U32, U16, U8, BOOL, F8_E4M3FNUZ, F8_E5M2FNUZ and C64";

/// The hint for failures the operating system reports (EIO and the like).
inline constexpr const char *kSystemErrorHint =
    "the operating system reported the failure; check the disk and the file "
    "system (dmesg), then retry";

/// "FILE: what".
std::string storageMessage(std::string_view fileName, std::string_view what);

/// 'name' with control characters shown as \xNN, so that a corrupt name
/// cannot garble the terminal.
std::string quoteName(std::string_view name);

/// "[2, 3]" for any range of integers.
template <typename Range> std::string formatExtents(const Range &values) {
  std::string text = "[";
  for (const auto &value : values)
    text += (text.size() > 1 ? ", " : "") + std::to_string(value);
  return text + "]";
}

/// Appends `byte` as two lowercase hex digits.
void appendHexByte(std::string &out, unsigned char byte);

/// "[begin, end)".
std::string formatByteRange(uint64_t begin, uint64_t end);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_SUPPORT_MESSAGES_H
