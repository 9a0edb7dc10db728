//===- PlanSite.h - Naming the parts of a plan in diagnostics ---*- C++ -*-===//
//
// The verifier (PlanVerifier.cpp) checks the in-memory plan, which has no
// source locations. It names what each finding is about as a PlanSite; a
// PlanLocator turns a site into a location (the reader maps it to the line
// and the field of the plan text). Without a locator, messages start with
// the site in words ("rank 1, round 0, instruction 3 (copy): ").
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_PLANSITE_H
#define AOA_FORMATS_PLAN_LIB_PLANSITE_H

#include "ErrorLimit.h"

#include "aoa/ir/Plan.h"

#include <cstdint>
#include <string>

namespace aoa {

struct PlanSite {
  enum class Kind {
    Empty, ///< a blank or `#` comment line of the text: no site
    Header,
    Ranks,        ///< the `ranks` line
    MemoryBudget, ///< the `memory-budget` line
    DestinationFormat,
    SourceAccess, ///< the `source-access` line
    SourceFile,
    DestinationFile,
    SourceTensor,
    DestinationTensor,
    AddedKey,
    CopyFile,
    Rank,
    Round,
    Instruction,
  };
  /// A part of the line; Whole is the line itself.
  enum class Field {
    Whole,
    Rank,       ///< a file's owner
    Path,       ///< a file's path
    File,       ///< a tensor's file
    Name,       ///< a tensor's in-file name
    Type,       ///< a tensor's dtype and global shape
    Box,        ///< a tensor's box
    Flat,       ///< a tensor's flat range
    Size,       ///< a source file's size
    Data,       ///< a source tensor's data offsets
    Tensor,     ///< an instruction's tensor id
    Region,     ///< an instruction's region
    Peer,       ///< a send's or recv's peer
    Operand,    ///< a buffer used (item: which)
    Result,     ///< a buffer defined (item: which)
    ResultType, ///< the declared type of a defined buffer (item: which)
    Step,       ///< a transform step of a copy (item: which)
  };

  Kind kind = Kind::Header;
  Field field = Field::Whole;
  /// The file, tensor, added key or copied file id; the rank for Rank, Round, Instruction.
  uint32_t index = 0;
  uint32_t round = 0;
  uint32_t instruction = 0;
  uint32_t item = 0;
};

class PlanLocator {
public:
  virtual ~PlanLocator() = default;
  virtual SourceLocation locate(const PlanSite &site) const = 0;
};

/// verifyPlan (PlanVerifier.h) sharing the reader's error limit; findings
/// point where `locator` says (nullptr: nowhere, named in words).
bool verifyPlanWith(const plan::Plan &plan, ErrorLimit &errors,
                    const PlanLocator *locator);

} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_PLANSITE_H
