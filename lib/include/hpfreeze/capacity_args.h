#pragma once
// The command-line values of capacity planning, parsed in one place: --mesh, --sweep,
// --budget, --optimizer, --zero, --zero-axis, --expert-parallel, and the axis name
// --replica-axis takes.
// Each parser checks the syntax of one value; the rules between values (an axis swept twice,
// an axis in both --mesh and --sweep) are the request's (report_command.h).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/capacity.h"
#include "hpfreeze/diagnostic.h"

namespace hpfreeze {

// Whether `name` is an axis name: [A-Za-z_][A-Za-z0-9_]*.
bool is_axis_name(std::string_view name);

// Parses the value of --mesh: `AXIS=N[,AXIS=N...]`, axis names [A-Za-z_][A-Za-z0-9_]*, each
// at most once, sizes decimal integers >= 1 that fit in 63 bits. The error message (no file,
// no pointer) says what is wrong and quotes the offending item; it is a usage error.
Expected<std::vector<AxisSize>> parse_mesh_arg(std::string_view text);

// Parses the value of --sweep: `AXIS=N1,N2,...`, the axis name [A-Za-z_][A-Za-z0-9_]*,
// sizes decimal integers >= 1 below 2^63, none listed twice. A usage error on failure.
Expected<AxisSweep> parse_sweep_arg(std::string_view text);

// Parses a --budget value: a decimal number (fraction allowed) and an optional unit:
// B, K/KB/k/kB, M/MB, G/GB, T/TB, P/PB, E/EB (powers of 1000) or Ki/KiB ... Ei/EiB (powers
// of 1024). Fractional bytes are rounded down. The message quotes the offending text.
Expected<std::uint64_t> parse_byte_size(std::string_view text);

// "none", "sgd", "momentum", "adam", "adamw" (optimizer_name's spellings); nullopt for
// anything else.
std::optional<Optimizer> parse_optimizer(std::string_view name);

// A --zero value: "0" to "3" (kMaxZeroStage); nullopt for anything else.
std::optional<int> parse_zero_stage(std::string_view text);

// A --zero-axis value: axis names separated by commas, each at most once ("dp,cp"). A
// usage error quoting the offending item on failure.
Expected<std::vector<std::string>> parse_zero_axes(std::string_view text);

// An --expert-parallel value: "folded" or "axis" (expert_layout_name's spellings);
// nullopt for anything else.
std::optional<ExpertLayout> parse_expert_layout(std::string_view name);

}  // namespace hpfreeze
