#include "dumps/dump_kind.h"

#include <cstdint>
#include <string>
#include <utility>

namespace hpfreeze {

bool looks_like_safetensors(std::string_view first_bytes) {
  return first_bytes.substr(0, 8).find('\0') != std::string_view::npos;
}

namespace {

// Whether `bytes` are a whole safetensors file: its header length, a header that fits in
// the bytes and starts as an object.
bool whole_safetensors(std::string_view bytes) {
  if (bytes.size() < 9 || !looks_like_safetensors(bytes) || bytes[8] != '{') return false;
  std::uint64_t length = 0;
  for (std::size_t i = 8; i-- > 0;) length = length << 8 | static_cast<unsigned char>(bytes[i]);
  return length <= bytes.size() - 8;
}

// Why freeze's --model takes no checkpoint, and where the dump it takes comes from.
constexpr std::string_view kModelDumpFromCheckpoint =
    ": freeze needs the class of every module (its boundary_classes), which a checkpoint "
    "does not hold; hpfreeze-export writes a model tree dump from the live model "
    "(docs/formats.md, \"The Python exporter\"), and report and check take the checkpoint "
    "itself";

bool is_checkpoint(DumpKind kind) {
  return kind == DumpKind::kCheckpointIndex || kind == DumpKind::kSafetensors;
}

}  // namespace

std::optional<std::string> not_json_kind(std::string_view bytes) {
  if (!whole_safetensors(bytes)) return std::nullopt;
  return "this looks like a safetensors checkpoint, not JSON (report and check read one as "
         "--model FILE, by path)";
}

std::optional<std::string> not_json_model_dump_kind(std::string_view bytes) {
  if (!whole_safetensors(bytes)) return std::nullopt;
  return std::string("this looks like ") + std::string(dump_kind_name(DumpKind::kSafetensors)) +
         ", not JSON; --model wants " + std::string(dump_kind_name(DumpKind::kModel)) +
         std::string(kModelDumpFromCheckpoint);
}

DumpKind tagged_dump_kind(const JsonDocument& document) {
  std::string_view format;
  if (document.root()["format"].get_string().get(format)) return DumpKind::kUnknown;
  if (format == "hpfreeze.plan/v1") return DumpKind::kPlan;
  if (format == "hpfreeze.model/v1") return DumpKind::kModel;
  return DumpKind::kUnknown;
}

DumpKind guess_dump_kind(const JsonDocument& document) {
  simdjson::dom::object root;
  if (document.root().get_object().get(root)) return DumpKind::kUnknown;
  const DumpKind by_format = tagged_dump_kind(document);
  DumpKind by_shape = DumpKind::kUnknown;
  simdjson::dom::object modules;
  if (!root["modules"].get_object().get(modules)) {
    const auto first = modules.begin();
    if (first != modules.end()) {
      if (first.value().is_object()) by_shape = DumpKind::kPlan;
      if (first.value().is_string()) by_shape = DumpKind::kModel;
    }
  } else if (!root["codegen_version"].error() || !root["param_plan"].error()) {
    return DumpKind::kMeta;
  } else if (simdjson::dom::object map; !root["weight_map"].get_object().get(map)) {
    return DumpKind::kCheckpointIndex;
  }
  if (by_shape == DumpKind::kUnknown && !root["parameters"].error()) by_shape = DumpKind::kModel;
  if (by_format == DumpKind::kUnknown) return by_shape;
  if (by_shape == DumpKind::kUnknown || by_shape == by_format) return by_format;
  return DumpKind::kUnknown;
}

DumpKind meta_lookalike_kind(const JsonDocument& document) {
  if (const DumpKind tagged = tagged_dump_kind(document); tagged != DumpKind::kUnknown) {
    return tagged;
  }
  simdjson::dom::object root;
  if (document.root().get_object().get(root)) return DumpKind::kUnknown;
  if (!root["param_plan"].error() || root["modules"].error()) return DumpKind::kUnknown;
  return root["parameters"].error() ? DumpKind::kPlan : DumpKind::kModel;
}

DumpKind base_meta_lookalike_kind(const JsonDocument& document) {
  const DumpKind tagged = tagged_dump_kind(document);
  return tagged != DumpKind::kUnknown ? tagged : guess_dump_kind(document);
}

std::string_view dump_kind_name(DumpKind kind) {
  switch (kind) {
    case DumpKind::kPlan:
      return "a plan dump (hpfreeze.plan/v1)";
    case DumpKind::kModel:
      return "a model tree dump (hpfreeze.model/v1)";
    case DumpKind::kMeta:
      return "a codegen_meta.json";
    case DumpKind::kCheckpointIndex:
      return "a sharded checkpoint's index (*.safetensors.index.json)";
    case DumpKind::kSafetensors:
      return "a safetensors checkpoint";
    case DumpKind::kUnknown:
      break;
  }
  return "a file of unknown kind";
}

std::optional<Diagnostic> wrong_kind_error(const JsonDocument& document, DumpKind kind,
                                           DumpKind wanted, std::string_view who) {
  if (kind == DumpKind::kUnknown || kind == wanted) return std::nullopt;
  std::string message = "this looks like " + std::string(dump_kind_name(kind)) + "; " +
                        std::string(who) + " wants " + std::string(dump_kind_name(wanted));
  if (wanted == DumpKind::kModel && is_checkpoint(kind)) message += kModelDumpFromCheckpoint;
  return make_error(document.name(), {}, std::move(message));
}

}  // namespace hpfreeze
