// AOA ("All in One Arrow") statements, as accepted by Paddle FlexCheckpoint's
// lexer and parser (docs/language.md), plus our extensions:
//   * `;` separates statements like a newline does;
//   * `#` starts a comment that runs to the end of the line;
//   * integers may be negative (`axis=-1`);
//   * backquoted names spell keys the Paddle lexer cannot (`model/layer-0.w`).
//
// A program is `(statement? (NEWLINE | SEMI))*`. The frontend splits the token
// stream at separators and parses each statement on its own with the
// `statementOnly` rule, so one malformed statement never hides the next.
//
// Meaning is not decided here: `_` (add/remove), macro tags such as
// `fused_ffn`, placeholders (`$LAYER_ID`, `*`) and attribute keys are ordinary
// identifiers to the grammar and are classified when the AST is built.
grammar AOA;

statementOnly : statement EOF ;

statement : nameList ARROW rhsItem (COMMA rhsItem)* ;

nameList : name (COMMA name)* ;

// Right-hand side: destination names, then macro tags and attributes. The
// order rules (no name after an attribute) are checked by the AST builder so
// that they get a precise diagnostic.
rhsItem : attribute | name ;

attribute : identifier EQUAL attributeValue ;

attributeValue : NUMBER | STRING ;

name : identifier range? TRANSPOSE? ;

identifier : IDENT | QUOTED_IDENT ;

range : LBRACKET NUMBER COLON NUMBER RBRACKET ;

ARROW     : '->' ;
EQUAL     : '=' ;
COLON     : ':' ;
LBRACKET  : '[' ;
RBRACKET  : ']' ;
COMMA     : ',' ;
SEMI      : ';' ;
// `^T` is only a suffix; unlike Paddle, `^` elsewhere in a name is an error.
TRANSPOSE : '^T' ;
NUMBER    : '-'? [0-9]+ ;
// No escapes, as in Paddle; a string may not span lines.
STRING    : '"' ~["\r\n]* '"' | '\'' ~['\r\n]* '\'' ;
IDENT     : [A-Za-z_] [A-Za-z0-9._$*]* ;
QUOTED_IDENT : '`' ~[`\r\n]+ '`' ;
NEWLINE   : [\r\n]+ ;
WS        : [ \t]+ -> skip ;
COMMENT   : '#' ~[\r\n]* -> skip ;

// Error tokens: the lexer never fails; the frontend turns these into
// diagnostics with a location and a hint.
UNTERMINATED_STRING : '"' ~["\r\n]* | '\'' ~['\r\n]* ;
UNTERMINATED_QUOTED_IDENT : '`' ~[`\r\n]* ;
UNEXPECTED_CHAR : . ;
