#pragma once
// The headers every unit test's compile parses first, precompiled once per build tree when
// HPFREEZE_PRECOMPILE_HEADERS is on (CMakeLists.txt): GoogleTest, GoogleMock, simdjson and
// the standard library. Each test still includes what it uses; the plain build (option off)
// is what checks that.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
