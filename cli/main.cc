// tandem: the command-line front end. Each subcommand lives in its own cmd_*.cc file.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli/cli.h"
#include "cli/openmp_wait_default.h"

namespace {
const char kUsage[] =
    "usage: tandem <command> [options]   (tandem <command> --help for details)\n"
    "       tandem --version\n"
    "\n"
    "commands:\n"
    "  inspect MODEL        inputs/outputs, op histogram, parameters, opsets, placement\n"
    "  run MODEL            run with .npy inputs (or random ones), latency percentiles\n"
    "  train MODEL DATA     train with a loss and an optimizer; export the result\n"
    "  profile MODEL        CPU vs GPU: time per op type, batch-size crossover, Chrome trace\n"
    "  convert IN OUT       optimize, re-opset, shrink weights or fix dims; verified\n"
    "  test-onnx PATH...    run ONNX backend test folders and report PASS/FAIL per test\n";

struct Entry {
  const char* name;
  tandem::cli::Command fn;
};
const Entry kCommands[] = {
    {"inspect", tandem::cli::Inspect},
    {"run", tandem::cli::Run},
    {"train", tandem::cli::Train},
    {"profile", tandem::cli::Profile},
    {"convert", tandem::cli::Convert},
    {"test-onnx", tandem::cli::TestOnnx},
};
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version")) {
    std::printf("tandem %s\n", TANDEM_VERSION_STRING);
    return 0;
  }
  for (const Entry& e : kCommands)
    if (argv[1] == std::string(e.name)) {
      tandem::cli::ReexecWithDefaultOpenMpWait(argv);
      // The commands report errors as statuses; this is the last line of defence, so an
      // exception that slipped through still ends in one line and exit 1, not an abort.
      try {
        return e.fn(argc - 1, argv + 1);
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "error: tandem %s: %s\n", e.name, ex.what());
        return 1;
      }
    }
  std::fprintf(stderr, "tandem: unknown command '%s'\n\n%s", argv[1], kUsage);
  return 2;
}
