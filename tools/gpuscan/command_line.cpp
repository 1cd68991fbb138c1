#include "command_line.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <ostream>
#include <sstream>

#include "gpuscan/error.hpp"
#include "option_values.hpp"

namespace gpuscan::cli {
namespace {

using testing::Implementation;
using testing::TileState;

// Parses an option's value with one of the library's parse_* functions; an unknown
// value is a usage error that lists the accepted ones.
template <class E, class Parse>
E parse_choice(const std::string& option, const std::string& text, Parse parse,
               const char* accepted) {
  const auto value = parse(text);
  if (!value)
    throw UsageError(option + ": unknown value '" + text + "' (accepted: " + accepted + ")");
  return *value;
}

std::vector<Implementation> parse_implementations(const std::string& list) {
  std::vector<Implementation> implementations;
  std::stringstream stream(list);
  for (std::string item; std::getline(stream, item, ',');) {
    const auto implementation = testing::parse_implementation(item);
    if (!implementation) {
      throw UsageError("--algorithms: unknown '" + item +
                       "' (known: csdldf, csdl, rts, memcpy, cub)");
    }
    implementations.push_back(*implementation);
  }
  if (implementations.empty()) throw UsageError("--algorithms needs at least one name");
  return implementations;
}

// For counts that must be at least 1: CLI11's PositiveNumber would answer 0 with "Value 0
// not in range 0.000000 to 1.79769e+308", and let a negative one wrap in an unsigned option.
const CLI::Validator at_least_one(
    [](std::string& text) -> std::string {
      const bool digits =
          !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || text.find_first_not_of('0') == std::string::npos) {
        return "must be a whole number of at least 1, not '" + text + "'";
      }
      return {};
    },
    "INT >= 1");

// A message as one line: CLI11 puts line breaks into some of its own.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

std::variant<Command, int> parse_command_line(int argc, const char* const* argv, std::ostream& out,
                                              std::ostream& err) {
  Command command;
  CLI::App app{"gpuscan: prefix scan and reduction on GPUs (Decoupled Fallback)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gpuscan 0.1.0");

  CLI::App* devices = app.add_subcommand("devices", "List the usable devices, best first");

  ScanOptions& scan = command.scan;
  CLI::App* scan_cmd = app.add_subcommand(
      "scan",
      "Scan or reduce a .npy array (1-D, or 2-D flattened or by rows) into another .npy file");
  std::string scan_kind = "inclusive", scan_op = "add", scan_init;
  std::string scan_algorithm = "csdldf", scan_backend = "any";
  scan_cmd
      ->add_option("IN", scan.input,
                   "Input .npy file: 1-D or 2-D (C order), little-endian u4, i4, f4, u8, i8 or f8")
      ->required();
  scan_cmd
      ->add_option("OUT", scan.output,
                   "Output .npy file, same dtype (one element for --kind reduce)")
      ->required();
  scan_cmd->add_option("--kind", scan_kind, "inclusive, exclusive or reduce")
      ->capture_default_str();
  scan_cmd->add_option("--op", scan_op, "add, mul, min, max, and, or or xor")
      ->capture_default_str();
  CLI::Option* init_option = scan_cmd->add_option(
      "--init", scan_init,
      "Initial value in the input's dtype: decimal, 0x hex, inf, nan (default: the op's identity)");
  scan_cmd->add_option("--algorithm", scan_algorithm, "csdldf, csdl or rts")->capture_default_str();
  scan_cmd->add_option("--backend", scan_backend, "any, vulkan or cuda")->capture_default_str();
  scan_cmd->add_option("--device", scan.device, "Pick the device whose name contains this text");
  scan_cmd->add_option("--axis", scan.axis,
                       "Scan each row of a 2-D array (-1, the last axis); without it a 2-D "
                       "array is scanned flattened");
  scan_cmd->add_option("--segments", scan.segments,
                       "Scan each segment of a 1-D array on its own: an int64 .npy of CSR "
                       "offsets (S + 1 values from 0 to n, not decreasing)");

  // The compaction family (DESIGN 3e, section 4): select, partition, unique and rle. A 2-D
  // input is read flattened, as numpy's x[mask] reads it.
  const std::string compact_input =
      "Input .npy file (1-D, or 2-D read flattened; any gpuscan dtype)";
  CompactOptions select;
  CLI::App* select_cmd = app.add_subcommand(
      "select", "Keep the elements that satisfy a predicate or whose flag is nonzero, in order");
  select_cmd->add_option("IN", select.input, compact_input)->required();
  select_cmd->add_option("OUT", select.output, "Output .npy file: the kept elements")->required();
  std::array<std::string, 6> predicate_values;
  std::array<CLI::Option*, 6> predicate_options{};
  for (std::size_t p = 0; p < predicate_values.size(); ++p) {
    const std::string name(to_string(static_cast<Predicate>(p)));
    predicate_options[p] = select_cmd->add_option(
        "--" + name, predicate_values[p], "Keep x where x " + name + " V (V in the input's dtype)");
  }
  select_cmd->add_option("--flags", select.flags,
                         "Keep x[i] where F[i] != 0 (a .npy of u4, i4, u8 or i8, as long as IN)");
  CompactOptions partition;
  partition.compaction = Compaction::partition;
  CLI::App* partition_cmd = app.add_subcommand(
      "partition",
      "Write the elements that satisfy a predicate or whose flag is nonzero, then the others, "
      "each in order; print \"selected: K\"");
  partition_cmd->add_option("IN", partition.input, compact_input)->required();
  partition_cmd->add_option("OUT", partition.output, "Output .npy file, as long as IN")->required();
  std::array<std::string, 6> partition_values;
  std::array<CLI::Option*, 6> partition_options{};
  for (std::size_t p = 0; p < partition_values.size(); ++p) {
    const std::string name(to_string(static_cast<Predicate>(p)));
    partition_options[p] = partition_cmd->add_option("--" + name, partition_values[p],
                                                     "Selected: x where x " + name + " V");
  }
  partition_cmd->add_option(
      "--flags", partition.flags,
      "Selected: x[i] where F[i] != 0 (a .npy of u4, i4, u8 or i8, as long as IN)");
  CompactOptions unique_options;
  unique_options.compaction = Compaction::unique;
  CLI::App* unique_cmd = app.add_subcommand(
      "unique", "Keep the first element of each run of equal elements, in order");
  unique_cmd->add_option("IN", unique_options.input, compact_input)->required();
  unique_cmd->add_option("OUT", unique_options.output, "Output .npy file")->required();
  CompactOptions rle;
  rle.compaction = Compaction::run_length_encode;
  CLI::App* rle_cmd = app.add_subcommand(
      "rle", "Run-length encode: the first element of each run of equal elements, and its length");
  rle_cmd->add_option("IN", rle.input, compact_input)->required();
  rle_cmd->add_option("VALUES", rle.output, "Output .npy file: each run's value (IN's dtype)")
      ->required();
  rle_cmd->add_option("LENGTHS", rle.lengths_output, "Output .npy file: each run's length (u8)")
      ->required();
  std::string compact_algorithm = "csdldf", compact_backend = "any";
  for (CLI::App* cmd : {select_cmd, partition_cmd, unique_cmd, rle_cmd}) {
    cmd->add_option("--algorithm", compact_algorithm, "csdldf or csdl")->capture_default_str();
    cmd->add_option("--backend", compact_backend, "any or vulkan")->capture_default_str();
  }
  select_cmd->add_option("--device", select.device,
                         "Pick the device whose name contains this text");
  partition_cmd->add_option("--device", partition.device,
                            "Pick the device whose name contains this text");
  unique_cmd->add_option("--device", unique_options.device,
                         "Pick the device whose name contains this text");
  rle_cmd->add_option("--device", rle.device, "Pick the device whose name contains this text");

  BenchOptions& bench = command.bench;
  std::string algorithms;
  CLI::App* bench_cmd =
      app.add_subcommand("bench", "Time every algorithm against memcpy over a size sweep");
  std::string backend = "any", dtype = "u32", op = "add", kind = "inclusive";
  bench_cmd->add_option("--backend", backend, "any, vulkan or cuda")->capture_default_str();
  bench_cmd->add_option("--device", bench.device, "Pick the device whose name contains this text");
  bench_cmd->add_option("--dtype", dtype, "u32, i32, f32, u64, i64 or f64")->capture_default_str();
  bench_cmd->add_option("--op", op, "add, mul, min, max, and, or or xor")->capture_default_str();
  bench_cmd->add_option("--kind", kind, "inclusive, exclusive or reduce")->capture_default_str();
  CLI::Option* algorithms_option =
      bench_cmd->add_option("--algorithms", algorithms,
                            "Comma-separated: csdldf,csdl,rts,memcpy,cub (cub: CUDA, sums only; "
                            "default: all that apply)");
  bench_cmd->add_option(
      "--sizes", bench.sizes,
      "LO:HI for 2^LO..2^HI, or N1,N2,... (default 10:28 on a GPU, 10:22 on a CPU driver)");
  bench_cmd->add_option("--shape", bench.shapes,
                        "Batched scans instead of sizes: BxN (rows x row length), a "
                        "comma-separated list, or 'table' for the seven target shapes");
  bench_cmd
      ->add_option("--runs", bench.runs,
                   "Timed runs per size (default 30 on a GPU, 5 on a CPU driver)")
      ->check(at_least_one);
  auto* hot = bench_cmd->add_flag("--hot", bench.hot, "Do not flush the cache between runs");
  bench_cmd
      ->add_flag("--warm-code", bench.warm_code,
                 "CUDA: before each timed run, after the flush, an untimed run on a second input "
                 "of the same size: the code is cached, the data is not")
      ->excludes(hot);
  bench_cmd->add_flag("--blocking", bench.blocking,
                      "Also run csdldf with 1 in 1, 2, 4, ..., 512 tiles never posting their "
                      "aggregate (simulated blocking; default algorithms then csdldf,memcpy)");
  bench_cmd->add_flag(
      "--stats", bench.options.statistics,
      "Run the statistics variant of csdl/csdldf and report spins, look-back steps, fallbacks "
      "and insertions (mean per run)");
  bench_cmd->add_option("--seed", bench.seed, "Seed of the random input")->capture_default_str();
  bench_cmd
      ->add_option("--max-spins", bench.options.tuning.max_spins,
                   "Look-back reads of a tile before csdldf falls back (1 for the nearest "
                   "successor once the run has seen a starved tile)")
      ->capture_default_str()
      ->check(at_least_one);
  bench_cmd->add_option(
      "--workgroup-size", bench.options.workgroup_size,
      "Threads per workgroup (default 256; Vulkan on a GPU under 4 MiB: 512; CUDA "
      "partition-flagged: 128, 256 for 8-byte types)");
  bench_cmd->add_option(
      "--vectors-per-thread", bench.options.vectors_per_thread,
      "16-byte vectors (four 32-bit or two 64-bit elements) per thread (Vulkan: default 4, on "
      "a GPU 6, 8 for 64-bit types, 3 under 4 MiB; Vulkan compaction on a GPU: 4 for 32-bit "
      "types, 5 for rle; CUDA: 4, 6 or 8, default 6, 4 under 8 MiB; CUDA compaction: its "
      "operation's, the only one it is compiled for: 8 for select, unique, rle and partition, 6 "
      "for partition-flagged, 4 for select-flagged)");
  bench_cmd->add_option(
      "--subgroup-size", bench.options.subgroup_size,
      "Logical subgroup size, a power of two up to the hardware's (default: the hardware's)");
  bench_cmd->add_option("--lookback-depth", bench.options.lookback_depth,
                        "Windows of tiles a look-back step reads at once (default 1; CUDA, where "
                        "every block of a launch is resident at once and up to 4 windows hold all "
                        "tiles: that many)");
  std::string tile_state = "auto";
  bench_cmd
      ->add_option("--tile-state", tile_state,
                   "csdl/csdldf tile state: split (portable 32-bit words), packed (64-bit words, "
                   "one lane per tile; needs 64-bit atomics) or auto (packed where possible)")
      ->capture_default_str();
  std::string tile_order = "auto";
  bench_cmd
      ->add_option("--tile-order", tile_order,
                   "csdldf: dispatch (tiles in workgroup-id order), counter (claimed from an "
                   "atomic counter) or auto (dispatch on GPUs, counter on CPU drivers)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "counter", "dispatch"}));
  std::string row_claims = "auto";
  bench_cmd
      ->add_option("--row-claims", row_claims,
                   "Vulkan batched runs on row-aligned tiles: rows (row by row), round (tile k of "
                   "every row before tile k + 1 of any) or auto (the device policy's choice by "
                   "the run's tile count)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "rows", "round"}));
  std::string staged_positions = "auto";
  bench_cmd
      ->add_option("--staged-positions", staged_positions,
                   "Vulkan compaction (--operation): the owner's staged positions as 16-bit "
                   "variables (int16; devices with shaderInt16), two to a 32-bit word set by "
                   "atomic OR (words), or auto (int16 where the device has it)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "int16", "words"}));
  bench_cmd->add_option("--csv", bench.csv, "Also write the results as CSV to this file");
  std::string operation;
  CLI::Option* operation_option = bench_cmd->add_option(
      "--operation", operation,
      "Time a compaction instead of the scans: select, select-flagged, unique, partition, "
      "partition-flagged or rle, against the memcpy kernel (Vulkan) or cudaMemcpyAsync and CUB's "
      "counterpart "
      "(CUDA); default sizes 26:30 on a GPU, runs 10");
  int selected_percent = 50, run_bits = 0;
  CLI::Option* selected_option =
      bench_cmd
          ->add_option("--selected", selected_percent,
                       "--operation select, select-flagged, partition, partition-flagged: "
                       "percent of the elements selected (default 50)")
          ->check(CLI::Range(0, 100));
  CLI::Option* run_bits_option =
      bench_cmd
          ->add_option(
              "--run-bits", run_bits,
              "--operation unique, rle: run lengths uniform in [1, 2^S] (default: [1, 15])")
          ->check(CLI::Range(0, 20));

  StressOptions& stress = command.stress;
  CLI::App* stress_cmd = app.add_subcommand(
      "stress", "Random scans for a while, every output checked against the CPU reference");
  std::string stress_backend = "any";
  stress_cmd->add_option("--seconds", stress.seconds, "How long to run")->capture_default_str();
  stress_cmd->add_option("--seed", stress.seed, "Seed of the cases (default: from the clock)");
  stress_cmd->add_option("--backend", stress_backend, "any, vulkan or cuda")->capture_default_str();
  stress_cmd->add_option("--device", stress.device,
                         "Pick the device whose name contains this text");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    err << "gpuscan: error: " << one_line(e.what()) << " (see gpuscan --help)\n";
    return 2;
  }

  // What CLI11 leaves as text: each value checked here, so that a bad one is refused before
  // any file or device is opened.
  try {
    if (devices->parsed()) {
      command.subcommand = Subcommand::devices;
    } else if (scan_cmd->parsed()) {
      command.subcommand = Subcommand::scan;
      scan.kind =
          parse_choice<Kind>("--kind", scan_kind, parse_kind, "inclusive, exclusive, reduce");
      scan.op = parse_choice<Op>("--op", scan_op, parse_op, "add, mul, min, max, and, or, xor");
      scan.algorithm = parse_choice<Algorithm>("--algorithm", scan_algorithm, parse_algorithm,
                                               "csdldf, csdl, rts");
      scan.backend =
          parse_choice<Backend>("--backend", scan_backend, parse_backend, "any, vulkan, cuda");
      if (init_option->count() > 0) scan.init = scan_init;
    } else if (select_cmd->parsed() || partition_cmd->parsed() || unique_cmd->parsed() ||
               rle_cmd->parsed()) {
      command.subcommand = Subcommand::compact;
      const bool partitions = partition_cmd->parsed();
      const bool runs = unique_cmd->parsed() || rle_cmd->parsed();
      command.compact = partitions             ? partition
                        : unique_cmd->parsed() ? unique_options
                        : rle_cmd->parsed()    ? rle
                                               : select;
      CompactOptions& options = command.compact;
      options.algorithm = parse_choice<Algorithm>("--algorithm", compact_algorithm, parse_algorithm,
                                                  "csdldf, csdl");
      if (options.algorithm == Algorithm::rts) {
        throw UsageError("--algorithm: rts is not single pass; compaction runs csdldf or csdl");
      }
      options.backend =
          parse_choice<Backend>("--backend", compact_backend, parse_backend, "any, vulkan");
      for (std::size_t p = 0; p < predicate_options.size() && !runs; ++p) {
        const CLI::Option* given = partitions ? partition_options[p] : predicate_options[p];
        if (given->count() == 0) continue;
        if (options.predicate) {
          throw UsageError(std::string(partitions ? "partition" : "select") +
                           " takes one predicate (--lt, --le, --gt, --ge, --eq, --ne)");
        }
        options.predicate = static_cast<Predicate>(p);
        options.constant = partitions ? partition_values[p] : predicate_values[p];
      }
    } else if (stress_cmd->parsed()) {
      command.subcommand = Subcommand::stress;
      stress.backend =
          parse_choice<Backend>("--backend", stress_backend, parse_backend, "any, vulkan, cuda");
    } else {
      command.subcommand = Subcommand::bench;
      bench.backend =
          parse_choice<Backend>("--backend", backend, parse_backend, "any, vulkan, cuda");
      bench.dtype =
          parse_choice<DType>("--dtype", dtype, parse_dtype, "u32, i32, f32, u64, i64, f64");
      bench.op = parse_choice<Op>("--op", op, parse_op, "add, mul, min, max, and, or, xor");
      bench.kind = parse_choice<Kind>("--kind", kind, parse_kind, "inclusive, exclusive, reduce");
      bench.options.tile_state = parse_choice<TileState>(
          "--tile-state", tile_state,
          [](std::string_view text) -> std::optional<TileState> {
            if (text == "auto") return TileState::automatic;
            if (text == "split") return TileState::split;
            if (text == "packed") return TileState::packed;
            return std::nullopt;
          },
          "auto, split, packed");
      if (tile_order != "auto") bench.options.dispatch_order = tile_order == "dispatch";
      if (operation_option->count() > 0) {
        if (row_claims != "auto") {
          throw UsageError("--row-claims is for batched scans (--shape), not --operation");
        }
        if (staged_positions != "auto") {
          bench.options.int16_positions = staged_positions == "int16";
        }
        command.subcommand = Subcommand::compaction_bench;
        CompactionBenchOptions& compaction = command.compaction_bench;
        compaction.compaction =
            parse_choice<Compaction>("--operation", operation, parse_compaction,
                                     "select, select-flagged, unique, partition, "
                                     "partition-flagged, rle");
        if (algorithms_option->count() > 0 || bench.warm_code) {
          throw UsageError("--operation takes neither --algorithms nor --warm-code");
        }
        if (!bench.sizes.empty()) parse_sizes(bench.sizes);
        const bool selects = compaction.compaction != Compaction::unique &&
                             compaction.compaction != Compaction::run_length_encode;
        if (selected_option->count() > 0) {
          if (!selects) {
            throw UsageError(
                "--selected is for select, select-flagged, partition and partition-flagged");
          }
          compaction.selected_percent = selected_percent;
        }
        if (run_bits_option->count() > 0) {
          if (selects) throw UsageError("--run-bits is for unique and rle");
          compaction.run_bits = run_bits;
        }
        compaction.blocking = bench.blocking;
        compaction.backend = bench.backend;
        compaction.device = bench.device;
        compaction.dtype = bench.dtype;
        compaction.sizes = bench.sizes;
        compaction.runs = bench.runs;
        compaction.hot = bench.hot;
        compaction.seed = bench.seed;
        compaction.options = bench.options;
        compaction.csv = bench.csv;
        return command;
      }
      if (bench.blocking && !algorithms_option->count()) algorithms = "csdldf,memcpy";
      // Empty: every algorithm that applies to the device and case (run_bench decides).
      if (!algorithms.empty()) bench.implementations = parse_implementations(algorithms);
      if (bench.blocking && std::count(bench.implementations.begin(), bench.implementations.end(),
                                       Implementation::csdl)) {
        throw UsageError(
            "--blocking with csdl: decoupled look-back would wait forever for a blocked tile that "
            "never posts; leave csdl out (csdldf falls back instead)");
      }
      if (!bench.sizes.empty()) parse_sizes(bench.sizes);
      if (staged_positions != "auto") {
        throw UsageError("--staged-positions is for Vulkan compaction (--operation)");
      }
      if (row_claims != "auto") bench.options.round_rows = row_claims == "round";
    }
  } catch (const UsageError& e) {
    err << "gpuscan: error: " << one_line(e.what()) << "\n";
    return 2;
  }
  return command;
}

}  // namespace gpuscan::cli
