// TensorBoard Event protobufs, encoded by hand (io/protobuf_wire.h) with the field numbers of
// tensorboard/compat/proto/{event,summary,tensor,tensor_shape}.proto and of the hparams plugin
// (plugins/hparams/{api,plugin_data}.proto) and text plugin (plugins/text/plugin_data.proto).
// Each function returns one serialised Event, to be framed as a TFRecord (io/tf_record.h).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tisa::io::tensorboard {

inline constexpr const char* kExperimentTag = "_hparams_/experiment";
inline constexpr const char* kSessionStartTag = "_hparams_/session_start_info";
inline constexpr const char* kSessionEndTag = "_hparams_/session_end_info";

// The first event of every file: file_version "brain.Event:2".
std::string file_version_event(double wall_time);

// Scalars at one step (Summary.Value.simple_value: float32, as TensorBoard's own writers).
struct Scalar {
  std::string tag;
  double value = 0;
};
std::string scalars_event(double wall_time, int64_t step, const std::vector<Scalar>& scalars);

// A text plugin summary: a scalar DT_STRING tensor holding Markdown.
std::string text_event(double wall_time, int64_t step, const std::string& tag, std::string_view markdown);

// One hyper-parameter: a google.protobuf.Value that is a bool, a number or a string.
struct HParam {
  std::string name;
  std::variant<bool, double, std::string> value;
};
// The hparams plugin's Experiment: one HParamInfo per hyper-parameter (name and type, from
// `hparams`' values) and one MetricInfo per scalar tag of `metric_tags`.
std::string hparams_experiment_event(double wall_time, const std::vector<HParam>& hparams,
                                     const std::vector<std::string>& metric_tags);
// SessionStartInfo: this run's values; `group_name` "" lets TensorBoard group by values.
std::string session_start_event(double wall_time, const std::vector<HParam>& hparams, const std::string& group_name);
// SessionEndInfo with api.proto's Status.
enum class SessionStatus { kSuccess = 1, kFailure = 2 };
std::string session_end_event(double wall_time, int64_t step, SessionStatus status);

// What a resume needs to know of a written event: its step and the tags of its summary values.
struct EventInfo {
  bool ok = false;  // false: not a parseable Event
  int64_t step = 0;
  std::vector<std::string> tags;
};
EventInfo read_event_info(std::string_view event);

}  // namespace tisa::io::tensorboard
