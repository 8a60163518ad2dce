// "Resume keeps its word" for GLUE (README), by pretraining's rule (train/architecture_check.h):
// a resumed fine-tuning continues the training that its seed-N/config.yaml records. The model it
// started from is part of that record (glue.init_identity, a content hash of the --init folder);
// only glue_keys_allowed_to_change_on_resume() may differ, and the record is not rewritten.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"

namespace tisa::glue {

// Hash of the names and contents of the model folder's files (config.json, weights, tokenizer).
std::string init_identity(const std::string& init_dir);

// Settings that do not change what is trained: logging and checkpoint intervals, threads, device.
std::vector<std::string> glue_keys_allowed_to_change_on_resume();

// Throws tisa::Error naming each other key whose value differs between `seed_dir`/config.yaml and
// `requested`, with both values. No config.yaml there (the seed never started): nothing to check.
void check_glue_resume(const std::string& seed_dir, const config::Config& requested);

}  // namespace tisa::glue
