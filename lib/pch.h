#pragma once
// The headers every library module's compile parses first, precompiled once per build tree
// when HPFREEZE_PRECOMPILE_HEADERS is on (CMakeLists.txt): simdjson and the standard library
// only. hpfreeze's own headers change too often to be worth it. Each module still includes
// what it uses; the plain build (option off) is what checks that.

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>
