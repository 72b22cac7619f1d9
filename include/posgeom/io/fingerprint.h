#pragma once
// A cheap identity of files by their contents, not their paths: the same model or corpus
// under another path fingerprints the same, swapped weights at the same path do not.
// Each file contributes its name, its size, its first and last 256 KiB (a safetensors
// header, a config) and 32 blocks of 16 KiB spread over the rest: at most 1 MiB read per
// file, so a 14 GB checkpoint costs milliseconds. A change confined to bytes between the
// sampled blocks is not seen.
#include <filesystem>
#include <string>
#include <vector>

namespace posgeom::io {

// Hex digest over the files in the given order. InputError naming a file it cannot read.
std::string fingerprintFiles(const std::vector<std::filesystem::path>& files);

// A model directory's config.json and weight files (*.safetensors, *.bin, their index),
// sorted by name; the tokenizer files and README do not change what the model computes.
std::string modelFingerprint(const std::filesystem::path& model_dir);

// Hex digest of every byte of the files, in the given order, as one stream: not their
// names, nor where one ends and the next begins, so files that concatenate to the same
// text digest the same. Reads all of them: for files a reader takes whole anyway (train's
// corpus). InputError naming a file it cannot read.
std::string contentDigest(const std::vector<std::filesystem::path>& files);

}  // namespace posgeom::io
