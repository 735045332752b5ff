// utf8.h — well-formedness of UTF-8 text (Task 7: the tokenizer's input, generated text in reports).
#pragma once
#include <string>

namespace llm {

// The offset of the first byte at or after `from` that does not start a well-formed UTF-8
// character (by lead and continuation bytes), or std::string::npos.
size_t first_invalid_utf8(const std::string& s, size_t from = 0);

// Text for a report: each such byte becomes U+FFFD (a token may end inside a character).
std::string printable(const std::string& bytes);

}  // namespace llm
