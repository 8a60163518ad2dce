// `tisa-train analyze`: the translation-invariance analysis of a Hugging Face-format checkpoint
// directory (config.json + model.safetensors), read directly, without building a model.
//
// Supported: ALBERT, BERT, RoBERTa and ELECTRA names (with or without the "<model_type>." prefix
// of the *ForPreTraining heads), and our TISA parameters albert.encoder.tisa.<layer>.*. Writes to
// the output folder:
//   analysis.json        every number: τ of P·Pᵀ and of each first-layer head's position term
//                        F̂_h (SPEC §9), their diagonal means (the effective offset kernel), and for
//                        TISA models the parameters, the kernel curves f_h(r) and τ of each bias
//                        matrix (1 by construction);
//   gram.svg             heatmap of P·Pᵀ;   gram_toeplitz.svg   P·Pᵀ, its Toeplitz projection, residual;
//   heads.svg            one heatmap per head of F̂_h;   head_profiles.svg   diagonal means vs j − i;
//   tisa_kernels.svg     f_h(r) per layer (one series per head);   tisa_bias.svg  layer 0's bias matrices.
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
