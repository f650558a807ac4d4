// What each fuzz target does with one input, shared by the libFuzzer binaries (fuzz_*.cc,
// built with -DTANDEM_FUZZ=ON) and the crash regressions in the ordinary test suite
// (fuzz_regressions_test.cc), so a crash found once is re-run by every build.
//
// Each entry must return normally for every input: errors are statuses, never crashes,
// aborts, sanitizer reports, leaks or unbounded allocations.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace tandem::fuzz {

// Limits that keep a fuzz run fast and within libFuzzer's RSS budget (memory 256 MiB,
// Loop 1000 iterations); set by each target's LLVMFuzzerInitialize and by the regressions.
void SetFuzzLimits();

// Bytes -> ImportModelBuffer (without libonnx's passes, see fuzz_entries.cc).
void ImportModel(const uint8_t* data, size_t size);
// Bytes -> import -> Session on the CPU -> one Run with small deterministic inputs
// (symbolic dims 2, at most 4096 elements per input; larger models are imported only).
void ImportAndRun(const uint8_t* data, size_t size);
// Bytes -> a .npy file -> ReadNpy.
void ReadNpyFile(const uint8_t* data, size_t size);
// Bytes -> a checkpoint file -> LoadCheckpoint.
void LoadCheckpointFile(const uint8_t* data, size_t size);

// Bytes -> a CSV file -> LoadCsv (the last column the labels, a header guessed).
void LoadCsvFile(const uint8_t* data, size_t size);
// Bytes -> an images and a labels file (the same bytes, gzip or plain) -> LoadIdx.
void LoadIdxFiles(const uint8_t* data, size_t size);
// Bytes split at NULs -> argv -> cli::ParseArgs, then every flag's value through the
// number, size and NAME=VALUE parsers the commands use.
void ParseFlags(const uint8_t* data, size_t size);

// The entry for a target name ("import", "run", "npy", "checkpoint", "csv", "idx",
// "flags"), or nullptr.
using Entry = void (*)(const uint8_t*, size_t);
Entry EntryFor(const std::string& target);

}  // namespace tandem::fuzz
