// Export form of a model and its remote-code pieces; see hf_remote_code.h.
#include "model/hf_remote_code.h"

#include <filesystem>

#include "common/fs.h"

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

void write_remote_code_files(const std::string& dir) {
  for (const auto& file : hf_remote_code_files())
    fs::write_file_atomic((std::filesystem::path(dir) / file.name).string(), file.text);
}

}  // namespace tisa::model
