// cases.cpp — see cases.h.
#include "cases.h"

#include <fmt/format.h>

#include <exception>

#include "safetensors.h"
#include "todo.h"

namespace attn {

CaseResult run_case(const GradeCase& c) {
    try {
        return c.run();
    } catch (const NotImplemented& e) {
        CaseResult r;
        r.status = "failed";
        r.reason = e.what();
        return r;
    } catch (const GoldenError& e) {
        CaseResult r;
        r.status = "error";
        r.reason = std::string("golden: ") + e.what();
        return r;
    } catch (const std::exception& e) {
        CaseResult r;
        r.status = "error";
        r.reason = std::string("exception: ") + e.what();
        return r;
    }
}

std::string case_line(const std::string& name, const CaseResult& r) {
    // One figure per fact: within the tolerance, the share of it used; beyond it, the reason says by how much.
    std::string err;
    if (r.nonfinite_output) err = "NaN/Inf in the output";
    else if (r.max_abs_err >= 0 && r.tol_share <= 1) err = fmt::format("max err {:.2e} ({:.0f}% of tol)", r.max_abs_err, 100 * r.tol_share);
    else if (r.max_abs_err >= 0) err = fmt::format("max err {:.2e}", r.max_abs_err);
    return fmt::format("  [{:<7}] {:<34} {:<42} {}{}{}", r.status, name, r.shape, err,
                       r.note.empty() ? "" : (err.empty() ? "" : "; ") + r.note, r.reason.empty() ? "" : "\n            " + r.reason);
}

}  // namespace attn
