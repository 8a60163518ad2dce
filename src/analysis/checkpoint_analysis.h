// `tisa-train analyze`: the translation-invariance analysis of a Hugging Face-format checkpoint
// directory (config.json + model.safetensors), read directly, without building a model.
//
// Supported: ALBERT, BERT, RoBERTa and ELECTRA names (with or without the "<model_type>." prefix
// of the *ForPreTraining heads), and the parameters of tisa-train's position schemes,
// albert.encoder.<scheme>.<i>.* (the scheme named by config.json's tisa_train block; its term is
// asked of the scheme's modules, model/position/relative_scheme.h). Writes to the output folder:
//   analysis.json        every number: τ of P·Pᵀ and of each first-layer head's position term
//                        F̂_h (SPEC §9), their diagonal means (the effective offset kernel), and for
//                        a scheme whose term depends on j − i only (tisa, t5, alibi, ...) under its
//                        name: the parameters, the curves f_h(r) and τ of each bias matrix (1 by
//                        construction), with each module's f_h(r) again under "scheme";
//   gram.svg             heatmap of P·Pᵀ;   gram_toeplitz.svg   P·Pᵀ, its Toeplitz projection, residual;
//   heads.svg            one heatmap per head of F̂_h;   head_profiles.svg   diagonal means vs j − i;
//   <scheme>_kernels.svg f_h(r) per module (zoomed on where it lives);  <scheme>_bias.svg  module 0's
//                        bias matrices;  <scheme>_profile.svg  f_h(r) per module over every offset.
// Matrices themselves are not stored in the JSON (12·512² numbers); the pictures show them.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace tisa::analysis {

struct AnalyzeOptions {
  std::string model_dir;   // config.json + model.safetensors
  std::string out_dir;     // created if missing
  int64_t positions = 0;   // n leading positions analysed; 0 = every row of the table
  bool pictures = true;    // write the SVG files (analysis.json is always written)
};

// Runs the analysis, writes the files, returns the content of analysis.json. Throws tisa::Error
// naming the file or tensor when the checkpoint lacks what the analysis needs.
nlohmann::json analyze_checkpoint(const AnalyzeOptions& options);

}  // namespace tisa::analysis
