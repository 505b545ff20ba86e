// uarch-audit: what the counts mean to a reader: the text table, JSON,
// before/after diffs and advice.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "classify.h"

namespace audit {

// One paragraph per finding the seeds have an answer for.
std::vector<std::string> advice(const ObjectReport &r);

// Totals, the top functions by counted instructions, the constant-count
// rep sites and the advice, per object; a grand total when there are several.
void print_text(std::ostream &os, const std::vector<ObjectReport> &reports, std::size_t top);

// {"files": {NAME: {"arch", "type", "built_by_clang", "totals", "functions", "advice"}},
//  "totals": {...}}
void print_json(std::ostream &os, const std::vector<ObjectReport> &reports);

// The counters that changed from before to after, per function and in total.
// Objects are paired by archive member name (or simply, one with one).
void print_diff(std::ostream &os, const std::string &before_name,
                const std::vector<ObjectReport> &before, const std::string &after_name,
                const std::vector<ObjectReport> &after, bool json);

} // namespace audit
