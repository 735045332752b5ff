// protected.h — files a submission must not edit (the harness, the tests, the grader, the
// interfaces). Their SHA-256 sums are written by `make protect` to grader/protected.sha256 and
// compiled into the grader, so the grader built from the course's copy checks a submission's tree
// against the course's sums, not against whatever manifest the submission carries.
#pragma once
#include <string>
#include <vector>

namespace grader {

// Paths under `root` whose contents differ from the compiled-in sums (files it does not have are
// not counted: a submission may consist of the student's files alone).
std::vector<std::string> edited_protected_files(const std::string& root);

}  // namespace grader
