// The bundle pass of check --bundle (check/bundle_check.cc) on bundles the tests make on the
// in-memory file system. The recorded outputs come from Python, written the way upstream's
// record_output_hashes writes them (hashlib's sha256, text-mode line counts,
// _default_modeling_name's file name) over the same bytes: the independent reference. Every
// finding is compared as its whole line. What only a real disk shows (a FIFO never waited
// on, a pseudo-file, a socket) is io's (file_digest_test) and tests/e2e's
// (test_check_tree.py).
#include "check/bundle_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "check/findings_lines.h"
#include "io/fake_file_system.h"
#include "json/json_document.h"
#include "meta/meta.h"
#include "python_reference.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

using check_test::Lines;
using check_test::render_all;
using io_testing::FakeFileSystem;
using test_support::keep;
using testing_python::run_python;
using testing_python::split_lines;

// Upstream's artifact.py and meta.py, restated over bytes instead of files (stdin: a JSON
// object, "files": the file names and their bytes as Latin-1 strings, "what": the question):
// the modeling file's name for a model_name (argv[1], JSON), the outputs
// record_output_hashes writes for those files, or a file's sha256 and its text-mode line
// count ("-": not UTF-8).
constexpr std::string_view kUpstreamRecord = R"(
import hashlib, io, json, sys

def modeling_name(model_name):
    base = model_name or "model"
    return "modeling_" + "".join(c if c.isalnum() or c == "_" else "_" for c in base) + "_gen_npu.py"

def line_count(data):
    try:
        return sum(1 for _ in io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    except UnicodeDecodeError:
        return None

def name(latin1):
    return latin1.encode("latin-1").decode("utf-8", "surrogateescape")

model_name, given = json.loads(sys.argv[1]), json.load(sys.stdin)
what = name(given["what"])
files = {name(k): v.encode("latin-1") for k, v in given["files"].items()}
modeling = modeling_name(model_name)
if what == "name":
    print(modeling)
elif what == "record":
    roles = {modeling: "modeling", modeling + ".diff": "diff", "__init__.py": "init"}
    outputs = {roles.get(name, name): {"sha256": hashlib.sha256(data).hexdigest(),
                                       "lines": line_count(data)}
               for name, data in sorted(files.items()) if name != "codegen_meta.json"}
    print(json.dumps(outputs, sort_keys=True))
else:
    data = files[what]
    lines = line_count(data)
    print(hashlib.sha256(data).hexdigest(), "-" if lines is None else lines)
)";

const std::string kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr std::string_view kRestore = "): regenerate the bundle or restore ";
constexpr std::string_view kRevert = "): regenerate the bundle or revert ";
constexpr std::string_view kRegenerate = ": regenerate the bundle";

// A Latin-1 JSON string of any bytes, which Python reads back as those bytes.
std::string latin1_json(std::string_view bytes) {
  std::string text = "\"";
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    static constexpr char kHex[] = "0123456789abcdef";
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      text += ch;
    } else {
      text += "\\u00";
      text += kHex[c >> 4];
      text += kHex[c & 0xf];
    }
  }
  return text + "\"";
}

class BundleCheck : public ::testing::Test {
 protected:
  // The bundle is "b/" (the meta b/codegen_meta.json), on the in-memory disk.
  static constexpr std::string_view kDir = "b";
  std::string path(const std::string& name) const { return std::string(kDir) + "/" + name; }
  std::string meta_path() const { return path("codegen_meta.json"); }

  void SetUp() override { disk_.add_dir(std::string(kDir)); }

  void spit(const std::string& name, std::string bytes) {
    disk_.add_file(path(name), bytes);
    files_[name] = std::move(bytes);
  }
  void remove(const std::string& name) {
    disk_.nodes.erase(FakeFileSystem::key(path(name)));
    files_.erase(name);
  }

  // Python over the bundle's files: `what` is "name", "record" or a file's name.
  std::vector<std::string> python(const std::string& model_name_json, const std::string& what) {
    std::string input = "{\"what\": " + latin1_json(what) + ", \"files\": {";
    for (const auto& [name, bytes] : files_) {
      if (input.back() != '{') input += ", ";
      input += latin1_json(name) + ": " + latin1_json(bytes);
    }
    return split_lines(run_python(kUpstreamRecord, {model_name_json}, input + "}}"));
  }
  // The modeling file's name upstream gives `model_name_json`.
  std::string modeling_name(const std::string& model_name_json) {
    const std::vector<std::string> out = python(model_name_json, "name");
    return out.empty() ? std::string() : out[0];
  }
  // The outputs upstream records for the files now in the bundle, as JSON.
  std::string recorded_outputs(const std::string& model_name_json) {
    const std::vector<std::string> out = python(model_name_json, "record");
    return out.empty() ? std::string("{}") : out[0];
  }
  // The sha256 and the line count of `name` as Python sees them ("-": not UTF-8).
  struct PythonDigest {
    std::string sha256;
    std::string lines;
  };
  PythonDigest python_digest(const std::string& name) {
    const std::vector<std::string> out = python("null", name);
    if (out.empty()) return {};
    return {out[0].substr(0, 64), out[0].substr(65)};
  }

  // An upstream-shaped bundle: the generated modeling file, its diff, __init__.py and a
  // copied remote source; returns the modeling file's name.
  std::string make_bundle(const std::string& model_name_json) {
    const std::string modeling = modeling_name(model_name_json);
    spit(modeling, "import torch\r\n\r\nclass Model:\n    pass\n");
    spit(modeling + ".diff", "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y");
    spit("__init__.py", "from .m import Model\n");
    spit("configuration_x.py", "VALUE = 1\r");
    return modeling;
  }

  const FrozenMeta* decode(const std::string& members, const std::string& name) {
    const std::string text = R"j({"param_plan": {"b": {"params": {"w": {"tp": "R"}}}})j" +
                             (members.empty() ? std::string() : ", " + members) + "}";
    const JsonDocument& doc = keep(test_support::parse_document(text, name));
    Expected<FrozenMeta> meta = decode_meta(doc, "check");
    if (!meta) {
      ADD_FAILURE() << "meta does not decode: " << meta.errors().front().location_and_message();
      return nullptr;
    }
    return &keep(std::move(*meta));
  }

  // The bundle pass over the meta `members` (JSON members after param_plan), the meta at
  // meta_path(), its files opened by path; and the same from the directory a walk holds,
  // which must say the same.
  Lines check(const std::string& members, bool note_no_bundle = true) {
    const FrozenMeta* meta = decode(members, meta_path());
    if (meta == nullptr) return {};
    BundleFindings found = check_bundle(*meta, {disk_, bundle_prefix(meta_path())}, note_no_bundle);
    std::shared_ptr<Directory> dir;
    EXPECT_EQ(disk_.open_directory(std::string(kDir), &dir), 0);
    const BundleFindings walked =
        check_bundle(*meta, {disk_, bundle_prefix(meta_path()), dir.get()}, note_no_bundle);
    EXPECT_EQ(render_all(walked.findings), render_all(found.findings));
    record_ = found.record;
    last_ = std::move(found.findings);
    return render_all(last_);
  }

  // "error: <meta>: POINTER: MESSAGE".
  std::string error(const std::string& pointer, const std::string& message) const {
    return "error: " + meta_path() + ": " + pointer + ": " + message;
  }
  // The finding about a file that cannot be read, and about one whose sha256 differs.
  std::string unreadable(const std::string& pointer, const std::string& name,
                         const std::string& why, const std::string& sha256) const {
    return error(pointer, path(name) + ": " + why + " (recorded sha256 " + sha256 +
                              std::string(kRestore) + path(name));
  }
  std::string drift(const std::string& pointer, const std::string& name,
                    const std::string& what) const {
    return error(pointer, path(name) + ": hash drift (recorded sha256 " + what +
                              std::string(kRevert) + path(name));
  }

  FakeFileSystem disk_;
  std::map<std::string, std::string> files_;  // the bundle's files, as Python gets them
  Diagnostics last_;
  BundleRecord record_ = BundleRecord::kNone;
};

TEST(BundlePrefix, TheMetasDirectoryAsGiven) {
  EXPECT_EQ(bundle_prefix("gen/codegen_meta.json"), "gen/");
  EXPECT_EQ(bundle_prefix("codegen_meta.json"), "");
  EXPECT_EQ(bundle_prefix("/abs/x/codegen_meta.json"), "/abs/x/");
  EXPECT_EQ(bundle_prefix("a//b/meta.json"), "a//b/");
  EXPECT_EQ(bundle_prefix("/codegen_meta.json"), "/");
}

// ---------------------------------------------------------------------------------------
// Bundles that verify

TEST_F(BundleCheck, UpstreamBundleVerifies) {
  make_bundle(R"("Qwen3_Moe")");
  const std::string outputs = recorded_outputs(R"("Qwen3_Moe")");
  EXPECT_NE(outputs.find(R"("modeling": {"lines": 4, "sha256": ")"), std::string::npos) << outputs;
  EXPECT_NE(outputs.find(R"("configuration_x.py": {"lines": 1,)"), std::string::npos) << outputs;
  EXPECT_EQ(check(R"("model_name": "Qwen3_Moe", "remote_siblings": ["configuration_x.py"],
                     "outputs": )" +
                  outputs),
            Lines{});
  EXPECT_EQ(record_, BundleRecord::kFiles);
}

// model_name absent, null or "": upstream's `model_name or "model"`.
TEST_F(BundleCheck, ModelNameAbsentNullOrEmpty) {
  const std::string modeling = make_bundle("null");
  EXPECT_EQ(modeling, "modeling_model_gen_npu.py");
  const std::string outputs = recorded_outputs("null");
  for (const std::string model_name : {"", R"("model_name": null, )", R"("model_name": "", )"}) {
    EXPECT_EQ(check(model_name + R"("outputs": )" + outputs), Lines{}) << model_name;
  }
}

// Letters and digits of any script stay, everything else becomes '_', one per code point
// (Python's str.isalnum), and the path is shown as it is in a message (no hazard in it).
TEST_F(BundleCheck, UnicodeAndPunctuationInModelName) {
  const std::string model_name = R"("Qwen-3.5 \u6a21\u578b\u00b7\u00fc\u00b2\u0663!_x")";
  const std::string modeling = make_bundle(model_name);
  EXPECT_EQ(modeling,
            "modeling_Qwen_3_5_\xe6\xa8\xa1\xe5\x9e\x8b_\xc3\xbc\xc2\xb2\xd9\xa3__x_gen_npu.py");
  const std::string outputs = recorded_outputs(model_name);
  EXPECT_EQ(check(R"("model_name": )" + model_name + R"(, "outputs": )" + outputs), Lines{});

  const PythonDigest before = python_digest(modeling);
  spit(modeling, "edited\n");
  const PythonDigest after = python_digest(modeling);
  EXPECT_EQ(
      check(R"("model_name": )" + model_name + R"(, "outputs": )" + outputs),
      Lines{drift("/outputs/modeling", modeling,
                  before.sha256 + ", actual " + after.sha256 + "; recorded 4 lines, actual 1")});
  EXPECT_EQ(last_[0].annotate_file, path(modeling));
}

// ---------------------------------------------------------------------------------------
// Nothing to verify

TEST_F(BundleCheck, NoOutputsIsOneNote) {
  EXPECT_EQ(check(""), Lines{"note: " + meta_path() +
                             ": the meta records no generated bundle (no outputs): nothing to "
                             "verify"});
  EXPECT_EQ(record_, BundleRecord::kNone);
  EXPECT_EQ(check(R"("outputs": {}, "remote_siblings": ["configuration_x.py"])"),
            Lines{"note: " + meta_path() +
                  ": /outputs: the meta records no generated bundle (outputs is empty): nothing "
                  "to verify"});
  EXPECT_EQ(record_, BundleRecord::kNone);
}

// A run that counts the metas without a bundle (a walk of several) asks for no note.
TEST_F(BundleCheck, NoNoteWhenTheRunCountsThem) {
  EXPECT_EQ(check("", false), Lines{});
  EXPECT_EQ(record_, BundleRecord::kNone);
  EXPECT_EQ(check(R"("outputs": {})", false), Lines{});
  EXPECT_EQ(record_, BundleRecord::kNone);
  // Only the note goes: the other findings stay.
  EXPECT_EQ(check(R"("outputs": {}, "model_name": 1)", false),
            Lines{error("/model_name", "expected a string or null, got an integer")});
}

// Not an object: the schema rule's error is the finding (check_meta), the pass adds none.
TEST_F(BundleCheck, OutputsNotAnObject) {
  EXPECT_EQ(check(R"("outputs": null)"), Lines{});
  EXPECT_EQ(record_, BundleRecord::kNotAnObject);
  EXPECT_EQ(check(R"("outputs": [{"sha256": "x"}])"), Lines{});
  EXPECT_EQ(record_, BundleRecord::kNotAnObject);
}

// ---------------------------------------------------------------------------------------
// Upstream's rules about what is recorded

TEST_F(BundleCheck, MissingRoles) {
  const std::string hash = R"({"sha256": ")" + kEmptySha256 + R"("})";
  spit("extra.py", "");
  EXPECT_EQ(
      check(R"("model_name": "M", "outputs": {"extra.py": )" + hash + "}"),
      (Lines{error("/outputs", "missing diff output hash (" + path("modeling_M_gen_npu.py") +
                                   ".diff)" + std::string(kRegenerate)),
             error("/outputs", "missing init output hash (" + path("__init__.py") + ")" +
                                   std::string(kRegenerate)),
             error("/outputs", "missing modeling output hash (" + path("modeling_M_gen_npu.py") +
                                   ")" + std::string(kRegenerate))}));
  for (const Diagnostic& d : last_) {
    EXPECT_EQ(d.annotate_file, "");  // the meta is what to fix
    EXPECT_EQ(d.error_class, ErrorClass::kRejected);
    EXPECT_EQ(d.file, meta_path());
  }
}

TEST_F(BundleCheck, RemoteSiblingWithoutOutput) {
  make_bundle(R"("M")");
  const std::string outputs = recorded_outputs(R"("M")");
  EXPECT_EQ(
      check(R"("model_name": "M", "outputs": )" + outputs +
            R"(, "remote_siblings": ["configuration_x.py", 3, "tokenizer_x.py", "a'b"])"),
      (Lines{error("/remote_siblings/2", "missing output hash for remote sibling 'tokenizer_x.py'" +
                                             std::string(kRegenerate)),
             error("/remote_siblings/3",
                   "missing output hash for remote sibling 'a\\'b'" + std::string(kRegenerate))}));
}

// A key that names no plain file: nothing is opened for it, even where a file of that path
// would verify (a/b below) or would be refused for another reason ("..", a directory).
TEST_F(BundleCheck, InvalidOutputFilenames) {
  make_bundle(R"("M")");
  const std::string outputs = recorded_outputs(R"("M")");
  disk_.add_dir(path("a"));
  disk_.add_file(path("a/b"), "");
  const std::string hash = R"({"sha256": ")" + kEmptySha256 + R"("})";
  std::string members = R"("model_name": "M", "outputs": )" + outputs.substr(0, outputs.size() - 1);
  for (const char* key : {"", ".", "..", "a/b", "a\\\\b", "nul\\u0000", "../etc/passwd", "/abs"}) {
    members += std::string(", \"") + key + "\": " + hash;
  }
  const auto invalid = [this](const std::string& pointer, const std::string& quoted) {
    return error(pointer, "invalid output filename " + quoted +
                              ": not a plain file name of the bundle" + std::string(kRegenerate));
  };
  disk_.log.clear();
  EXPECT_EQ(
      check(members + "}"),
      (Lines{invalid("/outputs/", "''"), invalid("/outputs/.", "'.'"),
             invalid("/outputs/..", "'..'"), invalid("/outputs/..~1etc~1passwd", "'../etc/passwd'"),
             invalid("/outputs/a\\b", "'a\\\\b'"), invalid("/outputs/a~1b", "'a/b'"),
             invalid("/outputs/nul\\x00", "'nul\\x00'"), invalid("/outputs/~1abs", "'/abs'")}));
  for (const std::string& call : disk_.log) {
    EXPECT_FALSE(call.find("a/b") != std::string::npos || call.find("..") != std::string::npos ||
                 call.find("abs") != std::string::npos)
        << call;
  }
}

// The role keys are never file names themselves, whatever model_name holds.
TEST_F(BundleCheck, RoleKeysNameTheirFiles) {
  const std::string modeling = make_bundle(R"("../x")");
  EXPECT_EQ(modeling, "modeling____x_gen_npu.py");
  const std::string outputs = recorded_outputs(R"("../x")");
  EXPECT_EQ(check(R"("model_name": "../x", "outputs": )" + outputs), Lines{});
}

TEST_F(BundleCheck, EntriesWithoutAUsableSha256) {
  spit("__init__.py", "");
  spit("modeling_M_gen_npu.py", "");
  spit("modeling_M_gen_npu.py.diff", "");
  const std::string expected =
      "expected an object with a 'sha256' of 64 lowercase hex digits, got ";
  const std::string fix(kRegenerate);
  EXPECT_EQ(
      check(R"("model_name": "M", "outputs": {
          "modeling": ")" +
            kEmptySha256 + R"(",
          "diff": {"lines": 0},
          "init": {"sha256": 12},
          "upper.py": {"sha256": ")" +
            std::string(64, 'A') + R"("},
          "short.py": {"sha256": "abc"},
          "long.py": {"sha256": ")" +
            std::string(200, 'f') + R"("},
          "list.py": [")" +
            kEmptySha256 + R"("]})"),
      (Lines{error("/outputs/diff", expected + "an object without one" + fix),
             error("/outputs/init", expected + "a 'sha256' that is an integer" + fix),
             error("/outputs/list.py", expected + "an array" + fix),
             error("/outputs/long.py",
                   expected + "'" + shorten_for_diagnostic(std::string(200, 'f')) + "'" + fix),
             error("/outputs/modeling", expected + "a string" + fix),
             error("/outputs/short.py", expected + "'abc'" + fix),
             error("/outputs/upper.py", expected + "'" + std::string(64, 'A') + "'" + fix)}));
}

// ---------------------------------------------------------------------------------------
// The files

TEST_F(BundleCheck, MissingFilesWithTheRecordedSha256) {
  make_bundle(R"("M")");
  const std::string outputs = recorded_outputs(R"("M")");
  const std::string init_sha256 = python_digest("__init__.py").sha256;
  const std::string config_sha256 = python_digest("configuration_x.py").sha256;
  remove("__init__.py");
  remove("configuration_x.py");
  EXPECT_EQ(check(R"("model_name": "M", "remote_siblings": ["configuration_x.py"], "outputs": )" +
                  outputs),
            (Lines{unreadable("/outputs/configuration_x.py", "configuration_x.py",
                              "cannot open: No such file or directory", config_sha256),
                   unreadable("/outputs/init", "__init__.py",
                              "cannot open: No such file or directory", init_sha256)}));
  ASSERT_EQ(last_.size(), 2u);
  EXPECT_EQ(last_[0].annotate_file, path("configuration_x.py"));
  EXPECT_EQ(last_[1].annotate_file, path("__init__.py"));
  EXPECT_EQ(last_[1].error_class, ErrorClass::kRejected);
}

// What digesting says about a file that is none (a FIFO, a directory, a device, a socket) or
// cannot be read is the finding, with the file's next step.
TEST_F(BundleCheck, FilesThatAreNoneOrCannotBeRead) {
  make_bundle(R"("M")");
  const std::string outputs = recorded_outputs(R"("M")");
  const std::string init_sha256 = python_digest("__init__.py").sha256;
  const std::string config_sha256 = python_digest("configuration_x.py").sha256;
  const std::string modeling_sha256 = python_digest("modeling_M_gen_npu.py").sha256;
  remove("__init__.py");
  disk_.add_fifo(path("__init__.py"));
  remove("configuration_x.py");
  disk_.add_dir(path("configuration_x.py"));
  disk_.nodes.at(path("modeling_M_gen_npu.py")).read_error = EIO;
  disk_.add_device(path("zero.py"));
  disk_.add_socket(path("s.py"));
  const std::string hash = R"({"sha256": ")" + kEmptySha256 + R"("})";
  EXPECT_EQ(
      check(R"("model_name": "M", "outputs": )" + outputs.substr(0, outputs.size() - 1) +
            R"(, "zero.py": )" + hash + R"(, "s.py": )" + hash + "}"),
      (Lines{
          unreadable("/outputs/configuration_x.py", "configuration_x.py", "is a directory",
                     config_sha256),
          unreadable("/outputs/init", "__init__.py", "is a FIFO, not a regular file", init_sha256),
          unreadable("/outputs/modeling", "modeling_M_gen_npu.py",
                     "read failed: Input/output error", modeling_sha256),
          unreadable("/outputs/s.py", "s.py", "is a socket, not a regular file", kEmptySha256),
          unreadable("/outputs/zero.py", "zero.py", "is a character device, not a regular file",
                     kEmptySha256)}));
}

// A sha256 that differs: both sha256s, and both line counts when lines is recorded.
TEST_F(BundleCheck, HashDrift) {
  const std::string modeling = make_bundle(R"("M")");
  const std::string outputs = recorded_outputs(R"("M")");
  const PythonDigest before = python_digest(modeling);
  const PythonDigest diff_before = python_digest(modeling + ".diff");
  spit(modeling, "import torch\r\n\r\nclass Model:\n    pass\n# edited by hand\n");
  const PythonDigest after = python_digest(modeling);
  ASSERT_EQ(after.lines, "5");
  // diff recorded without lines: the counts are left out.
  spit(modeling + ".diff", "changed");
  const PythonDigest diff_after = python_digest(modeling + ".diff");
  std::string members = R"("model_name": "M", "outputs": )" + outputs;
  const std::string diff_lines = R"("diff": {"lines": 5, )";
  const std::size_t diff_entry = members.find(diff_lines);
  ASSERT_NE(diff_entry, std::string::npos) << members;
  members.replace(diff_entry, diff_lines.size(), R"("diff": {)");
  EXPECT_EQ(
      check(members),
      (Lines{drift("/outputs/diff", modeling + ".diff",
                   diff_before.sha256 + ", actual " + diff_after.sha256),
             drift("/outputs/modeling", modeling,
                   before.sha256 + ", actual " + after.sha256 + "; recorded 4 lines, actual 5")}));
  EXPECT_EQ(last_[0].annotate_file, path(modeling + ".diff"));
  EXPECT_EQ(last_[1].annotate_file, path(modeling));
}

// Line counts as Python's text mode makes them: LF, CRLF and a lone CR each end a line, a
// last line without one counts; NEL, VT, FF and U+2028 end none. A file that is not UTF-8
// has no count.
TEST_F(BundleCheck, LineCountsAsPythonCountsThem) {
  const std::vector<std::pair<std::string, std::string>> files = {{"lf.py", "a\nb\n"},
                                                                  {"crlf.py", "a\r\nb\r\n"},
                                                                  {"cr.py", "a\rb\rc"},
                                                                  {"mixed.py", "a\r\n\r\rb\nc"},
                                                                  {"empty.py", ""},
                                                                  {"no_end.py", "abc"},
                                                                  {"others.py",
                                                                   "a\xc2\x85"
                                                                   "b\vc\fd\xe2\x80\xa8"
                                                                   "e\n"},
                                                                  {"latin1.py", "caf\xe9\n"},
                                                                  {"cut.py", "\xe2\x82"}};
  std::string outputs = R"({"init": {"sha256": ")" + kEmptySha256 + R"("})";
  spit("__init__.py", "");
  for (const auto& [name, bytes] : files) {
    spit(name, bytes);
    outputs += ", \"" + name + "\": {\"sha256\": \"" + std::string(64, '0') + "\", \"lines\": 99}";
  }
  spit("modeling_model_gen_npu.py", "");
  spit("modeling_model_gen_npu.py.diff", "");
  outputs += R"(, "modeling": {"sha256": ")" + kEmptySha256 + R"("}, "diff": {"sha256": ")" +
             kEmptySha256 + R"("}})";
  const Lines lines = check(R"("outputs": )" + outputs);
  ASSERT_EQ(lines.size(), files.size());
  std::vector<std::pair<std::string, std::string>> sorted = files;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const PythonDigest python = python_digest(sorted[i].first);
    const std::string count = python.lines == "-" ? "not UTF-8" : python.lines;
    EXPECT_EQ(lines[i], drift("/outputs/" + sorted[i].first, sorted[i].first,
                              std::string(64, '0') + ", actual " + python.sha256 +
                                  "; recorded 99 lines, actual " + count));
  }
  // The counts themselves, from Python: pinned here so the reference is seen to count.
  EXPECT_EQ(python_digest("mixed.py").lines, "5");
  EXPECT_EQ(python_digest("others.py").lines, "1");
  EXPECT_EQ(python_digest("latin1.py").lines, "-");
}

// A key or path holding a control character is shown as a JSON string in the message, as
// every name on output is (json/output_name.h); the annotation keeps the real path.
TEST_F(BundleCheck, HazardousNamesInMessages) {
  make_bundle(R"("M")");
  const std::string outputs = recorded_outputs(R"("M")");
  const std::string shown = "\"" + path("a\\nb.py") + "\"";
  EXPECT_EQ(check(R"("model_name": "M", "outputs": )" + outputs.substr(0, outputs.size() - 1) +
                  R"(, "a\nb.py": {"sha256": ")" + kEmptySha256 + R"("}})"),
            Lines{error("/outputs/a\\nb.py", shown +
                                                 ": cannot open: No such file or directory "
                                                 "(recorded sha256 " +
                                                 kEmptySha256 + std::string(kRestore) + shown)});
  EXPECT_EQ(last_[0].annotate_file, path("a\nb.py"));
}

// A path longer than a pointer may be is shortened as a pointer is, wherever the message
// names it; one whose name no file system holds (over 255 bytes) is no file to annotate.
TEST_F(BundleCheck, LongPathsAreShortenedAsPointersAre) {
  const std::string name(1 << 20, 'n');  // a 1 MB model_name
  const std::string modeling = "modeling_" + name + "_gen_npu.py";
  spit("__init__.py", "");
  spit(modeling + ".diff", "");
  spit(modeling, "edited\n");
  const PythonDigest after = python_digest(modeling);
  const std::string key(300, 'k');
  const Lines lines =
      check(R"("model_name": ")" + name + R"(", "outputs": {"init": {"sha256": ")" + kEmptySha256 +
            R"("}, "diff": {"sha256": ")" + kEmptySha256 + R"("}, "modeling": {"sha256": ")" +
            kEmptySha256 + R"("}, ")" + key + R"(": {"sha256": ")" + kEmptySha256 + R"("}})");
  const std::string shown = shorten_for_diagnostic(path(modeling));
  const std::string key_shown = shorten_for_diagnostic(path(key));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            error(shorten_for_diagnostic("/outputs/" + key),
                  key_shown + ": cannot open: No such file or directory (recorded sha256 " +
                      kEmptySha256 + std::string(kRestore) + key_shown));
  EXPECT_EQ(lines[1], error("/outputs/modeling", shown + ": hash drift (recorded sha256 " +
                                                     kEmptySha256 + ", actual " + after.sha256 +
                                                     std::string(kRevert) + shown));
  EXPECT_LT(lines[1].size(), 1000u);
  EXPECT_EQ(last_[0].annotate_file, "");  // 300 bytes: no file has that name
  EXPECT_EQ(last_[1].annotate_file, "");
}

// model_name neither a string nor null: its error, and the two files it names are not
// verified (there is no name to open); every other file still is.
TEST_F(BundleCheck, ModelNameThatNamesNoFile) {
  make_bundle(R"("M")");
  const std::string outputs = recorded_outputs(R"("M")");
  spit("__init__.py", "changed\n");
  const PythonDigest init_after = python_digest("__init__.py");
  const Lines lines = check(R"("model_name": 7, "outputs": )" + outputs);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], error("/model_name", "expected a string or null, got an integer"));
  EXPECT_EQ(lines[1].substr(0, lines[1].find(" (recorded")),
            error("/outputs/init", path("__init__.py") + ": hash drift"));
  EXPECT_NE(lines[1].find("actual " + init_after.sha256 + "; recorded 1 line, actual 1)"),
            std::string::npos)
      << lines[1];
  // With no roles recorded, the missing ones have no file name to show.
  const std::string fix(kRegenerate);
  EXPECT_EQ(
      check(R"("model_name": ["M"], "outputs": {"x.py": {"sha256": ")" + kEmptySha256 + R"("}})"),
      (Lines{error("/model_name", "expected a string or null, got an array"),
             error("/outputs", "missing diff output hash" + fix),
             error("/outputs", "missing init output hash (" + path("__init__.py") + ")" + fix),
             error("/outputs", "missing modeling output hash" + fix),
             unreadable("/outputs/x.py", "x.py", "cannot open: No such file or directory",
                        kEmptySha256)}));
}

// The order: by pointer in byte order, then by message, whatever the document's order.
TEST_F(BundleCheck, FindingsSortedByPointerThenMessage) {
  const std::string hash = R"({"sha256": ")" + kEmptySha256 + R"("})";
  const Lines lines = check(R"("remote_siblings": ["s.py"], "outputs": {"z.py": )" + hash +
                            R"(, "b.py": 1, "a.py": )" + hash + "}, \"model_name\": false");
  std::vector<std::string> pointers;
  for (const Diagnostic& d : last_) pointers.push_back(d.pointer);
  EXPECT_EQ(pointers, (std::vector<std::string>{"/model_name", "/outputs", "/outputs", "/outputs",
                                                "/outputs/a.py", "/outputs/b.py", "/outputs/z.py",
                                                "/remote_siblings/0"}));
  EXPECT_EQ(lines[1], error("/outputs", "missing diff output hash" + std::string(kRegenerate)));
  EXPECT_EQ(lines[2], error("/outputs", "missing init output hash (" + path("__init__.py") + ")" +
                                            std::string(kRegenerate)));
}

// The meta named without a directory: its bundle is the working directory, named "".
TEST_F(BundleCheck, BareMetaPathNamesFilesBare) {
  const std::string hash = R"({"sha256": ")" + kEmptySha256 + R"("})";
  const FrozenMeta* meta =
      decode(R"("outputs": {"no_such_file_here.py": )" + hash + "}", "codegen_meta.json");
  ASSERT_NE(meta, nullptr);
  const BundleFindings found = check_bundle(*meta, {disk_, bundle_prefix("codegen_meta.json")});
  ASSERT_EQ(found.findings.size(), 4u);
  EXPECT_EQ(found.findings[3].location_and_message(),
            "codegen_meta.json: /outputs/no_such_file_here.py: no_such_file_here.py: cannot "
            "open: No such file or directory (recorded sha256 " +
                kEmptySha256 + "): regenerate the bundle or restore no_such_file_here.py");
  EXPECT_EQ(found.findings[3].annotate_file, "no_such_file_here.py");
}

// The bundle a walk found is the one beside the meta it found: read from the directory the
// walk holds, also when that directory is moved and a link to another put in its place.
TEST_F(BundleCheck, AWalksBundleIsReadFromItsDirectory) {
  make_bundle(R"("M")");
  const std::string outputs = recorded_outputs(R"("M")");
  const FrozenMeta* meta = decode(R"("model_name": "M", "outputs": )" + outputs, meta_path());
  ASSERT_NE(meta, nullptr);
  std::shared_ptr<Directory> dir;
  ASSERT_EQ(disk_.open_directory("b", &dir), 0);
  disk_.rename_tree("b", "b_moved");
  disk_.add_dir("elsewhere");
  disk_.add_symlink("b", "elsewhere");
  EXPECT_EQ(render_all(check_bundle(*meta, {disk_, "b/", dir.get()}).findings), Lines{});
  // By path, "b/" is the link now: nothing of the bundle is there.
  EXPECT_EQ(check_bundle(*meta, {disk_, "b/"}).findings.size(), 4u);
}

// The example of docs/cli.md ("Bundles"), made and checked with the paths relative as the
// user gives them.
TEST_F(BundleCheck, TheDocumentedExample) {
  disk_.add_dir("gen");
  files_.clear();
  const auto gen = [&](const std::string& name, const std::string& bytes) {
    disk_.add_file("gen/" + name, bytes);
    files_[name] = bytes;
  };
  gen("modeling_M_gen_npu.py", "import torch\n");
  gen("modeling_M_gen_npu.py.diff", "");
  gen("__init__.py", "");
  const std::string recorded = recorded_outputs(R"("M")");
  gen("modeling_M_gen_npu.py", "import torch\n# edited\n");
  const FrozenMeta* meta =
      decode(R"("model_name": "M", "outputs": )" + recorded, "gen/codegen_meta.json");
  ASSERT_NE(meta, nullptr);
  const BundleFindings found = check_bundle(*meta, {disk_, bundle_prefix("gen/codegen_meta.json")});
  ASSERT_EQ(found.findings.size(), 1u);
  EXPECT_EQ(found.findings[0].annotate_file, "gen/modeling_M_gen_npu.py");
  EXPECT_EQ(found.findings[0].code, "HPF406");
  const std::string line =
      "hpfreeze: error: " + found.findings[0].location_and_message() + " [HPF406]\n";
  const std::string docs =
      io_testing::slurp(std::string(HPFREEZE_TESTDATA_DIR) + "/../docs/cli.md");
  EXPECT_NE(docs.find("\n" + line), std::string::npos) << line;
}

}  // namespace
}  // namespace hpfreeze
