// The CLI's OpenMP waiting default (runtime/openmp_wait.h). libgomp has read its environment
// before main() runs, so a default chosen here takes effect only in a new program image.
#pragma once

namespace tandem::cli {

// When the user chose no OpenMP waiting policy, sets Tandem's default and executes this
// program again (/proc/self/exe, same arguments), so that libgomp loads with it; the new
// image finds the variable set and goes on. Returns when nothing was to be done, or when
// the exec failed (the command then runs with libgomp's own default).
void ReexecWithDefaultOpenMpWait(char** argv);

}  // namespace tandem::cli
