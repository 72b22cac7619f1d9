#include "posgeom/io/output_file.h"

#include <optional>

#include "posgeom/base/error.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/path_entry.h"

namespace posgeom::io {
namespace fs = std::filesystem;
namespace {

// The input an existing `out` is: `input` or, for a directory, one of the files under it
// (by any name: a hard link, a link such as a hub snapshot's to its blob).
std::optional<fs::path> asInput(const fs::path& out, const fs::path& input) {
  std::error_code ec;
  if (!fs::is_directory(input, ec)) {
    if (fs::equivalent(out, input, ec)) return input;
    return std::nullopt;
  }
  for (fs::recursive_directory_iterator it(input, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code same;
    if (it->is_regular_file(same) && fs::equivalent(out, it->path(), same)) return it->path();
  }
  return std::nullopt;
}

// Whether `path` (existing or not) lies under the directory `dir`, links resolved.
bool inside(const fs::path& path, const fs::path& dir) {
  std::error_code ec;
  const auto file = fs::weakly_canonical(fs::absolute(path, ec), ec);
  const auto root = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) return false;
  const auto relative = file.lexically_relative(root);
  return !relative.empty() && *relative.begin() != ".." && relative != ".";
}

}  // namespace

OutputFile::OutputFile(fs::path path, OutputFileRules rules) : path_(std::move(path)), rules_(std::move(rules)) {
  if (path_.empty()) throw InputError(rules_.option, "needs a file name");
  check();
  // The nearest existing ancestor must be a directory; the ones missing below it are made
  // with the lock (which lives beside the file) and go with it when nothing is written.
  fs::path parent = normalisedPath(path_).parent_path();
  while (!entryExists(parent)) parent = parent.parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    throw InputError(path_.string(), "cannot be written: " + parent.string() + " is not a directory");
  lock_ = std::make_unique<PathLock>(path_, rules_.option);
}

OutputFile::~OutputFile() = default;

void OutputFile::check() const {
  const auto text = path_.string();
  if (text.back() == '/' || !path_.has_filename() || path_.filename() == "." || path_.filename() == "..")
    throw InputError(text, "names a directory, but " + rules_.option + " is a file; give the file's name");
  std::error_code ec;
  if (fs::is_directory(path_, ec))
    throw InputError(text, "is a directory, but " + rules_.option + " is a file; give the name of a file in it");
  if (entryExists(path_))
    for (const auto& input : rules_.inputs)
      if (const auto is = asInput(path_, input))
        throw InputError(text, "is " + (normalisedPath(*is) == normalisedPath(path_) ? "" : is->string() + ", ") +
                                   "one of the files this run reads; choose another " + rules_.option +
                                   " (--force never replaces an input)");
  // Not even a new file inside a directory the run reads: a model's or a corpus' directory
  // would read it as its own the next time.
  for (const auto& input : rules_.inputs)
    if (fs::is_directory(input, ec) && inside(path_, input))
      throw InputError(text, "lies inside " + input.string() + ", which this run reads; choose another " + rules_.option);
  if (entryExists(path_) && !rules_.force) throw InputError(text, "exists; pass --force to replace it");
}

void OutputFile::writeWith(const std::function<void(const fs::path&)>& write_to) {
  check();
  write_to(path_);
}

void OutputFile::write(const std::function<void(std::ostream&)>& fill) {
  writeWith([&](const fs::path& p) { writeFileAtomically(p, fill); });
}

void OutputFile::writeText(const std::string& text) {
  write([&](std::ostream& out) { out << text; });
}

}  // namespace posgeom::io
