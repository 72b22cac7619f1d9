#include "posgeom/io/output_file.h"

#include <unistd.h>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;
using io::OutputFile;
using io::OutputFileRules;

// The InputError's message when `path` is refused under `rules` ("" when it is taken).
std::string outputRefusal(const fs::path& path, const OutputFileRules& rules = {}) {
  try {
    OutputFile out(path, rules);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(OutputFile, AnExistingFileIsReplacedOnlyWithForce) {
  ScratchDir s;
  writeFile(s / "o.csv", "old");
  EXPECT_EQ(outputRefusal(s / "o.csv"), (s / "o.csv").string() + ": exists; pass --force to replace it");
  EXPECT_EQ(readFile(s / "o.csv"), "old");
  OutputFile out(s / "o.csv", {"--out", /*force=*/true, {}});
  out.writeText("new");
  EXPECT_EQ(readFile(s / "o.csv"), "new");
}

TEST(OutputFile, ADirectoryOrANameEndingInSlashIsRefused) {
  ScratchDir s;
  fs::create_directories(s / "d");
  EXPECT_EQ(outputRefusal(s / "d", {"--out", true, {}}),
            (s / "d").string() + ": is a directory, but --out is a file; give the name of a file in it");
  EXPECT_EQ(outputRefusal((s / "d").string() + "/"),
            (s / "d").string() + "/: names a directory, but --out is a file; give the file's name");
  EXPECT_NE(outputRefusal((s / "new").string() + "/"), "");
  EXPECT_FALSE(fs::exists(s / "new"));
  EXPECT_TRUE(fs::is_empty(s / "d"));
}

TEST(OutputFile, AnInputIsNeverReplacedEvenWithForceByAnyName) {
  ScratchDir s;
  fs::create_directories(s / "model/blobs");
  writeFile(s / "model/blobs/abc", "weights");
  fs::create_symlink(s / "model/blobs/abc", s / "model/model.safetensors");  // as a hub snapshot holds it
  fs::create_hard_link(s / "model/blobs/abc", s / "hard");
  const OutputFileRules by_file{"--out", true, {s / "model/model.safetensors"}};
  EXPECT_EQ(outputRefusal(s / "model/model.safetensors", by_file),
            (s / "model/model.safetensors").string() +
                ": is one of the files this run reads; choose another --out (--force never replaces an input)");
  EXPECT_EQ(outputRefusal(s / "model/blobs/abc", by_file), (s / "model/blobs/abc").string() + ": is " +
                                                         (s / "model/model.safetensors").string() +
                                                         ", one of the files this run reads; choose another --out (--force "
                                                         "never replaces an input)");
  EXPECT_NE(outputRefusal(s / "hard", by_file), "");
  EXPECT_NE(outputRefusal(s / "model/../model/./blobs/abc", {"--out", true, {s / "model"}}), "");  // a directory: its files
  EXPECT_EQ(readFile(s / "model/blobs/abc"), "weights");
  EXPECT_EQ(outputRefusal(s / "model/new.safetensors", by_file), "");  // a new file beside an input is fine
}

TEST(OutputFile, NoNewFileInsideADirectoryTheRunReads) {
  // tokenize --input corpus/ --out corpus/ids.json put its output in the corpus the next
  // run reads; forward --out model/x.safetensors in the model's directory.
  ScratchDir s;
  fs::create_directories(s / "corpus/sub");
  fs::create_directory_symlink(s / "corpus", s / "link");
  const OutputFileRules reads_corpus{"--out", true, {s / "corpus"}};
  EXPECT_EQ(outputRefusal(s / "corpus/ids.json", reads_corpus),
            (s / "corpus/ids.json").string() + ": lies inside " + (s / "corpus").string() +
                ", which this run reads; choose another --out");
  EXPECT_NE(outputRefusal(s / "corpus/sub/deeper/ids.json", reads_corpus), "");
  EXPECT_NE(outputRefusal(s / "link/ids.json", reads_corpus), "");  // by a link to it too
  EXPECT_EQ(outputRefusal(s / "corpus-ids.json", reads_corpus), "");  // a sibling whose name starts alike is not inside
  EXPECT_FALSE(fs::exists(s / "corpus/sub/deeper"));
}

TEST(OutputFile, MissingParentsAreMadeAndRemovedWhenNothingIsWritten) {
  ScratchDir s;
  { OutputFile out(s / "a/b/o.csv", {}); }
  EXPECT_FALSE(fs::exists(s / "a"));
  {
    OutputFile out(s / "a/b/o.csv", {});
    out.writeText("x");
  }
  EXPECT_EQ(readFile(s / "a/b/o.csv"), "x");
  EXPECT_EQ(std::distance(fs::directory_iterator(s / "a/b"), fs::directory_iterator()), 1);  // no lock left
  writeFile(s / "file", "");
  EXPECT_EQ(outputRefusal(s / "file/o.csv"),
            (s / "file/o.csv").string() + ": cannot be written: " + (s / "file").string() + " is not a directory");
}

TEST(OutputFile, ASecondRunOnTheSameFileIsRefused) {
  ScratchDir s;
  OutputFile held(s / "o.csv", {});
  EXPECT_EQ(outputRefusal(s / "o.csv"), (s / "o.csv").string() + ": is being written by another posgeom run (pid " +
                                      std::to_string(::getpid()) + "); wait for it to finish or choose another --out");
}

TEST(OutputFile, AFileThatAppearsBeforeTheWriteIsNotReplaced) {
  ScratchDir s;
  OutputFile out(s / "o.csv", {});
  writeFile(s / "o.csv", "someone else's");
  EXPECT_THROW(out.writeText("mine"), InputError);
  EXPECT_EQ(readFile(s / "o.csv"), "someone else's");
}

}  // namespace
}  // namespace posgeom::testing
