// Small file-system helpers: whole-file reads with errors that name the file, and atomic writes
// (temp file in the same folder + fsync + rename + fsync of the folder) so that a crash never
// leaves a half-written checkpoint, dataset header or metrics summary behind.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace tisa::fs {

// Reads a whole file; throws tisa::Error("cannot open <path>: <strerror>") when it cannot.
std::string read_file(const std::string& path);

// Reads a file that must be UTF-8 text (corpora, GLUE TSVs): throws tisa::Error naming the file,
// line and column of the first byte that is not well-formed UTF-8 (RFC 3629: no overlong forms,
// surrogates or code points past U+10FFFF), or saying it is binary when it holds a NUL byte.
// Tokenizers would otherwise turn such bytes into U+FFFD or <unk> without a word.
std::string read_utf8_text_file(const std::string& path);
// Length of the well-formed UTF-8 sequence at s[i] (1-4), or 0 when it is not one.
size_t utf8_sequence_length(std::string_view s, size_t i);

// Writes `data` to `path` atomically: readers see the old file or the new one, never a mix.
void write_file_atomic(const std::string& path, std::string_view data);

// fsyncs a file or directory by path (used after renames).
void fsync_path(const std::string& path);

// Creates a directory and its parents; throws tisa::Error naming it on failure.
void create_directories(const std::string& path);

bool exists(const std::string& path);

// Directory of the running executable (from /proc/self/exe), used to find sibling executables.
std::string executable_dir();

// 64-bit FNV-1a of a byte range; for cache keys and content identities (not security).
uint64_t fnv1a64(std::string_view data, uint64_t seed = 0xcbf29ce484222325ULL);
// FNV-1a of a whole file, streamed. Hex string of 16 digits.
std::string file_hash_hex(const std::string& path);
std::string to_hex(uint64_t value);

}  // namespace tisa::fs
