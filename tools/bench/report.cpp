#include "report.h"
#include <errno.h>
#include <string.h>
#include <algorithm>
#include <cmath>
#include "common/gnuplot.h"

namespace report {

std::string Cell::str() const
{
	if (digits < 0)
		return text;
	if (num != num)
		return "nan";
	char b[64];
	snprintf(b, sizeof b, "%.*f", digits, num);
	return b;
}

Options parse(int argc, char **argv)
{
	Options o;
	o.rest.push_back(argv[0]);
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto value = [&](const char *flag, std::string *out) {
			size_t l = strlen(flag);
			if (a == flag && i + 1 < argc) {
				*out = argv[++i];
				return true;
			}
			if (a.compare(0, l, flag) == 0 && a.size() > l && a[l] == '=') {
				*out = a.substr(l + 1);
				return true;
			}
			return false;
		};
		if (value("--csv", &o.csv) || value("--json", &o.json) || value("--plot", &o.plot))
			continue;
		if (a == "--quick") o.quick = true;
		else if (a == "--min") o.min = true;
		else if (a == "--rows") o.rows = true;
		else o.rest.push_back(argv[i]);
	}
	return o;
}

// CSV path of table i: the --csv path itself for the first, "<stem>.<name>.csv"
// for the others (each table keeps its own columns).
static std::string csv_path(const std::string &base, const std::vector<Table> &tables, size_t i)
{
	if (i == 0)
		return base;
	size_t dot = base.rfind('.'), slash = base.rfind('/');
	std::string stem = dot != std::string::npos && (slash == std::string::npos || dot > slash) ? base.substr(0, dot) : base;
	return stem + "." + tables[i].name + ".csv";
}

static bool writable(const char *prog, const std::string &path)
{
	std::string why;
	if (uarch::tools::can_write(path, &why))
		return true;
	fprintf(stderr, "%s: %s\n", prog, why.c_str());
	return false;
}

bool check_outputs(const char *prog, const Options &o)
{
	std::string why;
	if (!o.plot.empty() && !uarch::tools::can_plot(o.plot, &why)) {
		fprintf(stderr, "%s: %s\n", prog, why.c_str());
		return false;
	}
	return (o.csv.empty() || writable(prog, o.csv)) && (o.json.empty() || writable(prog, o.json));
}

std::string json_str(const std::string &s)
{
	std::string out = "\"";
	for (unsigned char c : s) {
		switch (c) {
		case '"': out += "\\\""; break;
		case '\\': out += "\\\\"; break;
		case '\n': out += "\\n"; break;
		case '\t': out += "\\t"; break;
		case '\r': out += "\\r"; break;
		default:
			if (c < 0x20) {
				char b[8];
				snprintf(b, sizeof b, "\\u%04x", c);
				out += b;
			} else {
				out += char(c);
			}
		}
	}
	return out + "\"";
}

static std::string csv_field(const std::string &s)
{
	if (s.find_first_of(",\"\n\r") == std::string::npos)
		return s;
	std::string out = "\"";
	for (char c : s)
		out += c == '"' ? std::string("\"\"") : std::string(1, c);
	return out + "\"";
}

static void print_text(const Table &t)
{
	std::vector<size_t> w(t.cols.size());
	for (size_t c = 0; c < t.cols.size(); c++)
		w[c] = t.cols[c].size();
	for (const auto &r : t.rows)
		for (size_t c = 0; c < r.size() && c < w.size(); c++)
			w[c] = std::max(w[c], r[c].str().size());
	if (!t.title.empty())
		printf("\n%s\n", t.title.c_str());
	auto line = [&](auto &&cell, auto &&numeric) {
		for (size_t c = 0; c < w.size(); c++) {
			std::string s = cell(c);
			// Text left-aligned, numbers right-aligned.
			printf(c ? "  %*s" : "%*s", numeric(c) ? int(w[c]) : -int(w[c]), s.c_str());
		}
		printf("\n");
	};
	auto numeric_col = [&](size_t c) { return !t.rows.empty() && c < t.rows[0].size() && t.rows[0][c].digits >= 0; };
	line([&](size_t c) { return t.cols[c]; }, numeric_col);
	for (const auto &r : t.rows)
		line([&](size_t c) { return c < r.size() ? r[c].str() : std::string(); }, numeric_col);
	for (const auto &n : t.notes)
		printf("%s\n", n.c_str());
}

bool emit(const char *prog, const Options &o, const std::vector<std::pair<std::string, std::string>> &meta,
	  const std::vector<Table> &tables)
{
	for (const Table &t : tables)
		print_text(t);
	bool ok = true;
	if (!o.csv.empty())
		for (size_t i = 0; i < tables.size(); i++) {
			std::string path = csv_path(o.csv, tables, i);
			FILE *f = fopen(path.c_str(), "w");
			if (!f) {
				fprintf(stderr, "%s: %s: %s\n", prog, path.c_str(), strerror(errno));
				ok = false;
				continue;
			}
			const Table &t = tables[i];
			for (size_t c = 0; c < t.cols.size(); c++)
				fprintf(f, "%s%s", c ? "," : "", csv_field(t.cols[c]).c_str());
			fprintf(f, "\n");
			for (const auto &r : t.rows) {
				for (size_t c = 0; c < r.size(); c++)
					fprintf(f, "%s%s", c ? "," : "", csv_field(r[c].str()).c_str());
				fprintf(f, "\n");
			}
			ok &= fclose(f) == 0;
		}
	if (!o.json.empty()) {
		FILE *f = fopen(o.json.c_str(), "w");
		if (!f) {
			fprintf(stderr, "%s: %s: %s\n", prog, o.json.c_str(), strerror(errno));
			return false;
		}
		fprintf(f, "{\n");
		for (const auto &[k, v] : meta)
			fprintf(f, "  %s: %s,\n", json_str(k).c_str(), json_str(v).c_str());
		fprintf(f, "  \"tables\": {");
		for (size_t i = 0; i < tables.size(); i++) {
			const Table &t = tables[i];
			fprintf(f, "%s\n    %s: [", i ? "," : "", json_str(t.name).c_str());
			for (size_t r = 0; r < t.rows.size(); r++) {
				fprintf(f, "%s\n      {", r ? "," : "");
				for (size_t c = 0; c < t.cols.size() && c < t.rows[r].size(); c++) {
					const Cell &cell = t.rows[r][c];
					bool num = cell.digits >= 0 && cell.num == cell.num;
					fprintf(f, "%s%s: %s", c ? ", " : "", json_str(t.cols[c]).c_str(),
						num ? cell.str().c_str() : cell.digits >= 0 ? "null" : json_str(cell.text).c_str());
				}
				fprintf(f, "}");
			}
			fprintf(f, "\n    ]");
		}
		// The lines printed below the tables (the A/A noise, the rows below
		// 0.97x), by table.
		fprintf(f, "\n  },\n  \"notes\": {");
		bool first = true;
		for (const Table &t : tables) {
			if (t.notes.empty())
				continue;
			fprintf(f, "%s\n    %s: [", first ? "" : ",", json_str(t.name).c_str());
			for (size_t i = 0; i < t.notes.size(); i++)
				fprintf(f, "%s%s", i ? ", " : "", json_str(t.notes[i]).c_str());
			fprintf(f, "]");
			first = false;
		}
		fprintf(f, "%s}\n}\n", first ? "" : "\n  ");
		ok &= fclose(f) == 0;
		if (!ok)
			fprintf(stderr, "%s: %s: write failed\n", prog, o.json.c_str());
	}
	return ok;
}

// A run that failed or was skipped: Google Benchmark 1.8 replaced
// error_occurred (Debian 12's 1.7) with skipped (Debian 13's 1.9).
template <class R>
auto run_failed(const R &r, int) -> decltype(bool(r.skipped))
{
	return bool(r.skipped);
}
template <class R>
bool run_failed(const R &r, long)
{
	return r.error_occurred;
}

void Medians::ReportRuns(const std::vector<Run> &runs)
{
	Quiet::ReportRuns(runs);
	for (const Run &r : runs) {
		if (run_failed(r, 0))
			continue;
		bool agg = r.run_type == Run::RT_Aggregate;
		if (agg && r.aggregate_name != stat)
			continue;
		std::string key = r.run_name.function_name;
		if (!agg && from_stat_[key])
			continue;
		from_stat_[key] = agg;
		auto it = r.counters.find("per");
		ns_[key] = r.GetAdjustedCPUTime() / (it == r.counters.end() ? 1.0 : double(it->second));
	}
}

double Medians::get(const std::string &name) const
{
	auto it = ns_.find(name);
	return it == ns_.end() ? NAN : it->second;
}

Table geomean(const std::string &title, const std::vector<std::pair<std::string, double>> &op_ratio)
{
	std::map<std::string, std::pair<double, int>> g;
	for (const auto &[op, r] : op_ratio) {
		g[op].first += std::log(r);
		g[op].second++;
	}
	Table t{"geomean", title, {"op", "cases", "ratio"}, {}, {}};
	for (const auto &[op, x] : g)
		t.rows.push_back({op, {double(x.second), 0}, {std::exp(x.first / x.second), 3}});
	return t;
}

} // namespace report
