// TensorBoard Event encoding; see tensorboard_events.h. Field numbers are given next to each
// message as "Message.field = number".
#include "io/tensorboard_events.h"

#include "io/protobuf_wire.h"

namespace tisa::io::tensorboard {
namespace {

// tensorboard/compat/proto/types.proto
constexpr uint64_t kDtFloat = 1, kDtString = 7;
// plugins/hparams/api.proto DataType
constexpr uint64_t kHParamString = 1, kHParamBool = 2, kHParamFloat64 = 3;

// Event{wall_time = 1, step = 2, summary = 5}.
std::string event_with_summary(double wall_time, int64_t step, const ProtoWriter& summary) {
  ProtoWriter event;
  event.float64(1, wall_time).int64(2, step).message(5, summary);
  return event.str();
}

// SummaryMetadata{plugin_data = 1: PluginData{plugin_name = 1, content = 2}}.
ProtoWriter plugin_metadata(const char* plugin, std::string_view content) {
  ProtoWriter plugin_data;
  plugin_data.bytes(1, plugin).bytes(2, content);
  ProtoWriter metadata;
  metadata.message(1, plugin_data);
  return metadata;
}

// Summary{value = 1: Value{tag = 1, metadata = 9, tensor = 8}} with the metadata-only tensor of
// TensorBoard's hparams writer (DT_FLOAT of shape [0]).
std::string hparams_event(double wall_time, int64_t step, const char* tag, const ProtoWriter& plugin_data) {
  ProtoWriter dim;  // TensorShapeProto.Dim{size = 1}
  dim.int64(1, 0);
  ProtoWriter shape;  // TensorShapeProto{dim = 2}
  shape.message(2, dim);
  ProtoWriter tensor;  // TensorProto{dtype = 1, tensor_shape = 2}
  tensor.varint(1, kDtFloat).message(2, shape);
  ProtoWriter value;
  value.bytes(1, tag).message(9, plugin_metadata("hparams", plugin_data.str())).message(8, tensor);
  ProtoWriter summary;
  summary.message(1, value);
  return event_with_summary(wall_time, step, summary);
}

// google.protobuf.Value{number_value = 2, string_value = 3, bool_value = 4}.
ProtoWriter protobuf_value(const std::variant<bool, double, std::string>& v) {
  ProtoWriter out;
  if (const auto* b = std::get_if<bool>(&v)) out.varint(4, *b ? 1 : 0);
  else if (const auto* d = std::get_if<double>(&v)) out.float64(2, *d);
  else out.bytes(3, std::get<std::string>(v));
  return out;
}

}  // namespace

std::string file_version_event(double wall_time) {
  ProtoWriter event;  // Event{wall_time = 1, file_version = 3}
  event.float64(1, wall_time).bytes(3, "brain.Event:2");
  return event.str();
}

std::string scalars_event(double wall_time, int64_t step, const std::vector<Scalar>& scalars) {
  ProtoWriter summary;
  for (const auto& s : scalars) {
    ProtoWriter value;  // Summary.Value{tag = 1, simple_value = 2}
    value.bytes(1, s.tag).float32(2, static_cast<float>(s.value));
    summary.message(1, value);
  }
  return event_with_summary(wall_time, step, summary);
}

std::string text_event(double wall_time, int64_t step, const std::string& tag, std::string_view markdown) {
  ProtoWriter tensor;  // TensorProto{dtype = 1, tensor_shape = 2 (scalar: empty), string_val = 8}
  tensor.varint(1, kDtString).message(2, ProtoWriter()).bytes(8, markdown);
  ProtoWriter value;  // Summary.Value{tag = 1, metadata = 9, tensor = 8}; TextPluginData{version 0} is empty
  value.bytes(1, tag).message(9, plugin_metadata("text", "")).message(8, tensor);
  ProtoWriter summary;
  summary.message(1, value);
  return event_with_summary(wall_time, step, summary);
}

std::string hparams_experiment_event(double wall_time, const std::vector<HParam>& hparams,
                                     const std::vector<std::string>& metric_tags) {
  ProtoWriter experiment;  // Experiment{time_created_secs = 3, hparam_infos = 4, metric_infos = 5}
  experiment.float64(3, wall_time);
  for (const auto& h : hparams) {
    const uint64_t type = std::holds_alternative<bool>(h.value)     ? kHParamBool
                          : std::holds_alternative<double>(h.value) ? kHParamFloat64
                                                                    : kHParamString;
    ProtoWriter info;  // HParamInfo{name = 1, type = 4}
    info.bytes(1, h.name).varint(4, type);
    experiment.message(4, info);
  }
  for (const auto& tag : metric_tags) {
    ProtoWriter name;  // MetricName{group = 1 (""), tag = 2}
    name.bytes(2, tag);
    ProtoWriter info;  // MetricInfo{name = 1}
    info.message(1, name);
    experiment.message(5, info);
  }
  ProtoWriter data;  // HParamsPluginData{version = 1 (0: omitted), experiment = 2}
  data.message(2, experiment);
  return hparams_event(wall_time, 0, kExperimentTag, data);
}

std::string session_start_event(double wall_time, const std::vector<HParam>& hparams, const std::string& group_name) {
  ProtoWriter start;  // SessionStartInfo{hparams = 1 (map<string, Value>), group_name = 4, start_time_secs = 5}
  for (const auto& h : hparams) {
    ProtoWriter entry;  // map entry{key = 1, value = 2}
    entry.bytes(1, h.name).message(2, protobuf_value(h.value));
    start.message(1, entry);
  }
  if (!group_name.empty()) start.bytes(4, group_name);
  start.float64(5, wall_time);
  ProtoWriter data;  // HParamsPluginData{session_start_info = 3}
  data.message(3, start);
  return hparams_event(wall_time, 0, kSessionStartTag, data);
}

std::string session_end_event(double wall_time, int64_t step, SessionStatus status) {
  ProtoWriter end;  // SessionEndInfo{status = 1, end_time_secs = 2}
  end.varint(1, static_cast<uint64_t>(status)).float64(2, wall_time);
  ProtoWriter data;  // HParamsPluginData{session_end_info = 4}
  data.message(4, end);
  return hparams_event(wall_time, step, kSessionEndTag, data);
}

EventInfo read_event_info(std::string_view event) {
  EventInfo info;
  ProtoReader reader(event);
  ProtoField f;
  while (reader.next(f)) {
    if (f.field == 2 && f.wire_type == 0) info.step = static_cast<int64_t>(f.number);
    if (f.field != 5 || f.wire_type != 2) continue;
    ProtoReader summary(f.data);  // Summary{value = 1}
    ProtoField v;
    while (summary.next(v)) {
      if (v.field != 1 || v.wire_type != 2) continue;
      ProtoReader value(v.data);  // Value{tag = 1}
      ProtoField t;
      while (value.next(t))
        if (t.field == 1 && t.wire_type == 2) info.tags.emplace_back(t.data);
    }
    if (!summary.ok()) return info;
  }
  info.ok = reader.ok();
  return info;
}

}  // namespace tisa::io::tensorboard
