#pragma once
// The meta readers' fuzz targets (check, thaw, report, diff, expand), shared with the
// regression test like fuzz_harness.h. Each check_* takes one input, returns "" when every
// property held, or a description of the first violated one.
//
// The input is read as codegen_meta.json (a plan dump for expand). A scaling recipe may
// blow it up first (apply_scale_recipe): an input whose first line is `#scale N` gets the
// param_plan boundaries of the rest, and the first boundary's params, copied N times under
// fresh names, so that 100 fuzzed bytes become a meta of thousands of boundaries, and a
// reader whose work grows faster than its input runs into -timeout or -rss_limit_mb.

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "check/bundle_check.h"
#include "check/check.h"
#include "diff/diff.h"
#include "dumps/plan.h"
#include "freeze/freeze.h"
#include "freeze/reference.h"
#include "fuzz_harness.h"
#include "hpfreeze/commands/diff_command.h"
#include "hpfreeze/commands/expand_command.h"
#include "hpfreeze/commands/report_command.h"
#include "hpfreeze/commands/thaw_command.h"
#include "io/io.h"
#include "json/diagnostic_json.h"
#include "json/encode.h"
#include "meta/meta.h"
#include "report/report.h"
#include "thaw/thaw.h"

namespace hpfreeze::fuzz {

// ---------------------------------------------------------------------------------------
// Scaling recipe.

inline constexpr std::size_t kMaxScale = 4096;
inline constexpr std::size_t kMaxScaledBytes = std::size_t{8} << 20;

// Copies every member of `object` n times, the copy k under key + "~" + k (a name no
// other copy has; the original stays first).
inline JsonObject scaled_members(const JsonObject& object, std::size_t n, StringArena& arena) {
  JsonObject out;
  for (std::size_t k = 0; k < n; ++k) {
    for (const JsonMember& m : object) {
      const std::string_view key =
          k == 0 ? m.key : arena.store(std::string(m.key) + "~" + std::to_string(k));
      out.push_back({key, m.value});
    }
  }
  return out;
}

// The bytes the readers see: `bytes` itself, or the scaled meta of a `#scale N` recipe.
// nullopt when the recipe's body is no JSON object (nothing to scale).
inline std::optional<std::string> apply_scale_recipe(std::string_view bytes) {
  constexpr std::string_view kTag = "#scale ";
  if (!bytes.starts_with(kTag)) return std::string(bytes);
  std::size_t i = kTag.size();
  std::size_t n = 0;
  while (i < bytes.size() && bytes[i] >= '0' && bytes[i] <= '9' && n <= kMaxScale) {
    n = n * 10 + static_cast<std::size_t>(bytes[i++] - '0');
  }
  const std::size_t eol = bytes.find('\n', i);
  if (eol == std::string_view::npos) return std::nullopt;
  // The scaled meta stays below about kMaxScaledBytes, whatever the body's size.
  n = std::clamp<std::size_t>(n, 1,
                              std::max<std::size_t>(1, kMaxScaledBytes / (bytes.size() - eol)));
  n = std::min(n, kMaxScale);
  Expected<JsonDocument> doc = parse_json_document("recipe", std::string(bytes.substr(eol + 1)));
  if (!doc) return std::nullopt;
  Json root = json_from_dom(doc->root());
  if (!root.is_object()) return std::nullopt;
  StringArena arena;
  for (JsonMember& top : root.as_object()) {
    if (top.key != "param_plan" || !top.value.is_object()) continue;
    // The first boundary's params grow too (one wide object), the others stay: the meta
    // grows linearly in N.
    JsonObject boundaries = scaled_members(top.value.as_object(), n, arena);
    if (!boundaries.empty() && boundaries.front().value.is_object()) {
      for (JsonMember& field : boundaries.front().value.as_object()) {
        if (field.key == "params" && field.value.is_object()) {
          field.value = Json(scaled_members(field.value.as_object(), n, arena));
        }
      }
    }
    top.value = Json(std::move(boundaries));
  }
  return encode_python_json(root);
}

// ---------------------------------------------------------------------------------------
// Shared properties.

inline bool has_control_character(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// A text output's lines (LF between them) hold a byte or character that a line reader may
// break at (C0 but LF, DEL, C1, U+2028, U+2029), or a line starts with "::" after blanks
// (space, U+00A0, U+2000..U+200A, U+3000): what no name may bring to stdout.
inline bool has_line_hazard(std::string_view text) {
  bool line_start = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::string_view rest = text.substr(i);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xc2 && rest.size() > 1 && static_cast<unsigned char>(rest[1]) <= 0x9f) return true;
    if (rest.starts_with("\xe2\x80\xa8") || rest.starts_with("\xe2\x80\xa9")) return true;
    if (c == '\n') {
      line_start = true;
      continue;
    }
    if (line_start && rest.starts_with("::")) return true;
    const bool blank = c == ' ' || rest.starts_with("\xc2\xa0") ||
                       rest.starts_with("\xe3\x80\x80") ||
                       (rest.starts_with("\xe2\x80") && rest.size() > 2 &&
                        static_cast<unsigned char>(rest[2]) <= 0x8a);
    if (!blank) line_start = false;
    if (blank && c != ' ') i += c == 0xc2 ? 1 : 2;
  }
  return false;
}

// Every diagnostic prints as one line, names one of `files`, and has a message.
inline std::string check_one_line_each(const Diagnostics& diagnostics,
                                       std::initializer_list<std::string_view> files) {
  for (const Diagnostic& d : diagnostics) {
    if (d.message.empty()) return "diagnostic without a message";
    if (std::find(files.begin(), files.end(), d.file) == files.end()) {
      return "diagnostic names file '" + d.file + "': " + d.message;
    }
    const std::string line = d.location_and_message();
    if (has_control_character(line)) {
      return "diagnostic does not print as one line: " + quote_for_diagnostic(line);
    }
  }
  return {};
}

// ---------------------------------------------------------------------------------------
// check: never crashes; every finding is one line in the meta or the model file; the
// documented order (meta file first, then by pointer, then by message); the JSON-lines
// rendering has one parseable object per finding that says the same; and the bundle pass
// of --bundle holds its properties (below).

inline std::string check_findings(const Diagnostics& findings) {
  if (std::string r = check_one_line_each(findings, {"meta.json", "fixed.json"}); !r.empty()) {
    return r;
  }
  for (std::size_t i = 1; i < findings.size(); ++i) {
    const Diagnostic& a = findings[i - 1];
    const Diagnostic& b = findings[i];
    const bool a_model = a.file != "meta.json";
    const bool b_model = b.file != "meta.json";
    if (a_model && !b_model) return "a model finding comes before a meta finding";
  }
  const std::string lines = render_findings_json_lines(findings);
  std::size_t start = 0;
  for (const Diagnostic& d : findings) {
    const std::size_t end = lines.find('\n', start);
    if (end == std::string::npos) return "fewer JSON lines than findings";
    Expected<JsonDocument> doc =
        parse_json_document("line", std::string(lines.substr(start, end - start)));
    if (!doc) return "a JSON line does not parse: " + doc.errors().front().message;
    const Json line = json_from_dom(doc->root());
    const Json* message = line.find("message");
    const Json* pointer = line.find("pointer");
    const Json* file = line.find("file");
    const Json* severity = line.find("severity");
    if (message == nullptr || !(*message == Json(std::string_view(d.message))) ||
        pointer == nullptr || !(*pointer == Json(std::string_view(d.pointer))) || file == nullptr ||
        !(*file == Json(std::string_view(d.file))) || severity == nullptr ||
        !(*severity == Json(severity_name(d.severity)))) {
      return "a JSON line says something else than its finding: " + d.location_and_message();
    }
    start = end + 1;
  }
  if (start != lines.size()) return "more JSON lines than findings";
  return {};
}

// ---------------------------------------------------------------------------------------
// check --bundle's pass over a bundle made once per process in a temporary directory:
// __init__.py ("x\n", sha256 below), the modeling file of model_name "M" and its diff, a
// FIFO without a writer, a directory, a link to /dev/zero, a socket and a link to
// /proc/self/pagemap (a pseudo-file of size 0 that holds 256 GiB) in place of files. The pass
// never hangs on them nor reads a file past its size; every finding is one line located in the
// meta, at a pointer of the bundle's members, in the checker's order; an annotation names a
// file directly in the bundle, never a path outside it; a second run says the same, and so
// does a run that opens the files from the bundle's directory, as a walk does.

inline constexpr std::string_view kFuzzBundleInitSha256 =
    "73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac";

class FuzzBundle {
 public:
  FuzzBundle() {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/hpfreeze-fuzz-bundle-XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr) return;
    dir_ = dir;
    write("__init__.py", "x\n");
    write("modeling_M_gen_npu.py", "import torch\n");
    write("modeling_M_gen_npu.py.diff", "");
    ::mkfifo((dir_ + "/fifo.py").c_str(), 0600);
    ::mkdir((dir_ + "/dir.py").c_str(), 0700);
    [[maybe_unused]] const int linked = ::symlink("/dev/zero", (dir_ + "/zero.py").c_str());
    [[maybe_unused]] const int pseudo =
        ::symlink("/proc/self/pagemap", (dir_ + "/pagemap.py").c_str());
    socket_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string socket_path = dir_ + "/sock.py";
    if (socket_ >= 0 && socket_path.size() < sizeof address.sun_path) {
      std::copy(socket_path.begin(), socket_path.end(), address.sun_path);
      [[maybe_unused]] const int bound =
          ::bind(socket_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    }
    RealFileSystem().open_directory(dir_, &directory_);
  }
  FuzzBundle(const FuzzBundle&) = delete;
  FuzzBundle& operator=(const FuzzBundle&) = delete;
  ~FuzzBundle() {
    if (dir_.empty()) return;
    for (const char* name : {"__init__.py", "modeling_M_gen_npu.py", "modeling_M_gen_npu.py.diff",
                             "fifo.py", "zero.py", "pagemap.py", "sock.py"}) {
      std::remove((dir_ + "/" + name).c_str());
    }
    if (socket_ >= 0) ::close(socket_);
    ::rmdir((dir_ + "/dir.py").c_str());
    ::rmdir(dir_.c_str());
  }
  [[nodiscard]] bool ready() const { return !dir_.empty() && directory_ != nullptr; }
  [[nodiscard]] std::string meta_path() const { return dir_ + "/codegen_meta.json"; }
  // The bundle's directory held open, as a walk holds it.
  [[nodiscard]] Directory* directory() const { return directory_.get(); }

 private:
  void write(const char* name, std::string_view bytes) const {
    std::ofstream out(dir_ + "/" + name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  std::string dir_;
  int socket_ = -1;
  std::shared_ptr<Directory> directory_;
};

inline bool is_bundle_pointer(std::string_view pointer) {
  if (pointer.empty() || pointer == "/model_name" || pointer == "/outputs") return true;
  if (pointer.starts_with("/outputs/")) return true;
  constexpr std::string_view kSiblings = "/remote_siblings/";
  if (!pointer.starts_with(kSiblings) || pointer.size() == kSiblings.size()) return false;
  return std::all_of(pointer.begin() + static_cast<std::ptrdiff_t>(kSiblings.size()), pointer.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

inline std::string check_bundle_findings(const Diagnostics& findings, const std::string& meta,
                                         const std::string& prefix) {
  if (std::string r = check_one_line_each(findings, {meta}); !r.empty()) return r;
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const Diagnostic& d = findings[i];
    if (!is_bundle_pointer(d.pointer))
      return "a bundle finding at " + quote_for_diagnostic(d.pointer);
    if (d.severity == Severity::kWarning) return "a bundle finding is a warning";
    if (d.error_class != ErrorClass::kRejected) return "a bundle finding is not of class kRejected";
    if (i > 0 && (d.pointer < findings[i - 1].pointer ||
                  (d.pointer == findings[i - 1].pointer && d.message < findings[i - 1].message))) {
      return "bundle findings are not sorted by pointer, then message";
    }
    if (d.annotate_file.empty()) continue;
    const std::string_view name = std::string_view(d.annotate_file).substr(prefix.size());
    if (!d.annotate_file.starts_with(prefix) || name.empty() || name == "." || name == ".." ||
        name.find_first_of(std::string_view("/\\\0", 3)) != std::string_view::npos) {
      return "an annotation names a file outside the bundle: " +
             quote_for_diagnostic(d.annotate_file);
    }
    if (!d.pointer.starts_with("/outputs/")) return "an annotation on a finding of no output";
  }
  return {};
}

inline std::string check_bundle_pass(const std::string& bytes) {
  static const FuzzBundle bundle;
  if (!bundle.ready()) return {};  // no temporary directory: nothing tested
  Expected<JsonDocument> doc = parse_json_document(bundle.meta_path(), bytes);
  if (!doc) return {};
  Diagnostics errors;
  const std::optional<FrozenMeta> meta =
      decode_meta_keep_going(*doc, "check", errors, MetaDecodeOptions::decoded_params_only());
  if (!meta) return {};
  const std::string prefix = bundle_prefix(bundle.meta_path());
  static RealFileSystem disk;
  const Diagnostics findings = check_bundle(*meta, {disk, prefix}).findings;
  if (std::string r = check_bundle_findings(findings, bundle.meta_path(), prefix); !r.empty()) {
    return r;
  }
  for (Directory* directory : {static_cast<Directory*>(nullptr), bundle.directory()}) {
    const Diagnostics again = check_bundle(*meta, {disk, prefix, directory}).findings;
    const std::string run = directory == nullptr ? "a second run" : "a run from the directory";
    if (again.size() != findings.size()) return run + " of the bundle pass differs";
    for (std::size_t i = 0; i < again.size(); ++i) {
      if (again[i].location_and_message() != findings[i].location_and_message() ||
          again[i].annotate_file != findings[i].annotate_file) {
        return run + " of the bundle pass differs";
      }
    }
  }
  // The one file whose hash the harness knows: recorded right, __init__.py verifies.
  if (const MetaOutput* init = meta->bundle.find_output("init");
      init != nullptr && init->sha256 == kFuzzBundleInitSha256) {
    for (const Diagnostic& d : findings) {
      if (d.pointer == "/outputs/init") return "__init__.py with its own sha256 is a finding";
    }
  }
  return {};
}

inline std::string check_check(std::string_view input) {
  const ModelTree& model = fixed_model();
  const std::optional<std::string> bytes = apply_scale_recipe(input);
  if (!bytes) return {};
  Expected<JsonDocument> doc = parse_json_document("meta.json", *bytes);
  if (!doc) return check_diagnostics(doc.errors(), "meta.json");
  // As check's loader decodes its META: on past the decode errors, which are findings.
  Diagnostics decoded_findings;
  const std::optional<FrozenMeta> meta = decode_meta_keep_going(
      *doc, "check", decoded_findings, MetaDecodeOptions::decoded_params_only());
  if (!meta) return check_findings(decoded_findings);
  for (const ModelTree* m : {static_cast<const ModelTree*>(nullptr), &model}) {
    if (std::string r = check_findings(check_meta(*meta, decoded_findings, m)); !r.empty()) {
      return r;
    }
  }
  return check_bundle_pass(*bytes);
}

// ---------------------------------------------------------------------------------------
// thaw: what thaw accepts is a valid plan dump and model tree that freeze accepts, and
// freezing gives the same param_plan (semantically, as diff compares: placement strings
// by canonical form) unless thaw warned; the meta freeze wrote then thaws and freezes
// back byte for byte (thaw's promise for every meta freeze can write).

// freeze(thaw(meta)): the meta bytes, or the failure in `failure` (empty: thaw refused).
inline std::optional<std::string> thaw_and_freeze(const FrozenMeta& meta, std::string& failure,
                                                  bool& warned) {
  ThawOptions options;
  options.model = true;
  Expected<ThawedPlan> thawed = thaw_meta(meta, options);
  if (!thawed) {
    failure = check_one_line_each(thawed.errors(), {meta.file});
    return std::nullopt;
  }
  if (std::string r = check_one_line_each(thawed->warnings, {meta.file}); !r.empty()) {
    failure = r;
    return std::nullopt;
  }
  warned = !thawed->warnings.empty();
  // What run_thaw writes, built without the tree, is the tree's encoding.
  std::string plan_text = encode_plain_json(thawed->plan);
  Expected<ThawedBytes> bytes = thaw_meta_to_bytes(meta, options);
  if (!bytes || bytes->plan != plan_text + "\n" ||
      bytes->model != encode_plain_json(*thawed->model) + "\n" ||
      bytes->warnings.size() != thawed->warnings.size()) {
    failure = "thaw_meta_to_bytes differs from thaw_meta's tree";
    return std::nullopt;
  }
  Expected<JsonDocument> plan_doc = parse_json_document("plan.json", std::move(plan_text));
  Expected<JsonDocument> model_doc =
      parse_json_document("model.json", encode_plain_json(*thawed->model));
  if (!plan_doc || !model_doc) {
    failure = "thawed plan or model is no JSON";
    return std::nullopt;
  }
  Expected<PlanDump> plan = decode_plan_dump(*plan_doc);
  if (!plan) {
    failure = "thawed plan is rejected: " + plan.errors().front().location_and_message();
    return std::nullopt;
  }
  Expected<ModelTree> model = decode_model_tree(*model_doc);
  if (!model) {
    failure = "thawed model is rejected: " + model.errors().front().location_and_message();
    return std::nullopt;
  }
  FreezeOptions freeze_options;
  freeze_options.allow_empty = true;
  Expected<FreezeResult> frozen = freeze_plan(*plan, *model, freeze_options);
  if (!frozen) {
    failure = "thawed plan does not freeze: " + frozen.errors().front().location_and_message();
    return std::nullopt;
  }
  std::optional<Json> base;
  if (plan->meta) {
    Expected<Json> checked = decode_base_meta(*plan->meta, plan->file, "/meta");
    if (!checked) {
      failure = "thawed meta is rejected: " + checked.errors().front().location_and_message();
      return std::nullopt;
    }
    base = std::move(*checked);
  }
  return encode_python_json(assemble_meta(frozen->frozen, base ? &*base : nullptr));
}

inline std::string check_thaw(std::string_view input) {
  const std::optional<std::string> bytes = apply_scale_recipe(input);
  if (!bytes) return {};
  Expected<JsonDocument> doc = parse_json_document("meta.json", *bytes);
  if (!doc) return check_diagnostics(doc.errors(), "meta.json");
  Expected<FrozenMeta> meta = decode_meta(*doc, "thaw");
  if (!meta) return check_one_line_each(meta.errors(), {"meta.json"});
  std::string failure;
  bool warned = false;
  const std::optional<std::string> refrozen = thaw_and_freeze(*meta, failure, warned);
  if (!refrozen) return failure;
  Expected<JsonDocument> again_doc = parse_json_document("meta.json", *refrozen);
  if (!again_doc) return "frozen meta does not parse";
  Expected<FrozenMeta> again = decode_meta(*again_doc, "thaw");
  if (!again) return "frozen meta is rejected: " + again.errors().front().location_and_message();
  if (!warned) {
    std::string differs;
    diff_metas(*meta, *again, DiffOptions{}, [&](const MetaDifference& d) {
      if (differs.empty() && d.pointer.starts_with("/param_plan")) {
        differs =
            "param_plan differs after freeze(thaw(meta)) at " + quote_for_diagnostic(d.pointer);
      }
    });
    if (!differs.empty()) return differs;
  }
  bool warned_again = false;
  const std::optional<std::string> twice = thaw_and_freeze(*again, failure, warned_again);
  if (!twice) return "the meta freeze wrote does not thaw and freeze: " + failure;
  if (*twice != *refrozen) return "the meta freeze wrote does not round-trip byte for byte";
  return {};
}

// ---------------------------------------------------------------------------------------
// report: the totals are the sums of the lists (saturating), shards never exceed the
// full size, the lists are sorted as documented, both renderings work and the JSON one
// parses and holds the same totals.

inline std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t s = 0;
  return __builtin_add_overflow(a, b, &s) ? ~std::uint64_t{0} : s;
}

inline std::string check_report_totals(const FrozenMeta& meta, const Report& r) {
  std::uint64_t rank0 = 0;
  std::uint64_t replicated = 0;
  std::uint64_t unsharded = 0;
  std::uint64_t uncovered = 0;
  std::size_t replicated_params = 0;
  for (const ParamReport& p : r.params) {
    if (p.rank0_bytes > p.full_bytes)
      return "a shard is larger than its parameter: " + std::string(p.fqn);
    rank0 = saturating_add(rank0, p.rank0_bytes);
    unsharded = saturating_add(unsharded, p.full_bytes);
    if (p.replicated) {
      replicated = saturating_add(replicated, p.rank0_bytes);
      ++replicated_params;
    }
  }
  for (const UncoveredParam& u : r.uncovered) {
    if (u.rank0_bytes > u.bytes) return "rank 0 holds more of an uncovered param than it has";
    uncovered = saturating_add(uncovered, u.rank0_bytes);
  }
  if (rank0 != r.rank0_bytes) return "rank0_bytes is not the sum of the params";
  if (replicated != r.replicated_bytes) return "replicated_bytes is not the sum";
  if (unsharded != r.unsharded_bytes) return "unsharded_bytes is not the sum";
  if (uncovered != r.uncovered_bytes) return "uncovered_bytes is not the sum";
  if (replicated_params != r.replicated_params) return "replicated_params miscounted";
  if (r.replicated_bytes > r.rank0_bytes) return "replicated_bytes exceeds rank0_bytes";
  // A boundary counts every param it plans (measured or not) and the bytes of those measured.
  std::size_t planned = 0;
  for (const MetaBoundary& b : meta.boundaries) planned += b.params.size();
  std::size_t params_by_boundary = 0;
  for (const BoundaryReport& b : r.boundaries) {
    params_by_boundary += b.params;
    std::uint64_t bytes = 0;
    std::size_t measured = 0;
    for (const ParamReport& p : r.params) {
      if (p.boundary != b.fqn) continue;
      bytes = saturating_add(bytes, p.rank0_bytes);
      ++measured;
    }
    if (bytes != b.rank0_bytes) return "a boundary's bytes are not the sum of its params";
    if (measured > b.params) return "a boundary lists fewer params than were measured in it";
  }
  if (params_by_boundary != planned) return "boundary param counts do not add up to the plan";
  for (std::size_t i = 1; i < r.params.size(); ++i) {
    const ParamReport& a = r.params[i - 1];
    const ParamReport& b = r.params[i];
    if (a.rank0_bytes < b.rank0_bytes || (a.rank0_bytes == b.rank0_bytes && a.fqn > b.fqn)) {
      return "params are not sorted by rank0_bytes, then FQN";
    }
  }
  for (std::size_t i = 1; i < r.uncovered.size(); ++i) {
    const UncoveredParam& a = r.uncovered[i - 1];
    const UncoveredParam& b = r.uncovered[i];
    if (a.bytes < b.bytes || (a.bytes == b.bytes && a.fqn > b.fqn)) {
      return "uncovered params are not sorted by bytes, then FQN";
    }
  }
  if (std::string f = check_one_line_each(r.findings, {"meta.json", "fixed.json"}); !f.empty()) {
    return f;
  }
  if (has_line_hazard(render_report_text(r, 10))) {
    return "a name breaks a line of the report's text or starts one with '::'";
  }
  Expected<JsonDocument> rendered = parse_json_document("report.json", render_report_json(r, {}));
  if (!rendered) return "report JSON does not parse: " + rendered.errors().front().message;
  const Json json = json_from_dom(rendered->root());
  std::uint64_t seen = 0;
  for (const auto& [key, value] :
       {std::pair{"rank0_bytes", r.rank0_bytes}, std::pair{"replicated_bytes", r.replicated_bytes},
        std::pair{"unsharded_bytes", r.unsharded_bytes},
        std::pair{"uncovered_bytes", r.uncovered_bytes}}) {
    // Wherever the renderer nests them: look one level down too.
    const Json* found = json.find(key);
    for (const JsonMember& m : json.is_object() ? json.as_object() : JsonObject{}) {
      if (found == nullptr && m.value.is_object()) found = m.value.find(key);
    }
    if (found == nullptr) continue;
    ++seen;
    const auto* u = std::get_if<std::uint64_t>(&found->v);
    const auto* i = std::get_if<std::int64_t>(&found->v);
    const bool same = (u != nullptr && *u == value) ||
                      (i != nullptr && *i >= 0 && static_cast<std::uint64_t>(*i) == value);
    if (!same) return std::string("report JSON's ") + key + " differs from the report";
  }
  if (seen != 4) return "report JSON lacks a total";
  return {};
}

// A model tree for `meta`: every planned parameter, bf16, with as many dims as its
// placements name (at most 6) and sizes below 5000 made from its name, so that fuzzed and
// scaled names (a `#scale` copy gets a fresh name) become distinct uneven shapes: the
// inputs that made the planner slow are in reach, and -timeout bounds each one.
inline ModelTree model_from_meta(const FrozenMeta& meta) {
  ModelTree model;
  model.file = "fixed.json";
  model.has_parameters = true;
  for (const MetaBoundary& b : meta.boundaries) {
    for (const MetaParam& p : b.params) {
      std::size_t rank = 1;
      for (const MetaAxisPlacement& a : p.axes) {
        if (a.placement.has_dim() && a.placement.dim < 6) {
          rank = std::max(rank, static_cast<std::size_t>(a.placement.dim) + 1);
        }
      }
      std::uint64_t h = std::hash<std::string_view>{}(p.fqn);
      const std::span<std::uint64_t> dims = model.dims.allocate(rank);
      for (std::uint64_t& d : dims) {
        d = h % 4999 + 1;
        h = h / 4999 * 0x9e3779b97f4a7c15ULL + 1;
      }
      model.parameters.push_back({model.names.copy(p.fqn), ModelParameter{dims, "bfloat16"}});
    }
  }
  return model;
}

inline std::string check_report(std::string_view input) {
  const ModelTree& model = fixed_model();
  const std::optional<std::string> bytes = apply_scale_recipe(input);
  if (!bytes) return {};
  Expected<JsonDocument> doc = parse_json_document("meta.json", *bytes);
  if (!doc) return check_diagnostics(doc.errors(), "meta.json");
  Expected<FrozenMeta> meta = decode_meta(*doc, "report");
  if (!meta) return check_one_line_each(meta.errors(), {"meta.json"});
  // A mesh of the axes the meta knows (every --mesh axis must be one): mesh_dim_names and
  // the placements' axes, with the ZeRO axis dp, sized 3, 4, 2, 3, ... in that order (the
  // first 16 of them).
  std::vector<AxisSize> mesh;
  auto add = [&mesh](std::string_view axis) {
    if (mesh.size() < 16 &&  // devices stay below 4^16
        std::none_of(mesh.begin(), mesh.end(), [&](const AxisSize& a) { return a.axis == axis; })) {
      static constexpr std::uint64_t kSizes[] = {3, 4, 2};
      mesh.push_back(AxisSize{std::string(axis), kSizes[mesh.size() % 3]});
    }
  };
  add("dp");
  for (std::string_view axis : meta->mesh_dim_names.value_or(std::vector<std::string_view>{})) {
    add(axis);
  }
  for (const MetaBoundary& b : meta->boundaries) {
    for (const MetaParam& p : b.params) {
      for (const MetaAxisPlacement& a : p.axes) add(a.axis);
    }
  }
  for (const std::optional<std::vector<AxisSize>>& m :
       {std::optional<std::vector<AxisSize>>{}, std::optional{mesh}}) {
    const Report report = build_report(*meta, model, m);
    if (!report.usage_errors.empty()) {
      return "a mesh of the meta's own axes is refused: " + report.usage_errors.front().message;
    }
    if (std::string r = check_report_totals(*meta, report); !r.empty()) return r;
  }
  // The same mesh with ZeRO stage 3 over dp and a sweep of dp: the planner's worst rank
  // never grows with more dp ranks.
  ReportPlanOptions zero;
  zero.accounting.zero.stage = 3;
  zero.accounting.optimizer = Optimizer::kAdam;
  std::vector<AxisSize> fixed(mesh.begin() + 1, mesh.end());
  zero.sweeps = {AxisSweep{"dp", {1, 2, 5}}};
  // A ZeRO that splits nothing (every parameter sharded on dp and cp) is a usage error
  // that says so, as is a sweep whose every mesh has too many rank classes; a mesh that
  // cannot be laid out (folded ep, pp without a stack) or was not counted holds no ranks
  // to compare.
  const Report swept = build_report(*meta, model, fixed, zero);
  if (!swept.usage_errors.empty() &&
      swept.usage_errors.front().message.find("splits nothing") == std::string::npos &&
      swept.usage_errors.front().message.find("too many to compare") == std::string::npos) {
    return "the ZeRO sweep is refused: " + swept.usage_errors.front().message;
  }
  if (swept.capacity.planned()) {
    std::uint64_t last = ~std::uint64_t{0};
    for (const MeshCapacity& m : swept.capacity.meshes) {
      if (!m.laid_out()) continue;
      if (m.max_rank_bytes > last) return "ZeRO stage 3: a larger dp holds more";
      last = m.max_rank_bytes;
    }
  }
  // The meta's own parameters on the mesh of its own parallel_dims.
  const ModelTree own = model_from_meta(*meta);
  return check_report_totals(*meta, build_report(*meta, own, std::nullopt));
}

// ---------------------------------------------------------------------------------------
// diff: a meta against itself (the same decoded meta, a second decoding of the same
// bytes, and the meta re-encoded with sorted keys) differs nowhere; against an empty meta
// every difference prints as exactly one line, text and JSON.

inline std::string check_diff(std::string_view input) {
  const std::optional<std::string> bytes = apply_scale_recipe(input);
  if (!bytes) return {};
  Expected<JsonDocument> doc = parse_json_document("old.json", *bytes);
  if (!doc) return check_diagnostics(doc.errors(), "old.json");
  Expected<FrozenMeta> a = decode_meta(*doc, "diff");
  if (!a) return check_one_line_each(a.errors(), {"old.json"});
  Expected<JsonDocument> doc2 = parse_json_document("new.json", *bytes);
  Expected<JsonDocument> sorted_doc =
      parse_json_document("sorted.json", encode_python_json(json_from_dom(doc->root())));
  if (!doc2 || !sorted_doc) return "the same bytes or their re-encoding no longer parse";
  Expected<FrozenMeta> b = decode_meta(*doc2, "diff");
  Expected<FrozenMeta> sorted = decode_meta(*sorted_doc, "diff");
  if (!b || !sorted) return "the same meta or its re-encoding is rejected the second time";
  for (const FrozenMeta* other : {&*a, &*b, &*sorted}) {
    std::string found;
    diff_metas(*a, *other, DiffOptions{}, [&](const MetaDifference& d) {
      if (found.empty())
        found = "a meta differs from " + other->file + " at " + quote_for_diagnostic(d.pointer);
    });
    if (!found.empty()) return found;
  }
  static const FixedDocument empty_doc(R"({"param_plan": {}})");
  static const Expected<FrozenMeta> empty = decode_meta(*empty_doc.document, "diff");
  std::string failure;
  for (const bool forward : {true, false}) {
    diff_metas(
        forward ? *a : *empty, forward ? *empty : *a, DiffOptions{}, [&](const MetaDifference& d) {
          if (!failure.empty()) return;
          std::string text;
          append_diff_text(text, d);
          std::string json;
          append_diff_json_line(json, d);
          if (text.empty() || text.back() != '\n' || text.find('\n') != text.size() - 1 ||
              has_line_hazard(text)) {
            failure = "a difference does not print as one line: " + quote_for_diagnostic(text);
          } else if (json.empty() || json.back() != '\n' ||
                     !parse_json_document("line", json.substr(0, json.size() - 1))) {
            failure = "a difference's JSON line does not parse: " + quote_for_diagnostic(json);
          }
        });
  }
  return failure;
}

// ---------------------------------------------------------------------------------------
// expand (through the file reader, as the command runs): the output is the expand pass's
// list, one name a line, sorted and unique, no line that breaks or starts with "::"; or one
// diagnostic line.

inline std::string check_expand(std::string_view input) {
  const std::string path = (std::getenv("TMPDIR") != nullptr ? std::string(std::getenv("TMPDIR"))
                                                             : std::string("/tmp")) +
                           "/hpfreeze-fuzz-expand-" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(input.data(), static_cast<std::streamsize>(input.size()));
    if (!out) return {};  // no room to write: nothing tested
  }
  const CommandResult listed = run_expand(path, Concurrency{2});
  std::remove(path.c_str());
  if (listed.failed()) {
    if (!listed.output.empty()) return "expand failed but printed names";
    return check_one_line_each(listed.diagnostics, {path});
  }
  if (!listed.diagnostics.empty()) return "expand succeeded with diagnostics";
  Expected<JsonDocument> doc = parse_json_document("plan.json", std::string(input));
  if (!doc) return "expand accepted a document that does not parse";
  Expected<PlanDump> plan = decode_plan_dump(*doc);
  if (!plan) return "expand accepted a plan the plan reader rejects";
  std::string expected;
  std::string previous;
  bool first = true;
  for (const std::string& fqn : expand_sharded_params(*plan)) {
    if (has_line_hazard(fqn) || fqn.find('\n') != std::string::npos) {
      return "a listed name breaks its line or starts it with '::'";
    }
    if (!first && !(previous < fqn)) return "names are not sorted and unique";
    expected += fqn + "\n";
    previous = fqn;
    first = false;
  }
  if (listed.output != expected)
    return "expand's output is not the expand pass's names, one a line";
  return {};
}

}  // namespace hpfreeze::fuzz
