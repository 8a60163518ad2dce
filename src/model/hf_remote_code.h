// Which Hugging Face form a model is exported in (SPEC §4).
//
// HF's ALBERT computes learned absolute positions only (transformers 5 dropped relative_key), so
//  - a model with absolute positions and no relative term is a plain `albert` directory, and
//  - every other model (TISA, Shaw — including HF relative_key's layout —, absolute + a relative
//    term, no positions) is written as remote code: model_type `tisa_albert`, architectures
//    TisaAlbertFor…, an auto_map, and this project's configuration/modelling Python files
//    (src/model/hf_remote/, compiled into the binary), so that
//    `AutoModelForPreTraining.from_pretrained(dir, trust_remote_code=True)` reproduces our forward,
//    while a plain `AlbertForPreTraining.from_pretrained(dir)` warns about the model type and lists
//    the scheme's parameters as unexpected (and a missing position table as missing).
// This file owns those names; hf_checkpoint.cpp asks it.
#pragma once
#include <map>
#include <string>

#include "config/config.h"

namespace tisa::model {

inline constexpr const char* kAlbertModelType = "albert";
inline constexpr const char* kRemoteModelType = "tisa_albert";
inline constexpr const char* kRemoteArchitecturePrefix = "Tisa";

// True when HF's own ALBERT computes exactly this position setting.
bool plain_albert_expresses(const config::PositionConfig& position);
// "AlbertForPreTraining" → "TisaAlbertForPreTraining".
std::string remote_architecture(const std::string& architecture);
// An HF architecture name of either form → ours ("TisaAlbertForPreTraining" → "AlbertForPreTraining").
std::string strip_remote_prefix(const std::string& architecture);
// The config.json auto_map of remote-code directories: Auto class → "module.Class".
std::map<std::string, std::string> remote_auto_map();
// Writes the remote-code Python files into `dir` (atomically, each).
void write_remote_code_files(const std::string& dir);

}  // namespace tisa::model
