// Export form of a model and its remote-code pieces; see hf_remote_code.h.
#include "model/hf_remote_code.h"

#include <filesystem>

#include "common/error.h"
#include "common/fs.h"
#include "model/position/registry.h"

namespace tisa::model {

bool plain_albert_expresses(const config::PositionConfig& p) {
  return p.absolute && p.relative == "none";
}

std::string remote_architecture(const std::string& architecture) { return kRemoteArchitecturePrefix + architecture; }

std::string strip_remote_prefix(const std::string& architecture) {
  const std::string prefix = kRemoteArchitecturePrefix;
  return architecture.rfind(prefix, 0) == 0 ? architecture.substr(prefix.size()) : architecture;
}

std::map<std::string, std::string> remote_auto_map() {
  // Module names are the embedded files' names without ".py" (src/model/hf_remote/).
  return {{"AutoConfig", "configuration_tisa_albert.TisaAlbertConfig"},
          {"AutoModel", "modeling_tisa_albert.TisaAlbertModel"},
          {"AutoModelForPreTraining", "modeling_tisa_albert.TisaAlbertForPreTraining"},
          {"AutoModelForSequenceClassification", "modeling_tisa_albert.TisaAlbertForSequenceClassification"}};
}

namespace {
constexpr const char* kModelingFile = "modeling_tisa_albert.py";
}  // namespace

const EmbeddedFile* remote_code_fragment(const std::string& name) {
  for (const auto& file : position_scheme_code_files())
    if (name + ".py" == file.name) return &file;
  return nullptr;
}

std::string remote_modeling_code() {
  std::string code;
  for (const auto& file : hf_remote_code_files())
    if (std::string(file.name) == kModelingFile) code = file.text;
  TISA_CHECK(!code.empty(), std::string("remote code: ") + kModelingFile + " is not compiled in");
  for (const auto& name : relative_scheme_names())
    if (const EmbeddedFile* fragment = remote_code_fragment(name))
      code += "\n\n# --- " + name + " (src/model/position/" + fragment->name + ")\n" + fragment->text;
  return code;
}

void write_remote_code_files(const std::string& dir) {
  for (const auto& file : hf_remote_code_files()) {
    const std::string path = (std::filesystem::path(dir) / file.name).string();
    fs::write_file_atomic(path, std::string(file.name) == kModelingFile ? remote_modeling_code() : file.text);
  }
}

}  // namespace tisa::model
