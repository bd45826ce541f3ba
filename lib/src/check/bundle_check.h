#pragma once
// The bundle pass of `hpfreeze check --bundle`: every file a meta's `outputs` records, in
// the bundle (the directory that holds the meta), must still have its recorded sha256, as
// upstream's preflight verify_output_hashes asks (docs/cli.md, "Bundles"). It reads the
// files and nothing else: the meta is decoded already (FrozenMeta::bundle).

#include <string>
#include <string_view>

#include "hpfreeze/base/diagnostic.h"
#include "meta/meta.h"

namespace hpfreeze {

// What the paths of a bundle's files start with: `meta_path` up to and with its last '/'
// ("gen/" for "gen/codegen_meta.json", "" for "codegen_meta.json"), so the files are named
// the way the meta's path was given. Not for "-": a meta on stdin has no bundle.
std::string bundle_prefix(std::string_view meta_path);

// The findings about the bundle of `meta`, whose files are `prefix` + their name
// (bundle_prefix of the meta's path). Each is located in the meta (`file` is meta.file)
// and sorted as check_meta sorts (check.h's sort_findings). A finding about one generated file
// (unreadable, or its sha256 differs) names its path in the message, escaped as names on output are
// (json/output_name.h), and sets `annotate_file` to it. Every error is of class kRejected: a bundle
// that cannot be read does not verify. The files are read one at a time, streamed
// (io/file_digest.h); nothing is kept between calls, so metas may be checked on several threads at
// once.
Diagnostics check_bundle(const FrozenMeta& meta, std::string_view prefix);

}  // namespace hpfreeze
