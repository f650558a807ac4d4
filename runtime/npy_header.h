// The header of a NumPy .npy file, parsed as numpy.lib.format defines it: a Python literal
// dict with exactly the keys 'descr', 'fortran_order' and 'shape', in any order, any
// Python whitespace, either quote style, an optional trailing comma, then padding. What
// numpy reads is read the same way; anything else (a missing, repeated or unknown key, a
// shape that is not a tuple of non-negative integers, a structured dtype, an escape in a
// string) is refused, saying what is wrong: the reader never guesses.
#pragma once
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tandem {

struct NpyHeader {
  DataType dtype = DataType::kUndefined;
  bool big_endian = false;     // '>' in descr: each element's bytes are reversed on reading
  bool fortran_order = false;  // the data lists the first axis fastest
  Dims shape;
};

// `text` is the header dict as stored after the magic and length (trailing spaces and the
// closing newline included).
absl::StatusOr<NpyHeader> ParseNpyHeader(std::string_view text);

// The descr numpy writes for `t` on this (little-endian) machine: "<f4", "|u1", "|b1";
// "" for a type a .npy file cannot hold.
std::string NpyDescr(DataType t);

}  // namespace tandem
