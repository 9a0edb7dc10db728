//===- TokenKinds.h - Mapping between ANTLR token types and ours -*- C++ -*-===//
#ifndef AOA_FRONTEND_LIB_TOKENKINDS_H
#define AOA_FRONTEND_LIB_TOKENKINDS_H

#include "aoa/frontend/Lexer.h"

#include <cstddef>

namespace aoa {

TokenKind tokenKindFromAntlr(size_t antlrType);
size_t antlrTypeFromTokenKind(TokenKind kind);

} // namespace aoa

#endif
