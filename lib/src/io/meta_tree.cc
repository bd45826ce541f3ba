#include "io/meta_tree.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "io/file_kind_text.h"

namespace hpfreeze {

namespace {

// The directories a walk holds open at most, the deepest ones; one above them is opened
// again from below ("..") on the way back, and must be the one it was.
constexpr std::size_t kHeldLevels = 32;

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir == "." || dir == "./") return name;
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

MetaSource walk_error(const std::string& path, std::string message) {
  return {path, make_io_error(path, std::move(message)), nullptr, nullptr};
}

MetaSource errno_error(const std::string& path, std::string_view what, int err) {
  return walk_error(path, std::string(what) + ": " + describe_errno(err));
}

}  // namespace

bool is_skipped_directory(std::string_view name) {
  return name == ".git" || name == "venv" || name == ".venv" || name == "__pycache__" ||
         name.starts_with(".codegen_tmp_") || name.starts_with(".codegen_old_");
}

MetaFinder::MetaFinder(FileSystem& fs, std::vector<std::string> paths)
    : fs_(fs), paths_(std::move(paths)) {}

std::optional<MetaSource> MetaFinder::next() {
  for (;;) {
    if (levels_.empty()) {
      if (!root_.empty()) {  // a walk just ended
        const std::string root = std::exchange(root_, {});
        if (!found_any_) {
          return walk_error(root, "no codegen_meta.json in this directory or below");
        }
      }
      if (next_path_ == paths_.size()) return std::nullopt;
      if (std::optional<MetaSource> found = start(paths_[next_path_++])) return found;
      continue;
    }
    Level& level = levels_.back();
    std::optional<MetaSource> found;
    if (level.next == level.entries.size()) {
      found = leave();
    } else {
      const DirectoryEntry entry = std::move(level.entries[level.next++]);
      found = visit(entry);
    }
    if (found) {
      found_any_ = true;
      return found;
    }
  }
}

// A path of the command line: a meta as given, or a directory whose walk begins.
std::optional<MetaSource> MetaFinder::start(const std::string& path) {
  std::shared_ptr<Directory> dir;
  const int err = fs_.open_directory(path, &dir);
  if (err == 0) {
    std::optional<MetaSource> unlisted = enter(path, std::move(dir));
    if (!unlisted) {
      root_ = path;
      found_any_ = false;
    }
    return unlisted;
  }
  // A directory that cannot be opened is the walk's error; anything else is a meta, whose
  // loader names what is wrong with it.
  if (err == ENOTDIR || err == ENOENT || fs_.kind_of(path) != FileKind::kDirectory) {
    return MetaSource{path, std::nullopt, {}, {}};
  }
  return errno_error(path, "cannot open directory", err);
}

// Lists the directory `dir` (at `path`) and makes it the one walked; an error when it cannot
// be listed.
std::optional<MetaSource> MetaFinder::enter(const std::string& path,
                                            std::shared_ptr<Directory> dir) {
  Level level{std::move(dir), {}, path, {}, 0};
  level.identity = level.dir->identity();
  if (const int err = level.dir->list(&level.entries); err != 0) {
    return errno_error(path, "cannot open directory", err);
  }
  std::sort(level.entries.begin(), level.entries.end(),
            [](const DirectoryEntry& a, const DirectoryEntry& b) { return a.name < b.name; });
  levels_.push_back(std::move(level));
  if (levels_.size() > kHeldLevels) levels_[levels_.size() - 1 - kHeldLevels].dir.reset();
  return std::nullopt;
}

// The deepest directory is done: back to its parent, opened again from it when the walk let
// go of it (and so of every one above it).
std::optional<MetaSource> MetaFinder::leave() {
  Level done = std::move(levels_.back());
  levels_.pop_back();
  if (levels_.empty() || levels_.back().dir) return std::nullopt;
  Level& parent = levels_.back();
  const int err = done.dir->open_parent(&parent.dir);
  if (err == 0 && parent.dir->identity() == parent.identity) return std::nullopt;
  // Moved (or gone) while the walk was below it: what is above is no longer where the walk
  // found it, and nothing else leads back there, so the walk of this path ends here.
  const std::string path = parent.path;
  levels_.clear();
  if (err != 0) return errno_error(path, "cannot open directory", err);
  return walk_error(path, "moved while it was walked: the rest of its walk is left out");
}

// One entry of the deepest directory: a directory to walk, a meta (opened now, at its turn),
// an error, or nothing.
std::optional<MetaSource> MetaFinder::visit(const DirectoryEntry& entry) {
  Level& level = levels_.back();
  const std::string path = join_path(level.path, entry.name);
  if (entry.type == S_IFDIR) {
    if (is_skipped_directory(entry.name)) return std::nullopt;
    std::shared_ptr<Directory> dir;
    const int err = level.dir->open_directory(entry.name, &dir);
    // Gone, or no directory any more (a link put in its place is not followed).
    if (err == ENOENT || err == ENOTDIR || err == ELOOP) return std::nullopt;
    if (err != 0) return errno_error(path, "cannot open directory", err);
    return enter(path, std::move(dir));  // `level` is not used after this
  }
  if (entry.name != kMetaFileName) return std::nullopt;
  // A FIFO, a device or a socket is named for what it is, never opened.
  if (entry.type != 0 && entry.type != S_IFREG && entry.type != S_IFLNK) {
    return walk_error(path, not_regular_file_message(static_cast<mode_t>(entry.type)));
  }
  Directory::Opened opened = level.dir->open_file(entry.name);
  if (opened.err != 0) return errno_error(path, "cannot open", opened.err);
  if (opened.file) return MetaSource{path, std::nullopt, std::move(opened.file), level.dir};
  if (opened.type == S_IFDIR) return std::nullopt;  // a link to a directory: not followed
  return walk_error(path, not_regular_file_message(static_cast<mode_t>(opened.type)));
}

}  // namespace hpfreeze
