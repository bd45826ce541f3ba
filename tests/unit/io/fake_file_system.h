#pragma once
// The in-memory FileSystem of the write tests (io_fake_write_test.cc,
// io_fake_outputs_test.cc), of the loader's (inputs/inputs_test.cc) and of every test of the
// commands and of check: it logs every call and fails any step on demand. Its directories,
// like the real disk's descriptors, hold on to the directory they opened (by inode), so a
// test may move, replace or link a directory while a walk is in it.

#include <sys/stat.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/file_digest.h"
#include "io/file_kind_text.h"
#include "io/io.h"
#include "io/io_posix.h"
#include "io_test_support.h"  // fs, slurp

namespace hpfreeze::io_testing {

class FakeFileSystem final : public FileSystem {
 public:
  struct Node {
    FileKind kind = FileKind::kRegular;
    std::string bytes;
    std::string link;  // symlinks only
    bool symlink = false;
    unsigned mode = 0644;
    std::uint32_t uid = 0, gid = 0;
    int write_error = 0;  // what opening it for writing fails with
    std::uint64_t inode = 0;
    int version = 0;         // bumped on every change, so "untouched" is checkable
    bool read_once = false;  // a FIFO: what one reader takes, another never sees
    unsigned special = 0;    // kOther: its S_IFMT type (S_IFIFO, S_IFCHR, S_IFSOCK)
    int read_error = 0;      // what reading it fails with (an I/O error of the disk)
    // A sparse file's size, when it is more than `bytes` (the rest reads as zeros).
    std::optional<std::uint64_t> sparse_size;
    [[nodiscard]] std::uint64_t size() const { return sparse_size.value_or(bytes.size()); }
  };

  // errno to fail each operation with; 0 lets it succeed. fail_commit_of names the
  // target (key) whose rename fails.
  int fail_create = 0;
  int fail_open = 0;
  int fail_write = 0;
  int fail_close = 0;
  int fail_attributes = 0;
  int fail_commit = 0;
  std::string fail_commit_of;
  int fail_backup = 0;
  int fail_stdout = 0;
  unsigned mode_for_new_files = 0640;

  std::map<std::string, Node> nodes;
  std::vector<std::string> log;
  // Descriptors open on a node (by its path), as `1<>plan.json` opens stdout.
  std::map<int, std::string> descriptor_files;

  Node& add(const std::string& p, Node node) {
    node.inode = ++inode_counter_;
    return nodes[key(p)] = std::move(node);
  }
  static Node make(FileKind kind, std::string bytes, unsigned mode) {
    Node node;
    node.kind = kind;
    node.bytes = std::move(bytes);
    node.mode = mode;
    return node;
  }
  Node& add_file(const std::string& p, std::string bytes) {
    return add(p, make(FileKind::kRegular, std::move(bytes), 0644));
  }
  void add_dir(const std::string& p) { add(p, make(FileKind::kDirectory, "", 0755)); }
  void add_symlink(const std::string& p, std::string target) {
    Node& node = add(p, make(FileKind::kOther, "", 0777));
    node.symlink = true;
    node.link = std::move(target);
  }
  void add_device(const std::string& p) {
    add(p, make(FileKind::kOther, "", 0666)).special = S_IFCHR;
  }
  void add_fifo(const std::string& p) {
    Node node = make(FileKind::kOther, "", 0644);
    node.read_once = true;
    node.special = S_IFIFO;
    add(p, std::move(node));
  }
  void add_socket(const std::string& p) {
    Node node = make(FileKind::kOther, "", 0755);
    node.read_once = true;
    node.special = S_IFSOCK;
    add(p, std::move(node));
  }
  // A copy of the real file `real_path` at `p` (an input kept in testdata/), its directories
  // made on the way.
  Node& add_copy(const std::string& p, const std::string& real_path) {
    add_tree({{p, slurp(real_path)}});
    return nodes.at(key(p));
  }
  // Every entry of directory `from` (and below) moves to `to`, keeping its inode: what a
  // rename does, which a Directory holding it follows.
  void rename_tree(const std::string& from, const std::string& to) {
    const std::string f = key(from);
    std::vector<std::pair<std::string, Node>> moved;
    for (auto it = nodes.begin(); it != nodes.end();) {
      if (it->first == f || it->first.starts_with(f + "/")) {
        moved.emplace_back(key(to) + it->first.substr(f.size()), std::move(it->second));
        it = nodes.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& [k, node] : moved) nodes[k] = std::move(node);
  }
  // Builds the tree `files` describes: each path with its text, directories made on the way.
  void add_tree(const std::vector<std::pair<std::string, std::string>>& files) {
    for (const auto& [p, text] : files) {
      std::string dir = key(p);
      std::vector<std::string> parents;
      for (std::size_t slash = dir.rfind('/'); slash != std::string::npos && slash > 0;
           slash = dir.rfind('/', slash - 1)) {
        parents.push_back(dir.substr(0, slash));
      }
      for (auto it = parents.rbegin(); it != parents.rend(); ++it) {
        if (!nodes.count(*it)) add_dir(*it);
      }
      add_file(p, text);
    }
  }

  // Paths are compared after lexical normalization ("a/../b/x" is "b/x"), enough here.
  static std::string key(const std::string& p) {
    std::string k = fs::path(p).lexically_normal().string();
    while (k.size() > 1 && k.back() == '/') k.pop_back();  // "/dev/" is "/dev"
    return k.empty() ? "." : k;
  }

  std::vector<std::string> extra_files() const {
    std::vector<std::string> out;
    for (const auto& [p, node] : nodes) {
      if (p.find(".tmp.") != std::string::npos || p.find(".old.") != std::string::npos) {
        out.push_back(p);
      }
    }
    return out;
  }

  // --- the read side (the loader) ---------------------------------------------------
  // What "-" reads; nullopt: stdin is closed.
  std::optional<std::string> stdin_text;
  int fail_read = 0;  // every read of an input fails with this errno
  // Why nothing can be hashed (digest_unavailable), as when libcrypto cannot be loaded.
  std::optional<std::string> no_digests;
  // The descriptors of this "process", by the path that names them (/dev/stdin is 0).
  std::map<std::string, int> descriptor_paths{
      {"/dev/stdin", 0}, {"/dev/stdout", 1}, {"/dev/fd/0", 0}, {"/proc/self/fd/0", 0}};

  // The loader reads an input on a second thread beside another (check's META).
  Expected<InputFile> read_input(const std::string& path, std::string buffer) override {
    const std::lock_guard<std::mutex> lock(read_mutex_);
    log.push_back("load " + path);
    InputFile input{path, path == "-" ? "<stdin>" : path, std::move(buffer)};
    const std::string& name = input.display_name;
    const std::string* text = path == "-" && stdin_text ? &*stdin_text : nullptr;
    if (path == "-" && !stdin_text)
      return make_io_error(name, "cannot read: standard input is closed");
    if (path != "-") {
      const Node* node = follow(path);
      if (node == nullptr) return make_io_error(name, "cannot open: " + describe_errno(ENOENT));
      if (node->kind == FileKind::kDirectory) return make_io_error(name, "is a directory");
      if (node->read_error != 0) {
        return make_io_error(name, "read failed: " + describe_errno(node->read_error));
      }
      text = &node->bytes;
    }
    if (fail_read != 0) return make_io_error(name, "read failed: " + describe_errno(fail_read));
    input.bytes.clear();
    input.bytes.reserve(text->size() + kInputPadding);
    input.bytes.assign(*text);
    return input;
  }
  std::size_t regular_file_size(const std::string& path) override {
    const Node* node = path == "-" ? nullptr : follow(path);
    return node != nullptr && node->kind == FileKind::kRegular ? node->size() : 0;
  }
  FileKind kind_of(const std::string& path) override {
    if (path == "-") return FileKind::kOther;
    const Node* node = follow(path);
    return node == nullptr ? FileKind::kMissing : node->kind;
  }
  Expected<std::unique_ptr<RegularFile>> open_regular(const std::string& path) override {
    const std::lock_guard<std::mutex> lock(read_mutex_);
    log.push_back("open regular " + path);
    const Node* node = follow(path);
    if (node == nullptr) return make_io_error(path, "cannot open: " + describe_errno(ENOENT));
    if (node->kind != FileKind::kRegular) return make_io_error(path, "is not a regular file");
    return std::unique_ptr<RegularFile>(
        std::make_unique<FakeRegularFile>(node->bytes, node->size(), fail_read));
  }

  int open_directory(const std::string& path, std::shared_ptr<Directory>* out) override {
    const std::lock_guard<std::mutex> lock(read_mutex_);
    log.push_back("open directory " + path);
    if (path == "-" || path.empty()) return ENOTDIR;
    if (key(path) == ".") {
      *out = std::make_shared<FakeDirectory>(*this, 0);
      return 0;
    }
    const Node* node = follow(path);
    if (node == nullptr) return ENOENT;
    if (node->kind != FileKind::kDirectory) return ENOTDIR;
    *out = std::make_shared<FakeDirectory>(*this, node->inode);
    return 0;
  }
  Expected<FileDigest> digest(const std::string& path, std::size_t chunk_size) override {
    const std::lock_guard<std::mutex> lock(read_mutex_);
    return digest_node(path, path, chunk_size);
  }
  std::optional<std::string> digest_unavailable() override { return no_digests; }
  int descriptor_named(const std::string& path) override {
    std::string p = path;
    for (int hops = 0; hops < 40; ++hops) {
      if (auto it = descriptor_paths.find(p); it != descriptor_paths.end()) return it->second;
      auto node = nodes.find(key(p));
      if (node == nodes.end() || !node->second.symlink) return -1;
      p = node->second.link;
    }
    return -1;
  }

  int resolve_output(const std::string& path, OutputTarget* out) override {
    log.push_back("resolve " + path);
    *out = OutputTarget{};
    std::string p = path;
    for (int hops = 0; hops < 40; ++hops) {
      const std::size_t slash = p.rfind('/');
      const std::string dir = slash == std::string::npos ? "." : p.substr(0, slash);
      const std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
      if (dir != "." && (!nodes.count(key(dir)) || nodes[key(dir)].kind != FileKind::kDirectory)) {
        return ENOENT;
      }
      out->dir = next_handle_++;
      dirs_[out->dir] = key(dir);
      out->name = base;
      out->dir_identity = {1, dir == "." ? 0 : nodes[key(dir)].inode};
      auto it = nodes.find(key(dir + "/" + base));
      if (it == nodes.end()) {
        out->kind = FileKind::kMissing;
        return 0;
      }
      const Node& node = it->second;
      if (node.symlink) {
        release(*out);
        p = node.link.front() == '/' ? node.link : dir + "/" + node.link;
        continue;
      }
      out->kind = node.kind;
      out->identity = {1, node.inode};
      out->size = node.bytes.size();
      out->mode = node.mode;
      out->uid = node.uid;
      out->gid = node.gid;
      out->write_error = node.write_error;
      out->shareable = node.kind == FileKind::kOther;  // the fake's devices are terminals
      if (node.kind == FileKind::kOther) out->route = OutputTarget::Route::kInPlace;
      return 0;
    }
    return ELOOP;
  }
  void release(OutputTarget& target) override {
    if (target.dir >= 0) {
      log.push_back("release " + dirs_.at(target.dir));
      dirs_.erase(target.dir);
    }
    target.dir = -1;
  }
  int resolve_descriptor(int fd, OutputTarget* out) override {
    *out = OutputTarget{};
    out->route = OutputTarget::Route::kDescriptor;
    out->descriptor = fd;
    out->kind = FileKind::kOther;
    out->shareable = true;  // a terminal, unless open on a node
    if (auto it = descriptor_files.find(fd); it != descriptor_files.end()) {
      const Node& node = nodes.at(key(it->second));
      out->kind = node.kind;
      out->identity = {1, node.inode};
      out->shareable = node.kind == FileKind::kOther;
    }
    return 0;
  }
  int identify_input(const std::string& path, FileIdentity* id, bool* shareable,
                     bool* read_once) override {
    auto it = nodes.find(key(path));
    if (it == nodes.end()) return ENOENT;
    *id = {1, it->second.inode};
    *shareable = it->second.kind == FileKind::kOther && !it->second.read_once;
    *read_once = it->second.read_once;
    return 0;
  }
  int read_target(const OutputTarget& target, std::string* bytes) override {
    log.push_back("read " + entry(target, target.name));
    *bytes = nodes.at(entry(target, target.name)).bytes;
    return 0;
  }
  int create_temp(const OutputTarget& target, TempFile* temp) override {
    log.push_back("create beside " + entry(target, target.name));
    if (fail_create != 0) return fail_create;
    temp->name = "." + target.name + ".tmp." + std::to_string(++temp_counter_);
    add(entry(target, temp->name), make(FileKind::kRegular, "", 0600));
    temp->handle = next_handle_++;
    handles_[temp->handle] = entry(target, temp->name);
    log.push_back("created " + entry(target, temp->name));
    return 0;
  }
  int write_all(int handle, std::string_view bytes) override {
    if (handle == 1) {
      log.push_back("write " + std::to_string(bytes.size()) + " to stdout");
      if (fail_stdout == 0) stdout_bytes.append(bytes);
      return fail_stdout;
    }
    log.push_back("write " + std::to_string(bytes.size()) + " to " + handles_.at(handle));
    Node& node = nodes.at(handles_.at(handle));
    ++node.version;
    if (fail_write != 0) {
      node.bytes.append(bytes.substr(0, bytes.size() / 2));  // a partial write, then failure
      return fail_write;
    }
    node.bytes.append(bytes);
    return 0;
  }
  int set_attributes(int handle, unsigned mode, bool chown, std::uint32_t uid,
                     std::uint32_t gid) override {
    log.push_back("attributes " + std::to_string(mode) +
                  (chown ? " owner " + std::to_string(uid) + ":" + std::to_string(gid) : ""));
    if (fail_attributes != 0) return fail_attributes;
    Node& node = nodes.at(handles_.at(handle));
    node.mode = mode;
    if (chown) node.uid = uid, node.gid = gid;
    return 0;
  }
  int close_file(int handle) override {
    log.push_back("close");
    handles_.erase(handle);
    return fail_close;
  }
  int commit_temp(TempFile& temp, const OutputTarget& target) override {
    const std::string to = entry(target, target.name);
    log.push_back("rename " + entry(target, temp.name) + " -> " + to);
    if (fail_commit != 0 && (fail_commit_of.empty() || fail_commit_of == to)) return fail_commit;
    move(entry(target, temp.name), to);
    temp.name.clear();
    return 0;
  }
  int discard_temp(TempFile& temp, const OutputTarget& target) override {
    if (temp.name.empty()) return 0;
    log.push_back("remove " + entry(target, temp.name));
    return nodes.erase(entry(target, temp.name)) ? 0 : ENOENT;
  }
  int keep_backup(const OutputTarget& target, std::string* backup) override {
    log.push_back("backup " + entry(target, target.name));
    if (fail_backup != 0) return fail_backup;
    backup->clear();
    if (target.kind == FileKind::kMissing) return 0;
    *backup = "." + target.name + ".old." + std::to_string(++temp_counter_);
    nodes[entry(target, *backup)] = nodes.at(entry(target, target.name));
    return 0;
  }
  int restore_backup(const OutputTarget& target, const std::string& backup) override {
    log.push_back("restore " + entry(target, target.name));
    if (backup.empty()) return nodes.erase(entry(target, target.name)) ? 0 : ENOENT;
    move(entry(target, backup), entry(target, target.name));
    return 0;
  }
  int drop_backup(const OutputTarget& target, const std::string& backup) override {
    if (backup.empty()) return 0;
    log.push_back("drop " + entry(target, backup));
    return nodes.erase(entry(target, backup)) ? 0 : ENOENT;
  }
  int open_in_place(const OutputTarget& target, int* handle) override {
    log.push_back("open " + entry(target, target.name));
    if (fail_open != 0) return fail_open;
    *handle = next_handle_++;
    handles_[*handle] = entry(target, target.name);
    return 0;
  }
  [[nodiscard]] unsigned new_file_mode() const override { return mode_for_new_files; }
  [[nodiscard]] bool keeps_owner(const OutputTarget& target) const override {
    return target.uid != 0 || target.gid != 0;
  }

  // "stdout" as the fake sees it: writes to descriptor 1 land here.
  std::string stdout_bytes;

 private:
  class FakeOpenedFile final : public OpenedFile {
   public:
    FakeOpenedFile(FakeFileSystem& fs, const Node& node)
        : fs_(fs), bytes_(node.bytes), inode_(node.inode), read_error_(node.read_error) {}
    [[nodiscard]] std::uint64_t size() const override { return bytes_.size(); }
    [[nodiscard]] FileIdentity identity() const override { return {1, inode_}; }
    Expected<InputFile> read(const std::string& display_name, std::string buffer) override {
      {
        const std::lock_guard<std::mutex> lock(fs_.read_mutex_);
        fs_.log.push_back("read opened " + display_name);
      }
      if (read_error_ != 0) {
        return make_io_error(display_name, "read failed: " + describe_errno(read_error_));
      }
      InputFile input{display_name, display_name, std::move(buffer)};
      input.bytes.clear();
      input.bytes.reserve(bytes_.size() + kInputPadding);
      input.bytes.assign(bytes_);
      return input;
    }

   private:
    FakeFileSystem& fs_;
    std::string bytes_;  // as it was when opened
    std::uint64_t inode_;
    int read_error_;
  };

  // A directory held by its inode (0: "."), wherever it is renamed to.
  class FakeDirectory final : public Directory {
   public:
    FakeDirectory(FakeFileSystem& fs, std::uint64_t inode) : fs_(fs), inode_(inode) {}
    [[nodiscard]] FileIdentity identity() const override { return {1, inode_}; }
    int list(std::vector<DirectoryEntry>* entries) override {
      const std::lock_guard<std::mutex> lock(fs_.read_mutex_);
      const std::optional<std::string> dir = where();
      if (!dir) return ENOENT;
      fs_.log.push_back("list " + *dir);
      for (const auto& [k, node] : fs_.nodes) {
        const std::size_t slash = k.rfind('/');
        const std::string parent = slash == std::string::npos ? "." : k.substr(0, slash);
        if (parent != *dir || k == ".") continue;
        entries->push_back({slash == std::string::npos ? k : k.substr(slash + 1), type_of(node)});
      }
      return 0;
    }
    int open_directory(const std::string& name, std::shared_ptr<Directory>* out) override {
      const std::lock_guard<std::mutex> lock(fs_.read_mutex_);
      const std::optional<std::string> dir = where();
      if (!dir) return ENOENT;
      auto it = fs_.nodes.find(join(*dir, name));
      if (it == fs_.nodes.end()) return ENOENT;
      if (it->second.symlink) return ELOOP;
      if (it->second.kind != FileKind::kDirectory) return ENOTDIR;
      *out = std::make_shared<FakeDirectory>(fs_, it->second.inode);
      return 0;
    }
    int open_parent(std::shared_ptr<Directory>* out) override {
      const std::lock_guard<std::mutex> lock(fs_.read_mutex_);
      const std::optional<std::string> dir = where();
      if (!dir || *dir == ".") return ENOENT;
      const std::size_t slash = dir->rfind('/');
      const std::string parent = slash == std::string::npos ? "." : dir->substr(0, slash);
      const auto it = fs_.nodes.find(parent);
      *out = std::make_shared<FakeDirectory>(fs_, it == fs_.nodes.end() ? 0 : it->second.inode);
      return 0;
    }
    Opened open_file(const std::string& name) override {
      const std::lock_guard<std::mutex> lock(fs_.read_mutex_);
      Opened opened;
      const std::optional<std::string> dir = where();
      const Node* node = dir ? fs_.follow(join(*dir, name)) : nullptr;
      fs_.log.push_back("open " + (dir ? join(*dir, name) : name));
      if (node == nullptr) {
        opened.err = ENOENT;
      } else if (node->kind == FileKind::kRegular) {
        opened.type = S_IFREG;
        opened.file = std::make_unique<FakeOpenedFile>(fs_, *node);
      } else {
        opened.type = type_of(*node);
      }
      return opened;
    }
    Expected<FileDigest> digest(const std::string& name, const std::string& path,
                                std::size_t chunk_size) override {
      const std::lock_guard<std::mutex> lock(fs_.read_mutex_);
      const std::optional<std::string> dir = where();
      if (!dir) return make_io_error(path, "cannot open: " + describe_errno(ENOENT));
      return fs_.digest_node(join(*dir, name), path, chunk_size);
    }

   private:
    // Where the directory is now; none once it is gone.
    std::optional<std::string> where() const {
      if (inode_ == 0) return std::string(".");
      for (const auto& [k, node] : fs_.nodes) {
        if (node.inode == inode_ && node.kind == FileKind::kDirectory && !node.symlink) return k;
      }
      return std::nullopt;
    }
    static std::string join(const std::string& dir, const std::string& name) {
      return key(dir == "." ? name : dir + "/" + name);
    }
    FakeFileSystem& fs_;
    std::uint64_t inode_;
  };

  static unsigned type_of(const Node& node) {
    if (node.symlink) return S_IFLNK;
    if (node.kind == FileKind::kDirectory) return S_IFDIR;
    if (node.kind == FileKind::kRegular) return S_IFREG;
    return node.special;
  }

  // What digesting the file `p` leads to gives; errors name `path`, as the real disk's do.
  Expected<FileDigest> digest_node(const std::string& p, const std::string& path,
                                   std::size_t chunk_size) {
    log.push_back("digest " + p);
    const Node* node = follow(p);
    if (node == nullptr) return make_io_error(path, "cannot open: " + describe_errno(ENOENT));
    if (node->kind != FileKind::kRegular) {
      if (node->kind == FileKind::kDirectory) return make_io_error(path, "is a directory");
      return make_io_error(path, not_regular_file_message(static_cast<mode_t>(type_of(*node))));
    }
    if (node->read_error != 0) {
      return make_io_error(path, "read failed: " + describe_errno(node->read_error));
    }
    Expected<DigestBuilder> digest = DigestBuilder::start(path);
    if (!digest) return std::move(digest.errors());
    const std::string_view bytes = node->bytes;
    chunk_size = std::max<std::size_t>(chunk_size, 1);
    for (std::size_t at = 0; at < bytes.size(); at += chunk_size) {
      if (Expected<bool> fed = digest->feed(bytes.substr(at, chunk_size)); !fed) {
        return std::move(fed.errors());
      }
    }
    return digest->finish();
  }
  class FakeRegularFile final : public RegularFile {
   public:
    FakeRegularFile(std::string bytes, std::uint64_t size, int fail)
        : bytes_(std::move(bytes)), size_(size), fail_(fail) {}
    [[nodiscard]] std::uint64_t size() const override { return size_; }
    int read_at(std::uint64_t offset, std::uint64_t n, std::string& out,
                std::size_t spare) override {
      if (fail_ != 0) return fail_;
      if (offset + n > size_) return EIO;
      out.clear();
      out.reserve(static_cast<std::size_t>(n) + spare);
      out.resize(static_cast<std::size_t>(n), '\0');  // beyond `bytes_`, a sparse file's zeros
      if (offset < bytes_.size()) {
        bytes_.copy(out.data(), static_cast<std::size_t>(n), static_cast<std::size_t>(offset));
      }
      return 0;
    }

   private:
    std::string bytes_;
    std::uint64_t size_;
    int fail_;
  };

  // The node `p` leads to, links followed; nullptr for nothing there.
  const Node* follow(std::string p) const {
    for (int hops = 0; hops < 40; ++hops) {
      auto it = nodes.find(key(p));
      if (it == nodes.end()) return nullptr;
      if (!it->second.symlink) return &it->second;
      const std::size_t slash = p.rfind('/');
      const std::string& link = it->second.link;
      p = link.front() == '/' || slash == std::string::npos ? link
                                                            : p.substr(0, slash) + "/" + link;
    }
    return nullptr;
  }

  std::string entry(const OutputTarget& target, const std::string& name) const {
    const std::string& dir = dirs_.at(target.dir);
    return key(dir == "." ? name : dir + "/" + name);
  }
  void move(const std::string& from, const std::string& to) {
    Node moved = nodes.at(from);
    moved.version = nodes.count(to) ? nodes[to].version + 1 : moved.version;
    nodes.erase(from);
    nodes[to] = std::move(moved);
  }

  std::mutex read_mutex_;
  int temp_counter_ = 0;
  int next_handle_ = 100;
  std::uint64_t inode_counter_ = 0;
  std::map<int, std::string> handles_;
  std::map<int, std::string> dirs_;
};

inline std::vector<std::string> with_prefix(const std::vector<std::string>& log,
                                            std::string_view p) {
  std::vector<std::string> out;
  for (const std::string& e : log) {
    if (e.starts_with(p)) out.push_back(e);
  }
  return out;
}

}  // namespace hpfreeze::io_testing
