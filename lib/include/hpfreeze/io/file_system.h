#pragma once
// The file system a request reads and writes through (`files` of every request): the real
// disk when none is given, an in-memory one in the library's tests. Declared only: what it
// does is the library's own (lib/src/io/io.h, FileSystem).

namespace hpfreeze {

class FileSystem;

}  // namespace hpfreeze
