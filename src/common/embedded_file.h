// Text files compiled into a binary by cmake/embed_text_files.cmake (name + content), e.g. the
// Hugging Face remote-code files that model export writes next to config.json. The generated
// accessor functions are declared where they are used (model/hf_remote_code.h).
#pragma once
#include <string>
#include <vector>

namespace tisa {

struct EmbeddedFile {
  const char* name;  // file name, no directory ("modeling_tisa_albert.py")
  std::string text;  // the whole file
};

}  // namespace tisa
