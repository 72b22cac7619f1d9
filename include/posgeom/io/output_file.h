#pragma once
// One policy for every command that writes a single file (forward --out, tokenize --out,
// eval-addition --out): checked before any expensive work, written whole or not at all.
// - an existing file is replaced only with --force;
// - a directory, or a name ending in '/', is refused (--out names a file);
// - one of the run's own inputs is never written, --force or not (forward --out
//   <model>/model.safetensors would replace the weights it reads);
// - missing parent directories are made, and removed again if nothing is written;
// - the file is locked (io::PathLock) from the check to the write, so that two runs on
//   one output refuse instead of replacing each other's file.
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "posgeom/io/path_lock.h"

namespace posgeom::io {

struct OutputFileRules {
  std::string option = "--out";  // what the messages tell the user to change
  bool force = false;            // replace an existing file
  // What the run reads: files, or directories standing for every file under them. The
  // output may be none of them, by any name (a link, a hard link, a hub snapshot's blob).
  std::vector<std::filesystem::path> inputs;
};

class OutputFile {
 public:
  // Throws InputError naming `path` when the rules refuse it or another run holds it.
  OutputFile(std::filesystem::path path, OutputFileRules rules);
  // Not written: the parent directories made for it go with its lock (when empty).
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Checks the path again (a file may have appeared since), then writes it atomically.
  void write(const std::function<void(std::ostream&)>& fill);
  void writeText(const std::string& text);
  // The same for writers that write a path atomically themselves (SafetensorsWriter).
  void writeWith(const std::function<void(const std::filesystem::path&)>& write_to);

 private:
  void check() const;
  std::filesystem::path path_;
  OutputFileRules rules_;
  std::unique_ptr<PathLock> lock_;
};

}  // namespace posgeom::io
