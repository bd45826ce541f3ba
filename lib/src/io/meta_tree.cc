#include "io/meta_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <utility>

#include "io/file_kind_text.h"
#include "io/io_posix.h"

namespace hpfreeze {

namespace {

struct DirectoryEntry {
  std::string name;
  unsigned char type = DT_UNKNOWN;  // d_type: DT_DIR, DT_REG, DT_LNK, ...
};

// The entries of the directory at `path` (its final link followed only when
// `follow_link`), without "." and "..", sorted by name; 0 or an errno value.
int list_directory(const std::string& path, bool follow_link,
                   std::vector<DirectoryEntry>* entries) {
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow_link ? 0 : O_NOFOLLOW);
  const int fd = posix::openat_retrying(AT_FDCWD, path.c_str(), flags);
  if (fd < 0) return errno;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    const int err = errno;
    ::close(fd);
    return err;
  }
  int err = 0;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      err = errno;
      break;
    }
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    unsigned char type = entry->d_type;
    if (type == DT_UNKNOWN) {  // file systems that do not fill in d_type
      struct stat st {};
      if (::fstatat(::dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        type = static_cast<unsigned char>(IFTODT(st.st_mode));
      }
    }
    entries->push_back({std::string(name), type});
  }
  ::closedir(dir);
  if (err != 0) return err;
  std::sort(entries->begin(), entries->end(),
            [](const DirectoryEntry& a, const DirectoryEntry& b) { return a.name < b.name; });
  return 0;
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir == "." || dir == "./") return name;
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

// An entry named codegen_meta.json: a meta when it is a regular file or leads to one.
std::optional<MetaSource> meta_entry(const std::string& path, unsigned char type) {
  if (type == DT_REG) return MetaSource{path, std::nullopt};
  struct stat st {};
  if (type == DT_LNK) {
    if (::stat(path.c_str(), &st) != 0) {
      return MetaSource{path, posix::io_error(path, "cannot open", errno)};
    }
    if (S_ISREG(st.st_mode)) return MetaSource{path, std::nullopt};
    if (S_ISDIR(st.st_mode)) return std::nullopt;  // a symlinked directory: not followed
  } else {
    st.st_mode = static_cast<mode_t>(DTTOIF(type));
  }
  return MetaSource{path, make_io_error(path, not_regular_file_message(st.st_mode))};
}

}  // namespace

bool is_skipped_directory(std::string_view name) {
  return name == ".git" || name == "venv" || name == ".venv" || name == "__pycache__" ||
         name.starts_with(".codegen_tmp_") || name.starts_with(".codegen_old_");
}

std::vector<MetaSource> walk_for_metas(const std::string& dir) {
  std::vector<MetaSource> found;
  // The directories being walked, outermost first, each with its entries and the next
  // one to visit: a loop instead of recursion, so a deep tree cannot exhaust the stack.
  struct Level {
    std::string path;
    std::vector<DirectoryEntry> entries;
    std::size_t next = 0;
  };
  std::vector<Level> levels(1);
  levels[0].path = dir;
  if (const int err = list_directory(dir, true, &levels[0].entries); err != 0) {
    found.push_back({dir, posix::io_error(dir, "cannot open directory", err)});
    return found;
  }
  while (!levels.empty()) {
    Level& level = levels.back();
    if (level.next == level.entries.size()) {
      levels.pop_back();
      continue;
    }
    const DirectoryEntry entry = std::move(level.entries[level.next++]);
    std::string path = join_path(level.path, entry.name);
    if (entry.type == DT_DIR) {
      if (is_skipped_directory(entry.name)) continue;
      Level inner{std::move(path), {}, 0};
      const int err = list_directory(inner.path, false, &inner.entries);
      if (err == ENOENT) continue;  // removed since it was listed
      if (err != 0) {
        found.push_back({inner.path, posix::io_error(inner.path, "cannot open directory", err)});
        continue;
      }
      levels.push_back(std::move(inner));  // `level` is not used after this
    } else if (entry.name == kMetaFileName) {
      if (std::optional<MetaSource> meta = meta_entry(path, entry.type)) {
        found.push_back(std::move(*meta));
      }
    }
  }
  return found;
}

std::vector<MetaSource> find_metas(std::span<const std::string> paths) {
  std::vector<MetaSource> metas;
  for (const std::string& path : paths) {
    struct stat st {};
    if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      metas.push_back({path, std::nullopt});
      continue;
    }
    std::vector<MetaSource> found = walk_for_metas(path);
    if (found.empty()) {
      metas.push_back(
          {path, make_io_error(path, "no codegen_meta.json in this directory or below")});
    }
    std::move(found.begin(), found.end(), std::back_inserter(metas));
  }
  return metas;
}

}  // namespace hpfreeze
