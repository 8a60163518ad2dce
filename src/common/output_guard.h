// The one check that an output file never replaces an input: every command that writes a file
// names the files it reads, and an output path that resolves to one of them (the same path, or
// the same file through "..", symbolic links or hard links) is refused before anything is read
// or written. Torch-free.
#pragma once
#include <string>
#include <vector>

namespace tisa {

// Throws tisa::Error "<option> <output> is the same file as <input> (an input of this command);
// write the output elsewhere" when `output` resolves to one of `inputs`. Inputs that do not exist
// are ignored (their own check reports them).
void check_output_is_not_input(const std::string& option, const std::string& output,
                               const std::vector<std::string>& inputs);

// For commands that write a folder of files: throws tisa::Error when `folder` resolves to one of
// `inputs` or holds one of them (at any depth), since the files written there could replace it.
// Inputs may be files or folders; those that do not exist are ignored.
void check_output_folder_holds_no_input(const std::string& option, const std::string& folder,
                                        const std::vector<std::string>& inputs);

// The files of a model folder that commands read: config.json, model.safetensors and the
// tokenizer files, those present.
std::vector<std::string> model_folder_inputs(const std::string& model_dir);

}  // namespace tisa
