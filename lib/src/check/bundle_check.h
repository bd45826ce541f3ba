#pragma once
// The bundle pass of `hpfreeze check --bundle`: every file a meta's `outputs` records, in
// the bundle (the directory that holds the meta), must still have its recorded sha256, as
// upstream's preflight verify_output_hashes asks (docs/cli.md, "Bundles"). It reads the
// files, through the FileSystem it is given, and nothing else: the meta is decoded already
// (FrozenMeta::bundle).

#include <string>
#include <string_view>

#include "hpfreeze/base/diagnostic.h"
#include "io/io.h"
#include "meta/meta.h"

namespace hpfreeze {

// What the paths of a bundle's files start with: `meta_path` up to and with its last '/'
// ("gen/" for "gen/codegen_meta.json", "" for "codegen_meta.json"), so the files are named
// the way the meta's path was given. Not for "-": a meta on stdin has no bundle.
std::string bundle_prefix(std::string_view meta_path);

// Where the files of one bundle are: named `prefix` + their name (bundle_prefix of the meta's
// path), and opened from `directory` when a walk holds the meta's directory open (so the
// bundle is the one beside the meta the walk found), else by that path.
struct BundleFiles {
  FileSystem& files;
  std::string prefix;
  Directory* directory = nullptr;
};

// What the meta records: files to verify, no bundle (`outputs` absent or empty: what freeze
// writes without --base), or an `outputs` that is no object (the schema rule's error).
enum class BundleRecord { kFiles, kNone, kNotAnObject };

struct BundleFindings {
  Diagnostics findings;
  BundleRecord record = BundleRecord::kNone;
};

// The findings about the bundle of `meta`. Each is located in the meta (`file` is meta.file)
// and sorted as check_meta sorts (check.h's sort_findings). A meta that records no bundle has
// a note saying so, unless `note_no_bundle` is off (a run that counts them instead). A finding
// about one generated file (unreadable, or its sha256 differs) names its path in the message,
// shortened and escaped as names and pointers are (shorten_for_diagnostic,
// json/output_name.h), with the next step (regenerate the bundle, or revert or restore the
// file), and sets `annotate_file` to it (unless no file can have that name: longer than 255
// bytes). Every error is of class kRejected: a bundle that cannot be read does not verify. The
// files are read one at a time, streamed (FileSystem::digest); nothing is kept between calls,
// so metas may be checked on several threads at once.
BundleFindings check_bundle(const FrozenMeta& meta, const BundleFiles& at,
                            bool note_no_bundle = true);

}  // namespace hpfreeze
