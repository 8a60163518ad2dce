// Unicode helpers of the tokenizers (SPEC §6): UTF-8 decoding with a fixed rule for invalid bytes,
// and the few Python `str` / `unicodedata` behaviours that the reference tokenizers depend on
// (str.split() whitespace, str.lower() with its special cases, str.isdigit(), NFC/NFD/NFKD and
// combining classes), built on utf8proc. Torch-free.
//
// Invalid UTF-8 rule (used by every tokenizer): at each position, a well-formed UTF-8 sequence
// (shortest form, no surrogates, at most U+10FFFF) is decoded as one code point; otherwise the
// single byte at that position becomes U+FFFD and decoding resumes at the next byte. So invalid
// input never throws and never crashes; "a\xffb" reads as "a\uFFFDb".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace tisa::text::unicode {

constexpr char32_t kReplacement = 0xFFFD;

// Decodes one code point at s[i]; returns it and sets `len` to the bytes consumed (>= 1).
char32_t decode_one(std::string_view s, size_t i, size_t& len);
// Whole string, applying the invalid-byte rule above.
std::u32string decode(std::string_view s);
void append_utf8(std::string& out, char32_t cp);
std::string encode(std::u32string_view s);
// True when every byte is < 0x80.
bool is_ascii(std::string_view s);
// Number of code points (counts the bytes that do not continue a sequence).
size_t count_code_points(std::string_view utf8);

// Python str.isspace(): \t\n\v\f\r, \x1c-\x1f, space, \x85, NBSP, U+1680, U+2000-U+200A,
// U+2028, U+2029, U+202F, U+205F, U+3000.
bool is_python_space(char32_t c);
// Python str.isdigit() of one character (Numeric_Type Decimal or Digit).
bool is_python_digit(char32_t c);
// Python str.lower(): full lowercase mapping (U+0130 -> "i\u0307") and the Final_Sigma rule.
std::u32string python_lower(std::u32string_view s);

// Unicode general category as its two-letter name, e.g. "Lu", "Mn", "Cc".
const char* category(char32_t c);
bool is_category_c(char32_t c);     // any C* (Cc, Cf, Cs, Co, Cn)
bool is_category_mn(char32_t c);
bool is_category_zs(char32_t c);
bool is_category_p(char32_t c);     // any P*
int combining_class(char32_t c);

// Normal forms of code-point strings.
std::u32string nfd(std::u32string_view s);
std::u32string nfkd(std::u32string_view s);
std::u32string nfc(std::u32string_view s);

}  // namespace tisa::text::unicode
