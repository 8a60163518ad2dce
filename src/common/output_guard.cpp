// Output-versus-input check; see output_guard.h.
#include "common/output_guard.h"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include "common/error.h"

namespace tisa {
namespace {

namespace stdfs = std::filesystem;

// Same file: same device and inode when both exist (covers hard and symbolic links), else the
// same canonical path (an output that does not exist yet, reached through a link to the input's
// folder, still resolves to the input's path).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const auto ca = stdfs::weakly_canonical(a, ea), cb = stdfs::weakly_canonical(b, eb);
  return !ea && !eb && ca == cb;
}

}  // namespace

void check_output_is_not_input(const std::string& option, const std::string& output,
                               const std::vector<std::string>& inputs) {
  if (output.empty() || output == "-") return;
  for (const auto& input : inputs) {
    if (input.empty() || !stdfs::exists(input)) continue;
    if (same_file(output, input))
      throw Error(option + " " + output + " is the same file as " + input +
                  ", an input of this command: writing it would destroy the input; write the output elsewhere");
  }
}

void check_output_folder_holds_no_input(const std::string& option, const std::string& folder,
                                        const std::vector<std::string>& inputs) {
  if (folder.empty()) return;
  std::error_code ec;
  const auto out = stdfs::weakly_canonical(folder, ec);
  if (ec) return;
  for (const auto& input : inputs) {
    if (input.empty() || !stdfs::exists(input)) continue;
    const auto in = stdfs::weakly_canonical(input, ec);
    if (ec) continue;
    // `in` equals `out` or lies below it: compare element by element, not as strings ("a/b" vs "a/bc").
    auto o = out.begin(), i = in.begin();
    for (; o != out.end() && i != in.end() && *o == *i; ++o, ++i) {
    }
    if (o == out.end() || same_file(folder, input))
      throw Error(option + " " + folder + " holds " + input +
                  ", an input of this command: the files written there could replace it; write the output elsewhere");
  }
}

std::vector<std::string> model_folder_inputs(const std::string& model_dir) {
  std::vector<std::string> files;
  for (const char* name : {"config.json", "model.safetensors", "spiece.model", "vocab.txt", "tokenizer.json",
                           "tokenizer_config.json", "special_tokens_map.json", "tisa_tokenizer.json",
                           "tisa_identity.json"}) {
    const auto path = (stdfs::path(model_dir) / name).string();
    if (stdfs::exists(path)) files.push_back(path);
  }
  return files;
}

}  // namespace tisa
