// The CLI's command line: which subcommand, with its options checked as far as the request
// alone decides (a scan's --init waits for the input's dtype). One function, so that the
// tool and the option-parsing fuzz target (tests/fuzz/options_fuzz.cpp) run the same code.
#pragma once

#include <iosfwd>
#include <variant>

#include "bench_command.hpp"
#include "compact_command.hpp"
#include "scan_command.hpp"
#include "stress_command.hpp"

namespace gpuscan::cli {

// compact: select, partition or unique; compaction_bench: bench --operation.
enum class Subcommand { devices, scan, compact, bench, compaction_bench, stress };

struct Command {
  Subcommand subcommand = Subcommand::devices;
  ScanOptions scan;                         // for scan
  CompactOptions compact;                   // for select, partition, unique
  BenchOptions bench;                       // for bench
  CompactionBenchOptions compaction_bench;  // for bench --operation
  StressOptions stress;                     // for stress
};

// The command that argv asks for, or the exit status when parsing alone answers it: 0 after
// --help or --version (written to `out`), 2 for a bad request (one "gpuscan: error:" line
// written to `err`). Throws nothing else but std::bad_alloc.
std::variant<Command, int> parse_command_line(int argc, const char* const* argv, std::ostream& out,
                                              std::ostream& err);

}  // namespace gpuscan::cli
