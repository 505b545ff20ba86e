// What every uarch-bench subcommand prints and writes: its result tables
// as text on stdout, and, on request, as CSV (one file per table, RFC 4180
// quoting) and JSON (one document, every table by name). Google
// Benchmark's own rows go to --benchmark_out (its JSON/CSV reporters) and
// to the console only with --rows.
#pragma once
#include <benchmark/benchmark.h>
#include <stdio.h>
#include <map>
#include <string>
#include <vector>

namespace report {

// One cell: text, or a number printed with `digits` decimals.
struct Cell {
	std::string text;
	double num = 0;
	int digits = -1;   // < 0: text
	Cell(const char *t) : text(t) {}
	Cell(std::string t) : text(std::move(t)) {}
	Cell(double v, int d) : num(v), digits(d) {}
	std::string str() const;
};

struct Table {
	std::string name;                        // JSON key, CSV file suffix
	std::string title;                       // printed above it
	std::vector<std::string> cols;
	std::vector<std::vector<Cell>> rows;
	std::vector<std::string> notes;          // printed below it
};

// The flags every subcommand takes (parse() removes them from argv):
//   --quick       a short run            --min   tables use the fastest repetition
//   --csv FILE    tables as CSV          --json FILE  tables as JSON
//   --plot FILE   a PNG (where the subcommand draws one)
//   --rows        Google Benchmark's own console rows too
struct Options {
	bool quick = false, min = false, rows = false;
	std::string csv, json, plot;
	std::vector<char *> rest;   // argv[0] and everything not ours
};
Options parse(int argc, char **argv);

// Opens (truncates) the requested outputs, to fail on a bad path before any
// measuring. One line on stderr and false on failure.
bool check_outputs(const char *prog, const Options &o);

// Prints every table and writes the requested files; `meta` (name, value)
// pairs head the JSON document and the text output. One line on stderr
// and false when a file cannot be written.
bool emit(const char *prog, const Options &o, const std::vector<std::pair<std::string, std::string>> &meta,
	  const std::vector<Table> &tables);

// A JSON string literal of s (quotes, escapes).
std::string json_str(const std::string &s);

// The display reporter: forwards to Google Benchmark's console reporter
// only with --rows, so the tables are what a reader sees; subclasses
// collect the runs they tabulate.
class Quiet : public benchmark::ConsoleReporter {
public:
	bool show = false;
	bool ReportContext(const Context &c) override { return show ? ConsoleReporter::ReportContext(c) : true; }
	void ReportRuns(const std::vector<Run> &runs) override
	{
		if (show)
			ConsoleReporter::ReportRuns(runs);
	}
	void Finalize() override
	{
		if (show)
			ConsoleReporter::Finalize();
	}
};

// CPU time per item of every run, keyed by the benchmark's name: the
// aggregate `stat` ("median", "min") when repetitions give one, the run
// itself otherwise; an item is 1 / the run's counter "per" (1 if none).
// CPU time, not wall time: a busy machine's descheduling does not count.
class Medians : public Quiet {
public:
	std::string stat = "median";
	void ReportRuns(const std::vector<Run> &runs) override;
	double get(const std::string &name) const;   // NAN when missing
private:
	std::map<std::string, double> ns_;
	std::map<std::string, bool> from_stat_;
};

// The geometric mean of each op's ratios, as a table.
Table geomean(const std::string &title, const std::vector<std::pair<std::string, double>> &op_ratio);

} // namespace report
