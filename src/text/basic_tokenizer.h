// BERT's BasicTokenizer (transformers 4.30.2) as one pass over UTF-8 bytes that hands each final
// word to a sink: the WordPiece tokenizer turns words into pieces, the WordPiece trainer counts
// them. Internal to src/text (used by wordpiece_tokenizer.cpp and tokenizer_trainer.cpp).
//
// Steps, in the reference order: drop U+0000, U+FFFD (and invalid bytes, read as U+FFFD) and every
// C* character except \t\n\r; \t\n\r, space and Zs separate words (Zl/Zp too, via str.split());
// CJK ideographs become words of their own; a word equal to one of the five special-token strings
// is passed whole; otherwise NFC, lowercase (Python) and NFD + drop Mn (when strip_accents), then
// each punctuation character (ASCII 33-47, 58-64, 91-96, 123-126, Unicode P*) is a word of its own.
// ASCII words take a fast path (no decoding; table lowercase and punctuation split).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "text/unicode.h"

namespace tisa::text::detail {

enum AsciiClass : uint8_t { kOther = 0, kSpace = 1, kDrop = 2, kPunct = 3 };

struct AsciiTables {
  std::array<uint8_t, 128> cls{};
  std::array<char, 128> lower{};
  AsciiTables() {
    for (int c = 0; c < 128; ++c) {
      lower[c] = char(c >= 'A' && c <= 'Z' ? c + 32 : c);
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        cls[c] = kSpace;
      else if (c < 32 || c == 127)  // Cc other than \t\n\r (U+0000 included) is removed
        cls[c] = kDrop;
      else if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
        cls[c] = kPunct;
      else
        cls[c] = kOther;
    }
  }
};
inline const AsciiTables kAscii;

inline bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

inline bool is_bert_punctuation(char32_t cp) {
  if (cp < 128) return kAscii.cls[cp] == kPunct;
  return unicode::is_category_p(cp);
}

inline bool is_special_string(std::string_view t) {
  return t.size() >= 5 && t.size() <= 6 && t[0] == '[' &&
         (t == "[UNK]" || t == "[SEP]" || t == "[PAD]" || t == "[CLS]" || t == "[MASK]");
}

struct BasicOptions {
  bool lowercase = true;
  bool strip_accents = true;  // only applied when lowercase (BERT's strip_accents=None)
};

// One whitespace token (already cleaned) -> words.
template <class Sink>
void basic_process_token(std::string_view token, bool ascii, const BasicOptions& o, Sink& sink) {
  if (is_special_string(token)) {  // never_split: kept whole, not lowercased
    sink(token);
    return;
  }
  if (!ascii) {
    std::u32string t = unicode::nfc(unicode::decode(token));
    if (o.lowercase) {
      t = unicode::python_lower(t);
      if (o.strip_accents) {
        std::u32string d = unicode::nfd(t);
        t.clear();
        for (char32_t c : d)
          if (!unicode::is_category_mn(c)) t.push_back(c);
      }
    }
    std::string word, single;
    for (char32_t c : t) {
      if (is_bert_punctuation(c)) {
        if (!word.empty()) sink(std::string_view(word));
        word.clear();
        single.clear();
        unicode::append_utf8(single, c);
        sink(std::string_view(single));
      } else {
        unicode::append_utf8(word, c);
      }
    }
    if (!word.empty()) sink(std::string_view(word));
    return;
  }
  // ASCII fast path.
  char buf[512];
  size_t len = 0;
  auto flush = [&]() {
    if (len) sink(std::string_view(buf, len));
    len = 0;
  };
  for (size_t i = 0; i < token.size(); ++i) {
    const auto c = uint8_t(token[i]);
    if (kAscii.cls[c] == kPunct) {
      flush();
      sink(token.substr(i, 1));
      continue;
    }
    if (len == sizeof(buf)) {  // a very long word: pass it on from a heap copy
      std::string big(buf, len);
      while (i < token.size() && kAscii.cls[uint8_t(token[i])] != kPunct) {
        big.push_back(o.lowercase ? kAscii.lower[uint8_t(token[i])] : token[i]);
        ++i;
      }
      --i;
      len = 0;
      sink(std::string_view(big));
      continue;
    }
    buf[len++] = o.lowercase ? kAscii.lower[c] : char(c);
  }
  flush();
}

// The whole text -> words, in order; `sink(std::string_view word)` is called once per word.
template <class Sink>
void basic_tokenize(std::string_view text, const BasicOptions& o, Sink&& sink) {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  constexpr size_t kNone = size_t(-1);
  size_t start = kNone;
  bool use_buf = false, ascii = true;
  std::string buf;  // the cleaned token, only when a removed character sits inside it
  auto flush = [&](size_t end) {
    if (start != kNone) {
      const std::string_view tok = use_buf ? std::string_view(buf) : text.substr(start, end - start);
      if (!tok.empty()) basic_process_token(tok, ascii, o, sink);
    }
    start = kNone;
    use_buf = false;
    ascii = true;
  };
  auto drop = [&](size_t i) {
    if (start != kNone && !use_buf) {
      buf.assign(text.data() + start, i - start);
      use_buf = true;
    }
  };
  size_t i = 0;
  while (i < n) {
    const uint8_t c = p[i];
    if (c < 0x80) {
      const uint8_t k = kAscii.cls[c];
      if (k == kSpace) {
        flush(i);
      } else if (k == kDrop) {
        drop(i);
      } else {
        if (start == kNone) start = i;
        if (use_buf) buf.push_back(char(c));
      }
      ++i;
      continue;
    }
    size_t len = 0;
    const char32_t cp = unicode::decode_one(text, i, len);
    if (cp == unicode::kReplacement || unicode::is_category_c(cp)) {
      drop(i);
    } else if (unicode::is_category_zs(cp) || cp == 0x2028 || cp == 0x2029) {
      flush(i);
    } else if (is_chinese_char(cp)) {
      flush(i);
      basic_process_token(text.substr(i, len), false, o, sink);
    } else {
      if (start == kNone) start = i;
      ascii = false;
      if (use_buf) buf.append(text.data() + i, len);
    }
    i += len;
  }
  flush(n);
}

}  // namespace tisa::text::detail
