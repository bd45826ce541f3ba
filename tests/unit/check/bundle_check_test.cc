// The bundle pass of check --bundle (check/bundle_check.cc) on bundles the tests make in a
// temporary directory. The recorded outputs come from Python, written the way upstream's
// record_output_hashes writes them (hashlib's sha256, text-mode line counts,
// _default_modeling_name's file name): the independent reference. Every finding is
// compared as its whole line.
#include "check/bundle_check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "check/findings_lines.h"
#include "io/io_test_support.h"
#include "json/json_document.h"
#include "meta/meta.h"
#include "python_reference.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

using check_test::Lines;
using check_test::render_all;
using io_testing::spit;
using test_support::keep;
using testing_python::run_python;
using testing_python::split_lines;

// Upstream's artifact.py and meta.py, restated: the modeling file's name for a model_name
// (argv[2], JSON), and the outputs record_output_hashes writes for the bundle argv[1].
constexpr std::string_view kUpstreamRecord = R"(
import hashlib, json, os, sys

def modeling_name(model_name):
    base = model_name or "model"
    return "modeling_" + "".join(c if c.isalnum() or c == "_" else "_" for c in base) + "_gen_npu.py"

def line_count(path):
    try:
        with open(path, "r", encoding="utf-8") as f:
            return sum(1 for _ in f)
    except UnicodeDecodeError:
        return None

bundle, model_name = sys.argv[1], json.loads(sys.argv[2])
modeling = modeling_name(model_name)
if sys.argv[3] == "name":
    print(modeling)
    sys.exit(0)
roles = {modeling: "modeling", modeling + ".diff": "diff", "__init__.py": "init"}
outputs = {}
for name in sorted(os.listdir(bundle)):
    path = os.path.join(bundle, name)
    if name == "codegen_meta.json" or not os.path.isfile(path):
        continue
    with open(path, "rb") as f:
        outputs[roles.get(name, name)] = {"sha256": hashlib.sha256(f.read()).hexdigest(),
                                          "lines": line_count(path)}
print(json.dumps(outputs, sort_keys=True))
)";

const std::string kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

class BundleCheck : public io_testing::TempDirTest {
 protected:
  std::string meta_path() const { return path("codegen_meta.json"); }

  // The modeling file's name upstream gives `model_name_json`.
  std::string modeling_name(const std::string& model_name_json) const {
    const std::vector<std::string> out =
        split_lines(run_python(kUpstreamRecord, {dir_, model_name_json, "name"}));
    return out.empty() ? std::string() : out[0];
  }

  // The outputs upstream records for the files now in the bundle, as JSON.
  std::string recorded_outputs(const std::string& model_name_json) const {
    const std::vector<std::string> out =
        split_lines(run_python(kUpstreamRecord, {dir_, model_name_json, "record"}));
    return out.empty() ? std::string("{}") : out[0];
  }

  // The sha256 and the line count of `name` as Python sees them ("-": not UTF-8).
  struct PythonDigest {
    std::string sha256;
    std::string lines;
  };
  PythonDigest python_digest(const std::string& name) const {
    const std::vector<std::string> out =
        split_lines(run_python(testing_python::kFileDigestsScript, {path(name)}));
    if (out.empty()) return {};
    return {out[0].substr(0, 64), out[0].substr(out[0].rfind(' ') + 1)};  // without the size
  }

  // An upstream-shaped bundle: the generated modeling file, its diff, __init__.py and a
  // copied remote source; returns the modeling file's name.
  std::string make_bundle(const std::string& model_name_json) {
    const std::string modeling = modeling_name(model_name_json);
    spit(path(modeling), "import torch\r\n\r\nclass Model:\n    pass\n");
    spit(path(modeling + ".diff"), "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y");
    spit(path("__init__.py"), "from .m import Model\n");
    spit(path("configuration_x.py"), "VALUE = 1\r");
    return modeling;
  }

  // The bundle pass over the meta `members` (JSON members after param_plan), the meta at
  // meta_path().
  Lines check(const std::string& members) {
    const std::string text = R"j({"param_plan": {"b": {"params": {"w": {"tp": "R"}}}})j" +
                             (members.empty() ? std::string() : ", " + members) + "}";
    const JsonDocument& doc = keep(test_support::parse_document(text, meta_path()));
    Expected<FrozenMeta> meta = decode_meta(doc, "check");
    if (!meta) return {"meta does not decode: " + meta.errors().front().location_and_message()};
    last_ = check_bundle(*meta, bundle_prefix(meta_path()));
    return render_all(last_);
  }

  // "error: <meta>: POINTER: MESSAGE".
  std::string error(const std::string& pointer, const std::string& message) const {
    return "error: " + meta_path() + ": " + pointer + ": " + message;
  }

  Diagnostics last_;
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
  spit(path(modeling), "edited\n");
  const PythonDigest after = python_digest(modeling);
  EXPECT_EQ(check(R"("model_name": )" + model_name + R"(, "outputs": )" + outputs),
            Lines{error("/outputs/modeling", path(modeling) + ": hash drift (recorded sha256 " +
                                                 before.sha256 + ", actual " + after.sha256 +
                                                 "; recorded 4 lines, actual 1)")});
  EXPECT_EQ(last_[0].annotate_file, path(modeling));
}

// ---------------------------------------------------------------------------------------
// Nothing to verify

TEST_F(BundleCheck, NoOutputsIsOneNote) {
  EXPECT_EQ(check(""), Lines{"note: " + meta_path() +
                             ": the meta records no generated bundle (no outputs): nothing to "
                             "verify"});
  EXPECT_EQ(check(R"("outputs": {}, "remote_siblings": ["configuration_x.py"])"),
            Lines{"note: " + meta_path() +
                  ": /outputs: the meta records no generated bundle (outputs is empty): nothing "
                  "to verify"});
}

// Not an object: the schema rule's error is the finding (check_meta), the pass adds none.
TEST_F(BundleCheck, OutputsNotAnObject) {
  EXPECT_EQ(check(R"("outputs": null)"), Lines{});
  EXPECT_EQ(check(R"("outputs": [{"sha256": "x"}])"), Lines{});
}

// ---------------------------------------------------------------------------------------
// Upstream's rules about what is recorded

TEST_F(BundleCheck, MissingRoles) {
  const std::string hash = R"({"sha256": ")" + kEmptySha256 + R"("})";
  spit(path("extra.py"), "");
  EXPECT_EQ(check(R"("model_name": "M", "outputs": {"extra.py": )" + hash + "}"),
            (Lines{error("/outputs",
                         "missing diff output hash (" + path("modeling_M_gen_npu.py") + ".diff)"),
                   error("/outputs", "missing init output hash (" + path("__init__.py") + ")"),
                   error("/outputs",
                         "missing modeling output hash (" + path("modeling_M_gen_npu.py") + ")")}));
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
      (Lines{error("/remote_siblings/2", "missing output hash for remote sibling 'tokenizer_x.py'"),
             error("/remote_siblings/3", "missing output hash for remote sibling 'a\\'b'")}));
}

// A key that names no plain file: nothing is opened for it, even where a file of that path
// would verify (a/b below) or would be refused for another reason ("..", a directory).
TEST_F(BundleCheck, InvalidOutputFilenames) {
  make_bundle(R"("M")");
  std::filesystem::create_directory(path("a"));
  spit(path("a/b"), "");
  const std::string outputs = recorded_outputs(R"("M")");
  const std::string hash = R"({"sha256": ")" + kEmptySha256 + R"("})";
  std::string members = R"("model_name": "M", "outputs": )" + outputs.substr(0, outputs.size() - 1);
  for (const char* key : {"", ".", "..", "a/b", "a\\\\b", "nul\\u0000", "../etc/passwd", "/abs"}) {
    members += std::string(", \"") + key + "\": " + hash;
  }
  EXPECT_EQ(
      check(members + "}"),
      (Lines{
          error("/outputs/", "invalid output filename '': not a plain file name of the bundle"),
          error("/outputs/.", "invalid output filename '.': not a plain file name of the bundle"),
          error("/outputs/..", "invalid output filename '..': not a plain file name of the bundle"),
          error("/outputs/..~1etc~1passwd",
                "invalid output filename '../etc/passwd': not a plain file name of the bundle"),
          error("/outputs/a\\b",
                "invalid output filename 'a\\\\b': not a plain file name of the bundle"),
          error("/outputs/a~1b",
                "invalid output filename 'a/b': not a plain file name of the bundle"),
          error("/outputs/nul\\x00",
                "invalid output filename 'nul\\x00': not a plain file name of the bundle"),
          error("/outputs/~1abs",
                "invalid output filename '/abs': not a plain file name of the bundle")}));
}

// The role keys are never file names themselves, whatever model_name holds.
TEST_F(BundleCheck, RoleKeysNameTheirFiles) {
  const std::string modeling = make_bundle(R"("../x")");
  EXPECT_EQ(modeling, "modeling____x_gen_npu.py");
  const std::string outputs = recorded_outputs(R"("../x")");
  EXPECT_EQ(check(R"("model_name": "../x", "outputs": )" + outputs), Lines{});
}

TEST_F(BundleCheck, EntriesWithoutAUsableSha256) {
  spit(path("__init__.py"), "");
  spit(path("modeling_M_gen_npu.py"), "");
  spit(path("modeling_M_gen_npu.py.diff"), "");
  const std::string expected =
      "expected an object with a 'sha256' of 64 lowercase hex digits, got ";
  EXPECT_EQ(check(R"("model_name": "M", "outputs": {
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
            (Lines{error("/outputs/diff", expected + "an object without one"),
                   error("/outputs/init", expected + "a 'sha256' that is an integer"),
                   error("/outputs/list.py", expected + "an array"),
                   error("/outputs/long.py",
                         expected + "'" + shorten_for_diagnostic(std::string(200, 'f')) + "'"),
                   error("/outputs/modeling", expected + "a string"),
                   error("/outputs/short.py", expected + "'abc'"),
                   error("/outputs/upper.py", expected + "'" + std::string(64, 'A') + "'")}));
}

// ---------------------------------------------------------------------------------------
// The files

TEST_F(BundleCheck, MissingFilesWithTheRecordedSha256) {
  make_bundle(R"("M")");
  const std::string outputs = recorded_outputs(R"("M")");
  const std::string init_sha256 = python_digest("__init__.py").sha256;
  const std::string config_sha256 = python_digest("configuration_x.py").sha256;
  ASSERT_EQ(::unlink(path("__init__.py").c_str()), 0);
  ASSERT_EQ(::unlink(path("configuration_x.py").c_str()), 0);
  EXPECT_EQ(check(R"("model_name": "M", "remote_siblings": ["configuration_x.py"], "outputs": )" +
                  outputs),
            (Lines{error("/outputs/configuration_x.py",
                         path("configuration_x.py") +
                             ": cannot open: No such file or directory (recorded sha256 " +
                             config_sha256 + ")"),
                   error("/outputs/init", path("__init__.py") +
                                              ": cannot open: No such file or directory "
                                              "(recorded sha256 " +
                                              init_sha256 + ")")}));
  ASSERT_EQ(last_.size(), 2u);
  EXPECT_EQ(last_[0].annotate_file, path("configuration_x.py"));
  EXPECT_EQ(last_[1].annotate_file, path("__init__.py"));
  EXPECT_EQ(last_[1].error_class, ErrorClass::kRejected);
}

// A FIFO (with no writer: opening it for reading blocking would wait forever), a directory
// and a device in place of a generated file are errors at once.
TEST_F(BundleCheck, FifoDirectoryAndDeviceAreErrorsNotHangs) {
  make_bundle(R"("M")");
  const std::string outputs = recorded_outputs(R"("M")");
  const std::string init_sha256 = python_digest("__init__.py").sha256;
  const std::string config_sha256 = python_digest("configuration_x.py").sha256;
  ASSERT_EQ(::unlink(path("__init__.py").c_str()), 0);
  ASSERT_EQ(::mkfifo(path("__init__.py").c_str(), 0600), 0);
  ASSERT_EQ(::unlink(path("configuration_x.py").c_str()), 0);
  std::filesystem::create_directory(path("configuration_x.py"));
  const std::string hash = R"({"sha256": ")" + kEmptySha256 + R"("})";
  ASSERT_EQ(::symlink("/dev/zero", path("zero.py").c_str()), 0);
  const auto start = std::chrono::steady_clock::now();
  const Lines lines =
      check(R"("model_name": "M", "outputs": )" + outputs.substr(0, outputs.size() - 1) +
            R"(, "zero.py": )" + hash + "}");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines.at(0), error("/outputs/configuration_x.py",
                               path("configuration_x.py") + ": is a directory (recorded sha256 " +
                                   config_sha256 + ")"));
  EXPECT_EQ(lines.at(1), error("/outputs/init", path("__init__.py") +
                                                    ": is a FIFO, not a regular file (recorded "
                                                    "sha256 " +
                                                    init_sha256 + ")"));
  EXPECT_EQ(lines.at(2),
            error("/outputs/zero.py", path("zero.py") +
                                          ": is a character device, not a regular file "
                                          "(recorded sha256 " +
                                          kEmptySha256 + ")"));
}

// A sha256 that differs: both sha256s, and both line counts when lines is recorded.
TEST_F(BundleCheck, HashDrift) {
  const std::string modeling = make_bundle(R"("M")");
  const std::string outputs = recorded_outputs(R"("M")");
  const PythonDigest before = python_digest(modeling);
  const PythonDigest diff_before = python_digest(modeling + ".diff");
  spit(path(modeling), "import torch\r\n\r\nclass Model:\n    pass\n# edited by hand\n");
  const PythonDigest after = python_digest(modeling);
  ASSERT_EQ(after.lines, "5");
  // diff recorded without lines: the counts are left out.
  spit(path(modeling + ".diff"), "changed");
  const PythonDigest diff_after = python_digest(modeling + ".diff");
  std::string members = R"("model_name": "M", "outputs": )" + outputs;
  const std::string diff_lines = R"("diff": {"lines": 5, )";
  const std::size_t diff_entry = members.find(diff_lines);
  ASSERT_NE(diff_entry, std::string::npos) << members;
  members.replace(diff_entry, diff_lines.size(), R"("diff": {)");
  EXPECT_EQ(
      check(members),
      (Lines{error("/outputs/diff", path(modeling + ".diff") + ": hash drift (recorded sha256 " +
                                        diff_before.sha256 + ", actual " + diff_after.sha256 + ")"),
             error("/outputs/modeling", path(modeling) + ": hash drift (recorded sha256 " +
                                            before.sha256 + ", actual " + after.sha256 +
                                            "; recorded 4 lines, actual 5)")}));
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
  spit(path("__init__.py"), "");
  for (const auto& [name, bytes] : files) {
    spit(path(name), bytes);
    outputs += ", \"" + name + "\": {\"sha256\": \"" + std::string(64, '0') + "\", \"lines\": 99}";
  }
  spit(path("modeling_model_gen_npu.py"), "");
  spit(path("modeling_model_gen_npu.py.diff"), "");
  outputs += R"(, "modeling": {"sha256": ")" + kEmptySha256 + R"("}, "diff": {"sha256": ")" +
             kEmptySha256 + R"("}})";
  const Lines lines = check(R"("outputs": )" + outputs);
  ASSERT_EQ(lines.size(), files.size());
  std::vector<std::pair<std::string, std::string>> sorted = files;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const PythonDigest python = python_digest(sorted[i].first);
    const std::string count = python.lines == "-" ? "not UTF-8" : python.lines;
    EXPECT_EQ(lines[i], error("/outputs/" + sorted[i].first,
                              path(sorted[i].first) + ": hash drift (recorded sha256 " +
                                  std::string(64, '0') + ", actual " + python.sha256 +
                                  "; recorded 99 lines, actual " + count + ")"));
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
  EXPECT_EQ(check(R"("model_name": "M", "outputs": )" + outputs.substr(0, outputs.size() - 1) +
                  R"(, "a\nb.py": {"sha256": ")" + kEmptySha256 + R"("}})"),
            Lines{error("/outputs/a\\nb.py", "\"" + path("a\\nb.py") +
                                                 "\": cannot open: No such file or directory "
                                                 "(recorded sha256 " +
                                                 kEmptySha256 + ")")});
  EXPECT_EQ(last_[0].annotate_file, path("a\nb.py"));
}

// model_name neither a string nor null: its error, and the two files it names are not
// verified (there is no name to open); every other file still is.
TEST_F(BundleCheck, ModelNameThatNamesNoFile) {
  make_bundle(R"("M")");
  const std::string outputs = recorded_outputs(R"("M")");
  spit(path("__init__.py"), "changed\n");
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
  EXPECT_EQ(
      check(R"("model_name": ["M"], "outputs": {"x.py": {"sha256": ")" + kEmptySha256 + R"("}})"),
      (Lines{error("/model_name", "expected a string or null, got an array"),
             error("/outputs", "missing diff output hash"),
             error("/outputs", "missing init output hash (" + path("__init__.py") + ")"),
             error("/outputs", "missing modeling output hash"),
             error("/outputs/x.py", path("x.py") +
                                        ": cannot open: No such file or directory "
                                        "(recorded sha256 " +
                                        kEmptySha256 + ")")}));
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
  EXPECT_EQ(lines[1], error("/outputs", "missing diff output hash"));
  EXPECT_EQ(lines[2], error("/outputs", "missing init output hash (" + path("__init__.py") + ")"));
}

// The meta named without a directory: its bundle is the working directory, named "".
TEST_F(BundleCheck, BareMetaPathNamesFilesBare) {
  const std::string hash = R"({"sha256": ")" + kEmptySha256 + R"("})";
  const JsonDocument& doc = keep(test_support::parse_document(
      R"j({"param_plan": {}, "outputs": {"no_such_file_here.py": )j" + hash + "}}",
      "codegen_meta.json"));
  Expected<FrozenMeta> meta = decode_meta(doc, "check");
  ASSERT_TRUE(meta.ok());
  const Diagnostics findings = check_bundle(*meta, bundle_prefix("codegen_meta.json"));
  ASSERT_EQ(findings.size(), 4u);
  EXPECT_EQ(findings[3].location_and_message(),
            "codegen_meta.json: /outputs/no_such_file_here.py: no_such_file_here.py: cannot "
            "open: No such file or directory (recorded sha256 " +
                kEmptySha256 + ")");
  EXPECT_EQ(findings[3].annotate_file, "no_such_file_here.py");
}

// The example of docs/cli.md ("Bundles"), made and checked from the bundle's parent
// directory, so the paths are relative as the user gives them.
TEST_F(BundleCheck, TheDocumentedExample) {
  std::filesystem::create_directory(path("gen"));
  spit(path("gen/modeling_M_gen_npu.py"), "import torch\n");
  spit(path("gen/modeling_M_gen_npu.py.diff"), "");
  spit(path("gen/__init__.py"), "");
  const std::vector<std::string> recorded =
      split_lines(run_python(kUpstreamRecord, {path("gen"), R"("M")", "record"}));
  ASSERT_EQ(recorded.size(), 1u);
  spit(path("gen/modeling_M_gen_npu.py"), "import torch\n# edited\n");
  const JsonDocument& doc = keep(test_support::parse_document(
      R"j({"param_plan": {}, "model_name": "M", "outputs": )j" + recorded[0] + "}",
      "gen/codegen_meta.json"));
  Expected<FrozenMeta> meta = decode_meta(doc, "check");
  ASSERT_TRUE(meta.ok());
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  const Diagnostics findings = check_bundle(*meta, bundle_prefix("gen/codegen_meta.json"));
  std::filesystem::current_path(cwd);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].annotate_file, "gen/modeling_M_gen_npu.py");
  const std::string line = "hpfreeze: error: " + findings[0].location_and_message() + "\n";
  const std::string docs =
      io_testing::slurp(std::string(HPFREEZE_TESTDATA_DIR) + "/../docs/cli.md");
  EXPECT_NE(docs.find("\n" + line), std::string::npos) << line;
}

}  // namespace
}  // namespace hpfreeze
