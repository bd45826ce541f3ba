// check --bundle: the recorded hashes of a meta's generated bundle against its files.
#include "check/bundle_check.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "bundle/output_names.h"
#include "check/check.h"
#include "io/file_digest.h"
#include "json/json.h"
#include "json/output_name.h"
#include "spec/findings.h"

namespace hpfreeze {
namespace {

constexpr std::string_view kRecordedEntry = "an object with a 'sha256' of 64 lowercase hex digits";
// What fixes a meta whose bundle record is wrong: what upstream's generator writes.
constexpr std::string_view kRegenerate = ": regenerate the bundle";
// The longest file name a file system holds (NAME_MAX): a longer one names no file to annotate.
constexpr std::size_t kMaxFileName = 255;

// A bundle path as a message shows it: shortened as a pointer is, escaped as a name is.
std::string shown(std::string_view path) { return output_name(shorten_for_diagnostic(path)); }

// What a recorded entry without a usable sha256 holds instead.
std::string entry_defect(const MetaOutput& output) {
  const Json& recorded = *output.recorded;
  if (!recorded.is_object()) return expected_got(kRecordedEntry, recorded);
  const Json* sha256 = recorded.find("sha256");
  if (sha256 == nullptr)
    return expected_got(kRecordedEntry, std::string_view("an object without one"));
  if (!sha256->is_string()) {
    return expected_got(kRecordedEntry,
                        "a 'sha256' that is " + std::string(json_type_article(*sha256)));
  }
  return expected_got(kRecordedEntry, quote_for_diagnostic(sha256->as_string()));
}

class BundleChecker {
 public:
  BundleChecker(const FrozenMeta& meta, const BundleFiles& at, bool note_no_bundle)
      : bundle_(meta.bundle), file_(meta.file), at_(at), note_no_bundle_(note_no_bundle) {}

  BundleFindings run() {
    const std::optional<std::string_view> name = bundle_.modeling_name();
    if (!name) {
      add(finding_rule("HPF402"), "/model_name",
          expected_got("a string or null", *bundle_.model_name));
    }
    modeling_name_ = name;
    BundleRecord record = BundleRecord::kNone;
    if (bundle_.outputs_state == MetaMemberState::kAbsent) {
      if (note_no_bundle_) {
        add(finding_rule("HPF401"), "",
            "the meta records no generated bundle (no outputs): nothing to verify");
      }
    } else if (bundle_.outputs_state == MetaMemberState::kObject && bundle_.outputs.empty()) {
      if (note_no_bundle_) {
        add(finding_rule("HPF401"), "/outputs",
            "the meta records no generated bundle (outputs is empty): nothing to verify");
      }
    } else if (bundle_.outputs_state == MetaMemberState::kObject) {
      record = BundleRecord::kFiles;
      check_outputs();
    } else {
      record = BundleRecord::kNotAnObject;  // the schema rule's error says so
    }
    sort_findings(findings_, file_);  // every finding is located in the meta
    return {std::move(findings_), record};
  }

 private:
  Diagnostic& add(const FindingRule& rule, std::string pointer, std::string message) {
    return findings_.emplace_back(
        make_finding(rule, file_, std::move(pointer), std::move(message)));
  }

  // The file of the bundle `key` names; nullopt when it names none (an invalid key, or a
  // modeling or diff key while model_name cannot name a file).
  std::optional<std::string> file_name(std::string_view key) const {
    const OutputRole role = output_role(key);
    if (!modeling_name_ && (role == OutputRole::kModeling || role == OutputRole::kDiff)) {
      return std::nullopt;
    }
    return output_file_name(key, modeling_name_.value_or(""));
  }

  void check_outputs() {
    // Upstream's rules: the three generated files and every copied remote source are recorded.
    for (const std::string_view role : {"modeling", "diff", "init"}) {
      if (bundle_.find_output(role) != nullptr) continue;
      std::string message = "missing " + std::string(role) + " output hash";
      if (const std::optional<std::string> name = file_name(role)) {
        message += " (" + shown(at_.prefix + *name) + ")";
      }
      add(finding_rule("HPF403"), "/outputs", message + std::string(kRegenerate));
    }
    // Sorted keys: a meta with many siblings and outputs costs n log n, not n^2.
    std::vector<std::string_view> keys;
    keys.reserve(bundle_.outputs.size());
    for (const MetaOutput& output : bundle_.outputs) keys.push_back(output.key);
    std::sort(keys.begin(), keys.end());
    for (const auto& [index, sibling] : bundle_.remote_siblings) {
      if (std::binary_search(keys.begin(), keys.end(), std::string_view(sibling))) continue;
      add(finding_rule("HPF403"), index_pointer("/remote_siblings", index),
          "missing output hash for remote sibling " + quote_for_diagnostic(sibling) +
              std::string(kRegenerate));
    }
    for (const MetaOutput& output : bundle_.outputs) check_output(output);
  }

  // At most one finding per key: the first of an invalid file name, an unusable entry, a
  // file that cannot be read, and a sha256 that differs.
  void check_output(const MetaOutput& output) {
    const std::string pointer = pointer_join("/outputs", output.key);
    if (!is_plain_file_name(output.key) && output_role(output.key) == OutputRole::kFile) {
      add(finding_rule("HPF404"), pointer,
          std::string(kInvalidOutputFilename) + " " + quote_for_diagnostic(output.key) +
              ": not a plain file name of the bundle" + std::string(kRegenerate));
      return;
    }
    if (!output.sha256) {
      add(finding_rule("HPF404"), pointer, entry_defect(output) + std::string(kRegenerate));
      return;
    }
    const std::optional<std::string> name = file_name(output.key);
    if (!name) return;  // model_name cannot name it: its own error says so
    const std::string path = at_.prefix + *name;
    const Expected<FileDigest> digest = at_.directory != nullptr
                                            ? at_.directory->digest(*name, path, kDigestChunkSize)
                                            : at_.files.digest(path, kDigestChunkSize);
    if (!digest) {
      on_file(add(finding_rule("HPF405"), pointer,
                  shown(path) + ": " + digest.errors().front().message + " (recorded sha256 " +
                      std::string(*output.sha256) + "): regenerate the bundle or restore " +
                      shown(path)),
              path, *name);
      return;
    }
    if (digest->sha256 == *output.sha256) return;
    std::string message = shown(path) + ": hash drift (recorded sha256 " +
                          std::string(*output.sha256) + ", actual " + digest->sha256;
    if (output.lines) {
      message += "; recorded " + plural(*output.lines, "line") + ", actual ";
      message += digest->lines ? std::to_string(*digest->lines) : std::string("not UTF-8");
    }
    on_file(add(finding_rule("HPF406"), pointer,
                message + "): regenerate the bundle or revert " + shown(path)),
            path, *name);
  }

  // A finding about one file of the bundle: annotated on that file, when one can be named so.
  static void on_file(Diagnostic& finding, const std::string& path, const std::string& name) {
    if (name.size() <= kMaxFileName) finding.annotate_file = path;
  }

  const MetaBundle& bundle_;
  const std::string& file_;
  const BundleFiles& at_;
  bool note_no_bundle_;
  std::optional<std::string_view> modeling_name_;
  Diagnostics findings_;
};

}  // namespace

std::string bundle_prefix(std::string_view meta_path) {
  const std::size_t slash = meta_path.rfind('/');
  return slash == std::string_view::npos ? std::string()
                                         : std::string(meta_path.substr(0, slash + 1));
}

BundleFindings check_bundle(const FrozenMeta& meta, const BundleFiles& at, bool note_no_bundle) {
  return BundleChecker(meta, at, note_no_bundle).run();
}

}  // namespace hpfreeze
