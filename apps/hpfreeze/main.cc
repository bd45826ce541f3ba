// hpfreeze: freeze a HyperParallel sharding plan into codegen_meta.json.
//
// main() is the process around run_cli() (run_cli.cc), which holds the command line, its
// boundary and every command, and which the in-process tests of tests/unit/cli run too.
#include "run_cli.h"

int main(int argc, char** argv) { return hpfreeze::cli::run_cli(argc, argv); }
