// The translation unit that builds the unit tests' precompiled header (unit/pch.h) when
// HPFREEZE_PRECOMPILE_HEADERS is on; it holds no code.
