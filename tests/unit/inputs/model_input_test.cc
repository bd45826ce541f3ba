// The --model dispatch (lib/src/inputs/model_input.cc) on real files: a safetensors file
// read header only, a sharded index and its shards, a directory, a FIFO never waited for.
// Every file is made here; the data are holes (truncate).
#include "inputs/model_input.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/io.h"
#include "io/io_test_support.h"
#include "support/checkpoints.h"

namespace hpfreeze {
namespace {

using io_testing::TempDirTest;

// The 8-byte little-endian length, the header, then `data` bytes left as a hole.
void write_checkpoint(const std::string& path, std::string_view header, std::uint64_t data,
                      std::optional<std::uint64_t> length = std::nullopt) {
  std::string bytes(8, '\0');
  std::uint64_t n = length.value_or(header.size());
  for (std::size_t i = 0; i < 8; ++i, n >>= 8) bytes[i] = static_cast<char>(n & 0xff);
  bytes += header;
  io_testing::spit(path, bytes);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(bytes.size() + data)), 0);
}

using test_support::error_of;
using test_support::one_tensor;

std::optional<Expected<ModelTree>> read_safetensors(const std::string& path) {
  return read_checkpoint_file(real_file_system(), path);
}

class CheckpointFiles : public TempDirTest {};

TEST_F(CheckpointFiles, RecognisedByContentNotName) {
  // A JSON file is not one, whatever its name; a safetensors file is, whatever its name.
  io_testing::spit(path("model.safetensors"), R"({"format": "hpfreeze.model/v1"})");
  EXPECT_FALSE(read_safetensors(path("model.safetensors")).has_value());
  write_checkpoint(path("model.json"), one_tensor("F32", "[2]", "[0,8]"), 8);
  std::optional<Expected<ModelTree>> m = read_safetensors(path("model.json"));
  ASSERT_TRUE(m.has_value());
  ASSERT_TRUE(m->ok()) << error_of(*m);
  EXPECT_EQ((*m)->parameters.front().first, "w");
  EXPECT_FALSE(read_safetensors(path("missing")).has_value());  // the JSON reader says why
  EXPECT_FALSE(read_safetensors("-").has_value());
}

TEST_F(CheckpointFiles, LengthBeyondTheFileAndShortFiles) {
  write_checkpoint(path("long"), "{}", 0, 1000);
  EXPECT_EQ(error_of(*read_safetensors(path("long"))),
            path("long") +
                ": : the safetensors header length at byte 0 (1000 bytes) runs past "
                "the end of the file (10 bytes)");
  io_testing::spit(path("short"), std::string("\x05\0\0", 3));
  EXPECT_EQ(error_of(*read_safetensors(path("short"))),
            path("short") +
                ": : a safetensors file starts with an 8-byte header length, but the "
                "file has 3 bytes");
}

TEST_F(CheckpointFiles, TheInputLimitAppliesToTheHeader) {
  // A header length of exactly 4 GiB in a sparse file that long: refused before reading.
  const std::uint64_t four_gib = std::uint64_t{4} << 30;
  write_checkpoint(path("huge"), "", four_gib, four_gib);
  const Expected<ModelTree> m = *read_safetensors(path("huge"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.errors().front().error_class, ErrorClass::kIo);
  EXPECT_EQ(error_of(m), path("huge") +
                             ": : input too large: the safetensors header is 4 GiB or "
                             "more (4294967296 bytes, from byte 8)");
  // Data of any size are fine: only the header is read.
  write_checkpoint(path("big"), one_tensor("BF16", "[1048576,262144]", "[0,549755813888]"),
                   std::uint64_t{1} << 39);
  const Expected<ModelTree> big = *read_safetensors(path("big"));
  ASSERT_TRUE(big.ok()) << error_of(big);
  EXPECT_EQ(big->parameters.front().second.shape[1], 262144U);
}

// An index in `dir` and its shards; weight_map entries as given.
void write_index(const std::string& path, std::string_view weight_map) {
  io_testing::spit(
      path, R"({"metadata": {"total_size": 0}, "weight_map": )" + std::string(weight_map) + "}");
}

Expected<ModelTree> load_index(const std::string& path) {
  Expected<InputFile> input = read_input(path);
  EXPECT_TRUE(input.ok());
  Expected<JsonDocument> doc = parse_json_document(input->display_name, std::move(input->bytes));
  EXPECT_TRUE(doc.ok());
  return decode_model_document(real_file_system(), *doc, path);
}

TEST_F(CheckpointFiles, IndexNamesShardsRelativeToItself) {
  ASSERT_EQ(::mkdir(path("ck").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(path("ck/parts").c_str(), 0755), 0);
  write_checkpoint(path("ck/parts/a.safetensors"),
                   R"({"x.w":{"dtype":"BF16","shape":[4,2],"data_offsets":[0,16]},)"
                   R"("x.n":{"dtype":"I64","shape":[3],"data_offsets":[16,40]}})",
                   40);
  write_checkpoint(path("ck/b.safetensors"), one_tensor("F32", "[5]", "[0,20]"), 20);
  write_index(
      path("ck/model.safetensors.index.json"),
      R"({"x.w": "parts/a.safetensors", "w": "b.safetensors", "x.n": "parts/a.safetensors"})");
  const Expected<ModelTree> m = load_index(path("ck/model.safetensors.index.json"));
  ASSERT_TRUE(m.ok()) << error_of(m);
  EXPECT_TRUE(m->checkpoint);
  EXPECT_EQ(m->file, path("ck/model.safetensors.index.json"));
  ASSERT_EQ(m->parameters.size(), 3U);
  EXPECT_EQ(m->parameters[0].first, "x.w");
  EXPECT_EQ(m->parameters[1].first, "x.n");
  EXPECT_EQ(m->parameters[2].first, "w");
  EXPECT_EQ(m->parameters[1].second.dtype, std::optional<std::string_view>("int64"));
  EXPECT_FALSE(m->parameters[1].second.requires_grad);
  EXPECT_EQ(m->find_parameter("w")->shape[0], 5U);
  EXPECT_EQ(m->parameter_pointer("x.w"), "/weight_map/x.w");
}

// Sniffing a FIFO for the safetensors magic must not open it: the open would wait for a
// writer, and closing it again would discard what the writer sent before the JSON reader
// opens the FIFO for real (that reader then waits forever). With no writer at all, the
// sniff returns at once; if it blocked in open(), the write end opened below frees it.
TEST_F(CheckpointFiles, AFifoIsNeitherOpenedNorWaitedFor) {
  const std::string fifo = path("model.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::future<bool> sniffed =
      std::async(std::launch::async, [&] { return read_safetensors(fifo).has_value(); });
  const bool returned = sniffed.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  if (!returned) {
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer >= 0) ::close(writer);
  }
  EXPECT_TRUE(returned) << "read_safetensors waited for the FIFO's writer";
  EXPECT_FALSE(sniffed.get());  // not a checkpoint: the JSON reader reads it, once
  // As a shard named by an index, a FIFO is an error, not a wait.
  write_index(path("i.json"), R"({"w": "model.fifo"})");
  EXPECT_EQ(error_of(load_index(path("i.json"))),
            fifo + ": : is not a regular file (a shard of " + path("i.json") + ")");
}

TEST_F(CheckpointFiles, IndexErrors) {
  write_checkpoint(path("a.safetensors"), one_tensor("F32", "[5]", "[0,20]"), 20);
  write_checkpoint(path("b.safetensors"), one_tensor("F32", "[5]", "[0,20]"), 20);
  // A missing shard: an I/O error naming the shard's file and the index.
  write_index(path("i1.json"), R"({"w": "gone.safetensors"})");
  Expected<ModelTree> m = load_index(path("i1.json"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.errors().front().error_class, ErrorClass::kIo);
  EXPECT_EQ(error_of(m), path("gone.safetensors") +
                             ": : cannot open: No such file or directory "
                             "(a shard of " +
                             path("i1.json") + ")");
  // A tensor of a shard that the weight_map does not list.
  write_checkpoint(path("z.safetensors"),
                   R"({"z":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1);
  write_index(path("i2.json"), R"({"w": "a.safetensors", "v": "z.safetensors"})");
  EXPECT_EQ(error_of(load_index(path("i2.json"))),
            path("i2.json") +
                ": /weight_map: tensor 'z' of shard 'z.safetensors' is not in the "
                "weight_map");
  // Listed, but in another shard than the map says, or in none.
  write_index(path("i4.json"), R"({"v": "a.safetensors", "w": "c.safetensors"})");
  write_checkpoint(path("c.safetensors"),
                   R"({"v":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1);
  EXPECT_EQ(error_of(load_index(path("i4.json"))),
            path("i4.json") +
                ": /weight_map/w: tensor 'w' is in shard 'a.safetensors', not in "
                "'c.safetensors' as the weight_map says");
  write_index(path("i5.json"), R"({"w": "a.safetensors", "u": "a.safetensors"})");
  EXPECT_EQ(error_of(load_index(path("i5.json"))),
            path("i5.json") + ": /weight_map/u: tensor 'u' is not in shard 'a.safetensors'");
  // A shard that is no safetensors file.
  io_testing::spit(path("j.safetensors"), "{}");
  write_index(path("i6.json"), R"({"w": "j.safetensors"})");
  EXPECT_EQ(
      error_of(load_index(path("i6.json"))),
      path("j.safetensors") + ": : is not a safetensors file (a shard of " + path("i6.json") + ")");
  // The weight_map must map names to file names.
  write_index(path("i7.json"), R"({"w": 3})");
  EXPECT_EQ(error_of(load_index(path("i7.json"))),
            path("i7.json") + ": /weight_map/w: expected a string, got an integer");
}

TEST_F(CheckpointFiles, ShardNamesStayInsideTheIndexDirectory) {
  // Every shard below is a valid file that the names would reach; each name is refused
  // before anything is opened, naming the index and the entry.
  ASSERT_EQ(::mkdir(path("ck").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(path("ck/sub").c_str(), 0755), 0);
  write_checkpoint(path("outside.safetensors"), one_tensor("F32", "[5]", "[0,20]"), 20);
  write_checkpoint(path("ck/a.safetensors"), one_tensor("F32", "[5]", "[0,20]"), 20);
  const std::string index = path("ck/i.json");
  const auto refused = [&](const std::string& shard_json, const std::string& shown,
                           const std::string& why) {
    write_index(index, R"({"v": "a.safetensors", "w": ")" + shard_json + R"("})");
    EXPECT_EQ(error_of(load_index(index)),
              index + ": /weight_map/w: shard '" + shown + "' " + why +
                  ": an index names files inside its own directory only")
        << shard_json;
  };
  const std::string absolute = path("outside.safetensors");
  refused(absolute, absolute, "is an absolute path");
  refused(path("ck/a.safetensors"), path("ck/a.safetensors"), "is an absolute path");
  refused("//a.safetensors", "//a.safetensors", "is an absolute path");
  for (const char* up : {"../outside.safetensors", "sub/../a.safetensors", "sub/..",
                         "./../outside.safetensors", "..", "sub/.//../a.safetensors"}) {
    refused(up, up, "has a '..' component");
  }
  // A NUL would end the name open() sees: "a.safetensors\0x" opened a.safetensors.
  refused("a.safetensors\\u0000x", "a.safetensors\\x00x", "holds a NUL byte");
  refused("", "", "is empty");
  // The first entry naming a bad shard is the one reported.
  write_index(index, R"({"w": "../outside.safetensors", "v": "/x"})");
  EXPECT_EQ(error_of(load_index(index)),
            index +
                ": /weight_map/w: shard '../outside.safetensors' has a '..' component: an "
                "index names files inside its own directory only");
  // Dots that are no ".." component, and a subdirectory, are fine.
  write_checkpoint(path("ck/sub/..b.safetensors"),
                   R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1);
  write_checkpoint(path("ck/a..c"), R"({"u":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1);
  write_index(index, R"({"w": "./a.safetensors", "x": "sub/..b.safetensors", "u": "a..c"})");
  const Expected<ModelTree> m = load_index(index);
  ASSERT_TRUE(m.ok()) << error_of(m);
  EXPECT_EQ(m->parameters.size(), 3U);
}

TEST_F(CheckpointFiles, EveryShardErrorNamesItsIndex) {
  // As a missing shard's error always did: a truncated shard, one cut inside its length,
  // and one whose header is corrupt.
  write_checkpoint(path("cut.safetensors"), "{}", 0, 3152);
  io_testing::spit(path("short.safetensors"), std::string("\x05\0\0", 3));
  write_checkpoint(path("gap.safetensors"), one_tensor("U8", "[4]", "[1,5]"), 5);
  const std::string index = path("model.safetensors.index.json");
  for (const auto& [shard, error] : std::vector<std::pair<std::string, std::string>>{
           {"cut.safetensors",
            ": : the safetensors header length at byte 0 (3152 bytes) runs past the end of the "
            "file (10 bytes)"},
           {"short.safetensors",
            ": : a safetensors file starts with an 8-byte header length, but the file has 3 "
            "bytes"},
           {"gap.safetensors",
            ": /w/data_offsets: 1 byte of data belongs to no tensor: from byte 61 of the file, "
            "where the data begin, to byte 62, where tensor 'w' begins; the tensors must cover "
            "the data exactly"}}) {
    write_index(index, R"({"w": ")" + shard + R"("})");
    EXPECT_EQ(error_of(load_index(index)), path(shard) + error + " (a shard of " + index + ")");
  }
}

TEST_F(CheckpointFiles, ADirectoryNamesTheFileToPass) {
  // A checkpoint directory given as --model: the error names the file of it to pass.
  ASSERT_EQ(::mkdir(path("sharded").c_str(), 0755), 0);
  write_index(path("sharded/model.safetensors.index.json"), "{}");
  ASSERT_EQ(::mkdir(path("single").c_str(), 0755), 0);
  write_checkpoint(path("single/model.safetensors"), "{}", 0);
  ASSERT_EQ(::mkdir(path("empty").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(path("empty/model.safetensors").c_str(), 0755), 0);  // no file
  for (const auto& [dir, error] : std::vector<std::pair<std::string, std::string>>{
           {path("sharded"), "is a directory; pass the checkpoint's index: --model " +
                                 path("sharded/model.safetensors.index.json")},
           {path("sharded/"), "is a directory; pass the checkpoint's index: --model " +
                                  path("sharded/model.safetensors.index.json")},
           {path("single"), "is a directory; pass the checkpoint's file: --model " +
                                path("single/model.safetensors")},
           {path("empty"),
            "is a directory; --model takes a file: a model tree dump, a checkpoint's "
            "model.safetensors or a sharded one's model.safetensors.index.json"}}) {
    const std::optional<Expected<ModelTree>> m = read_safetensors(dir);
    ASSERT_TRUE(m.has_value()) << dir;
    ASSERT_FALSE(m->ok()) << dir;
    EXPECT_EQ(m->errors().front().error_class, ErrorClass::kIo);
    EXPECT_EQ(error_of(*m), dir + ": : " + error);
  }
  // With both, the index: the one file that lists every tensor.
  write_checkpoint(path("sharded/model.safetensors"), "{}", 0);
  EXPECT_EQ(error_of(*read_safetensors(path("sharded"))),
            path("sharded") + ": : is a directory; pass the checkpoint's index: --model " +
                path("sharded/model.safetensors.index.json"));
}

TEST_F(CheckpointFiles, DuplicateTensorAcrossShards) {
  write_checkpoint(path("a.safetensors"), one_tensor("F32", "[5]", "[0,20]"), 20);
  write_checkpoint(path("b.safetensors"),
                   R"({"v":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                   R"("w":{"dtype":"F32","shape":[5],"data_offsets":[1,21]}})",
                   21);
  write_index(path("i.json"), R"({"w": "a.safetensors", "v": "b.safetensors"})");
  EXPECT_EQ(error_of(load_index(path("i.json"))),
            path("i.json") +
                ": /weight_map/w: tensor 'w' is in two shards, 'a.safetensors' and "
                "'b.safetensors'");
}

}  // namespace
}  // namespace hpfreeze
