#pragma once
// The walk of `check PATH...` (io/meta_tree.h, MetaFinder on the real disk): the input is a
// recipe for a small tree, built in a temporary directory, walked, and removed. Without
// changes during the walk, what it finds is what an independent reading of the rules finds
// (docs/cli.md, "Several metas"): depth first, entries in byte order, the skipped names, links
// to directories passed over, a link named codegen_meta.json a meta when it leads to a
// regular file, a FIFO or a device named for what it is, a broken link "cannot open". With
// changes between the walk's steps (a meta replaced by a FIFO, a directory moved and a link
// to a directory outside the tree put in its place, a directory removed), it ends, waits on
// nothing, never reads a file outside the tree (whose bytes say so), and names every error
// once, under the path it walked.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/io.h"
#include "io/meta_tree.h"

namespace hpfreeze::fuzz {

// One entry of the tree the recipe makes, by its path below the walked directory.
struct WalkNode {
  enum Kind { kDir, kFile, kLink, kFifo } kind = kDir;
  std::string text;  // kFile: its bytes; kLink: its target (a name in the same directory)
};

// The tree and the changes made during the walk. The recipe is read an operation byte at a
// time (its value modulo 8), most with an argument byte after it: 0 a directory, entered; 1
// back up; 2 a file; 3 a link; 4 a FIFO; 5 a meta in the current directory; 6 a change.
struct WalkRecipe {
  std::map<std::string, WalkNode> nodes;  // "" is the walked directory itself
  struct Change {
    std::size_t after = 0;  // applied after this many results of the walk
    int kind = 0;           // 0: a meta becomes a FIFO, 1: a directory moved, a link put there,
                            // 2: a directory removed
    std::string path;
  };
  std::vector<Change> changes;
};

inline constexpr std::string_view kWalkNames[] = {
    "a", "b", "B", "codegen_meta.json", ".git", "venv", "x.y", "\xc3\xa9", "m"};
inline constexpr std::string_view kWalkTargets[] = {"nowhere", "/dev/null",         "m", "a", ".",
                                                    "..",      "codegen_meta.json", "b"};

inline std::string walk_join(const std::string& dir, std::string_view name) {
  return dir.empty() ? std::string(name) : dir + "/" + std::string(name);
}

inline WalkRecipe read_walk_recipe(std::string_view input) {
  WalkRecipe recipe;
  recipe.nodes[""] = {WalkNode::kDir, {}};
  std::vector<std::string> at{""};
  std::size_t files = 0;
  for (std::size_t i = 0; i < input.size() && recipe.nodes.size() < 64; ++i) {
    const auto op = static_cast<unsigned char>(input[i]);
    const auto arg = i + 1 < input.size() ? static_cast<unsigned char>(input[i + 1]) : 0u;
    // The low four bits of the argument name the entry, the high four a link's target.
    const std::string path = walk_join(at.back(), kWalkNames[(arg & 0x0f) % std::size(kWalkNames)]);
    const bool free = recipe.nodes.count(path) == 0;
    switch (op % 8) {
      case 0:  // a directory, entered
        if (free && at.size() < 12) {
          recipe.nodes[path] = {WalkNode::kDir, {}};
          at.push_back(path);
        }
        ++i;
        break;
      case 1:  // back up
        if (at.size() > 1) at.pop_back();
        break;
      case 2:  // a file of bytes no other has
        if (free) recipe.nodes[path] = {WalkNode::kFile, "f" + std::to_string(++files)};
        ++i;
        break;
      case 3:  // a link to a name beside it, or somewhere
        if (free) {
          recipe.nodes[path] = {WalkNode::kLink,
                                std::string(kWalkTargets[(arg >> 4) % std::size(kWalkTargets)])};
        }
        ++i;
        break;
      case 4:  // a FIFO
        if (free) recipe.nodes[path] = {WalkNode::kFifo, {}};
        ++i;
        break;
      case 5: {  // a meta here
        const std::string meta = walk_join(at.back(), kMetaFileName);
        if (recipe.nodes.count(meta) == 0) {
          recipe.nodes[meta] = {WalkNode::kFile, "f" + std::to_string(++files)};
        }
        break;
      }
      case 6:  // a change during the walk: of `path`, after (byte % 8) results, of kind byte / 8
        if (i + 2 < input.size()) {
          const auto when = static_cast<unsigned char>(input[i + 2]);
          recipe.changes.push_back(
              {static_cast<std::size_t>(when % 8), static_cast<int>((when >> 3) % 3), path});
        }
        i += 2;
        break;
      default:
        break;
    }
  }
  return recipe;
}

// What resolving the entry `path` (a final link followed, in its own directory) leads to:
// its kind, the path of a regular file, or the errno of a failure.
struct WalkResolved {
  int err = 0;
  WalkNode::Kind kind = WalkNode::kFile;
  bool device = false;
  std::string file;
};

inline WalkResolved walk_resolve(const WalkRecipe& recipe, std::string path) {
  for (int hops = 0; hops < 40; ++hops) {
    const auto it = recipe.nodes.find(path);
    if (it == recipe.nodes.end()) return {ENOENT, WalkNode::kFile, false, {}};
    if (it->second.kind != WalkNode::kLink) return {0, it->second.kind, false, path};
    const std::string& target = it->second.text;
    const std::size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash);
    if (target == "/dev/null") return {0, WalkNode::kFifo, true, {}};
    if (target == "." || target == "..") return {0, WalkNode::kDir, false, {}};
    if (target == "nowhere") return {ENOENT, WalkNode::kFile, false, {}};
    path = walk_join(dir, target);
  }
  return {ELOOP, WalkNode::kFile, false, {}};
}

// The walk the rules describe, over the recipe's tree: "PATH = BYTES" for a meta, "PATH:
// MESSAGE" for an error, paths below `root`.
inline void walk_reference(const WalkRecipe& recipe, const std::string& root,
                           const std::string& dir, std::vector<std::string>& out) {
  std::vector<std::string> names;
  for (const auto& [path, node] : recipe.nodes) {
    if (path.empty()) continue;
    const std::size_t slash = path.rfind('/');
    if ((slash == std::string::npos ? std::string() : path.substr(0, slash)) == dir) {
      names.push_back(slash == std::string::npos ? path : path.substr(slash + 1));
    }
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string path = walk_join(dir, name);
    const WalkNode& node = recipe.nodes.at(path);
    const std::string shown = root + "/" + path;
    if (node.kind == WalkNode::kDir) {
      if (!is_skipped_directory(name)) walk_reference(recipe, root, path, out);
      continue;
    }
    if (name != kMetaFileName) continue;
    if (node.kind == WalkNode::kFifo) {
      out.push_back(shown + ": is a FIFO, not a regular file");
      continue;
    }
    const WalkResolved to = walk_resolve(recipe, path);
    if (to.err != 0) {
      out.push_back(shown + ": cannot open: " + describe_errno(to.err));
    } else if (to.device) {
      out.push_back(shown + ": is a character device, not a regular file");
    } else if (to.kind == WalkNode::kFifo) {
      out.push_back(shown + ": is a FIFO, not a regular file");
    } else if (to.kind == WalkNode::kFile) {
      out.push_back(shown + " = " + recipe.nodes.at(to.file).text);
    }  // a directory: passed over
  }
}

// The directory the walks run in, made once per process; each input's tree goes below it.
class WalkPlace {
 public:
  WalkPlace() {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/hpfreeze-fuzz-walk-XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr) return;
    dir_ = dir;
    std::filesystem::create_directories(dir_ + "/outside/a");
    std::ofstream(dir_ + "/outside/a/codegen_meta.json") << "OUTSIDE";
    std::ofstream(dir_ + "/outside/codegen_meta.json") << "OUTSIDE";
  }
  WalkPlace(const WalkPlace&) = delete;
  WalkPlace& operator=(const WalkPlace&) = delete;
  ~WalkPlace() {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  [[nodiscard]] const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

inline std::string check_walk(std::string_view input) {
  static const WalkPlace place;
  if (place.dir().empty()) return {};  // no temporary directory: nothing tested
  const WalkRecipe recipe = read_walk_recipe(input);
  const std::string root = place.dir() + "/t";
  std::error_code ignored;
  std::filesystem::remove_all(root, ignored);
  for (const auto& [path, node] : recipe.nodes) {  // parents sort before their entries
    const std::string at = path.empty() ? root : root + "/" + path;
    bool made = false;
    switch (node.kind) {
      case WalkNode::kDir:
        made = ::mkdir(at.c_str(), 0755) == 0;
        break;
      case WalkNode::kFile:
        made = static_cast<bool>(std::ofstream(at) << node.text);
        break;
      case WalkNode::kLink:
        made = ::symlink(node.text.c_str(), at.c_str()) == 0;
        break;
      case WalkNode::kFifo:
        made = ::mkfifo(at.c_str(), 0600) == 0;
        break;
    }
    if (!made) return "cannot make " + path;
  }
  std::vector<std::string> expected;
  walk_reference(recipe, root, "", expected);
  if (expected.empty())
    expected.push_back(root + ": no codegen_meta.json in this directory or below");

  static RealFileSystem disk;
  MetaFinder finder(disk, {root});
  std::vector<std::string> found;
  std::size_t change = 0;
  for (std::size_t step = 0;; ++step) {
    for (; change < recipe.changes.size() && recipe.changes[change].after <= step; ++change) {
      const WalkRecipe::Change& c = recipe.changes[change];
      const std::string at = root + "/" + c.path;
      if (c.kind == 0 && ::unlink((at + "/" + std::string(kMetaFileName)).c_str()) == 0) {
        ::mkfifo((at + "/" + std::string(kMetaFileName)).c_str(), 0600);
      } else if (c.kind == 1 && ::rename(at.c_str(), (place.dir() + "/moved").c_str()) == 0) {
        // A link that cannot be made leaves the directory moved away: a change all the same.
        [[maybe_unused]] const int linked =
            ::symlink((place.dir() + "/outside").c_str(), at.c_str());
        std::filesystem::remove_all(place.dir() + "/moved", ignored);
      } else if (c.kind == 2) {
        std::filesystem::remove_all(at, ignored);
      }
    }
    std::optional<MetaSource> source = finder.next();
    if (!source) break;
    if (step > 2 * recipe.nodes.size() + 4) return "the walk does not end";
    if (!source->path.starts_with(root + "/") && source->path != root) {
      return "a path outside the walk: " + source->path;
    }
    if (source->error) {
      if (source->error->file != source->path || source->error->message.empty() ||
          source->error->message.find('\n') != std::string::npos) {
        return "an error that is not one line about its path: " + source->path;
      }
      found.push_back(source->path + ": " + source->error->message);
      continue;
    }
    if (!source->file || !source->directory)
      return "a meta of the walk not opened: " + source->path;
    Expected<InputFile> read = source->file->read(source->path, {});
    if (!read) {
      found.push_back(source->path + ": " + read.errors().front().message);
      continue;
    }
    if (read->bytes == "OUTSIDE") return "a meta outside the tree was read as " + source->path;
    found.push_back(source->path + " = " + read->bytes);
  }
  std::filesystem::remove_all(root, ignored);
  if (recipe.changes.empty() && found != expected) {
    std::string why = "the walk differs from the rules: found";
    for (const std::string& line : found) why += " [" + line + "]";
    why += ", expected";
    for (const std::string& line : expected) why += " [" + line + "]";
    return why;
  }
  return {};
}

}  // namespace hpfreeze::fuzz
