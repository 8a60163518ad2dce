// YAML → typed Config (STYLE §4, §5, §7): the one place where configuration files are read.
//
// Everything here is derived from the visit() lists in config.h, so a new field needs no code in
// this file. What a config file may contain:
//   * the sections and keys of config.h (unknown keys are errors that list the known keys and
//     suggest the closest one);
//   * a top-level `base: <path>` naming a config to extend. The path is relative to the file that
//     names it; maps are merged deeply and the child wins; chains are allowed, cycles are errors.
// Precedence: defaults < YAML (base first, then each child) < `--set key.path=value` overrides.
// Overrides are applied to the YAML tree before conversion, so they pass the same type checks
// and validate() as values from files.
// Relative paths in path-valued keys (kPathKeys below: data.dataset) are resolved against the
// folder of the file that set them (for --set values: against the current directory, i.e. left
// as given). Absolute paths and empty values are kept as they are.
// Errors are tisa::Error with one line per problem, each
//   "<file>:<line>:<column>: <key.path>: <what was wrong> (<what was expected>)".
// The settings of position schemes (model.position.<scheme>) are the schemes' own
// (position_settings.h); which schemes exist is installed by the model library.
//
// The files of src/config/, one job each:
//   config.h, position_settings.h   the typed structs and their visit() lists; the scheme catalog
//   yaml_tree         located tree (file:line:column of every value), YAML → tree, deep merge
//   inheritance       `base:` chains and file-relative paths
//   overrides         `--set key.path=value` applied to the tree
//   tree_reader       tree → structs (the Reader visitor: types, choices, unknown keys)
//   validate          every range and cross-field rule
//   json_io           structs ⇄ JSON
//   dump              dump_yaml, describe_defaults, flatten_config (writer visitors)
//   value_format, suggest   values as text; "did you mean" hints
//   config_loader     this API: load_config and friends, composing the above
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"

namespace tisa::config {

// Keys whose values are file-system paths resolved against the defining file's folder.
extern const std::vector<std::string> kPathKeys;

// All defaults (config.h), validated.
Config default_config();

// Loads `path` (following `base:` chains), applies `overrides` ("key.path=value", YAML value
// syntax: `--set model.position.relative=tisa`, `--set data.dataset='my dir'`), converts and
// validates. Throws tisa::Error listing every problem found.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// Whether `path` (with its base chain) writes `dotted_key` itself, e.g. to tell a run's config.yaml
// written before a key existed from one that states the default.
bool config_file_sets(const std::string& path, const std::string& dotted_key);

// Defaults plus overrides only (no file), e.g. for commands where a config file is optional.
Config config_from_overrides(const std::vector<std::string>& overrides);

// ConfigProblem (position_settings.h): one problem found by validate().
// Every range and cross-field rule; returns all problems (empty = valid).
std::vector<ConfigProblem> validate(const Config& config);
// Throws tisa::Error listing all problems of validate(), prefixed by `source`.
void validate_or_throw(const Config& config, const std::string& source = "config");

// The fully resolved config as YAML, every field, with the help text as comments. Loading the
// output gives back the same Config.
std::string dump_yaml(const Config& config);
// dump_yaml() written atomically (e.g. run_dir/config.yaml).
void write_resolved_config(const Config& config, const std::string& path);

// Every key path with its type, default and help, one per line (for --help and docs).
std::string describe_defaults();

// Every field as (key path, value as dump_yaml() writes it), in visit() order, e.g.
// ("model.hidden_size", "768"); the model's keys start with "model.".
std::vector<std::pair<std::string, std::string>> flatten_config(const Config& config);
std::vector<std::pair<std::string, std::string>> flatten_model_config(const ModelConfig& model);

// ModelConfig ⇄ JSON (the `tisa_train` block of a checkpoint's config.json, SPEC §4): nested
// objects per section, enums as their names. from_json goes through the same conversion as YAML,
// so unknown keys and wrong types are errors naming `source`; missing keys keep their defaults.
nlohmann::json model_config_to_json(const ModelConfig& model);
ModelConfig model_config_from_json(const nlohmann::json& json, const std::string& source);
nlohmann::json config_to_json(const Config& config);
// The position section alone (config.json's tisa_train.position); errors name `source` and the
// key under `key_prefix` (e.g. "tisa_train.position.tisa.kernelz: unknown key"). Not validated.
nlohmann::json position_config_to_json(const PositionConfig& position);
PositionConfig position_config_from_json(const nlohmann::json& json, const std::string& source,
                                         const std::string& key_prefix);

// Helpers shared with other config-like readers.
// Levenshtein distance, for "did you mean" hints.
size_t edit_distance(const std::string& a, const std::string& b);
// Closest candidate within a small distance, or "" if none is close.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace tisa::config
