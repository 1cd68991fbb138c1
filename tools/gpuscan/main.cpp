// gpuscan: the command-line tool. Subcommands: devices, scan, select, partition, unique,
// bench, stress.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "command_line.hpp"
#include "gpuscan/gpuscan.hpp"

namespace {

using namespace gpuscan;

int print_devices() {
  const auto devices = list_devices();
  if (devices.empty()) {
    std::fprintf(stderr, "gpuscan: error: no usable device\n");
    return 1;
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const DeviceInfo& d = devices[i];
    std::printf("%zu: %s [%s] %s, subgroup %u, driver %s\n", i, d.name.c_str(),
                std::string(to_string(d.backend)).c_str(), d.type.c_str(), d.subgroup_size,
                d.driver.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto parsed = cli::parse_command_line(argc, argv, std::cout, std::cerr);
  if (const int* status = std::get_if<int>(&parsed)) return *status;
  const cli::Command& command = std::get<cli::Command>(parsed);
  try {
    switch (command.subcommand) {
      case cli::Subcommand::devices:
        return print_devices();
      case cli::Subcommand::scan:
        return cli::run_scan(command.scan);
      case cli::Subcommand::compact:
        return cli::run_compact(command.compact);
      case cli::Subcommand::bench:
        return cli::run_bench(command.bench);
      case cli::Subcommand::compaction_bench:
        return cli::run_compaction_bench(command.compaction_bench);
      case cli::Subcommand::stress:
        return cli::run_stress(command.stress);
    }
  } catch (const UsageError& e) {
    std::fprintf(stderr, "gpuscan: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuscan: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
