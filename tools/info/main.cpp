// uarch-info: what uarch sees on this CPU and what it binds, as text or
// JSON. It re-runs the same pure probe and policy the library runs at load
// time and shows the library's actual bindings (uarch_impl) beside them.
#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <sched.h>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/auxv.h>
#include <vector>
#include "dispatch/state.h"
#include "probe/cpu.h"
#include "select/plan.h"
#include "tunables/profile.h"
#include "tunables/tunables.h"
#include "uarch.h"
#include "common/cpuid_dump.h"
#include "common/size_text.h"
#include "common/stdout_check.h"
#if UARCH_HAVE_CPU_FEATURES
#include <cpu_features/cpuinfo_x86.h>
#endif

using namespace uarch;
using uarch::tools::size_text;

namespace {

[[noreturn]] void die(const std::string &msg)
{
	std::fprintf(stderr, "uarch-info: %s\n", msg.c_str());
	std::exit(2);
}

std::string json_str(const std::string &s)
{
	std::string o = "\"";
	for (unsigned char c : s) {
		if (c == '"' || c == '\\') { o += '\\'; o += char(c); }
		else if (c < 0x20 || c >= 0x7f) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o += b; }
		else o += char(c);
	}
	return o + "\"";
}

// Shown entries are cut to 64 bytes: a rejected entry may be kilobytes.
std::string shown(const Tunables &t, const Entry &e)
{
	std::string s(t.input + e.offset, e.length);
	if (s.size() > 64)
		s = s.substr(0, 61) + "...";
	return s;
}

std::string hex(uint64_t v)
{
	char b[24];
	std::snprintf(b, sizeof b, "0x%" PRIx64, v);
	return b;
}

// Where fills of other bytes than 0 stream, when that differs from nt_min.
std::string nt_fill_text(const MemThresholds &m)
{
	return (m.nt_fill_min ? "from " + size_text(m.nt_fill_min) : std::string("never")) + " for fills of bytes other than 0";
}

struct Report {
	Cpu cpu;
	Tunables tun;
	Plan plan;
	bool secure = false;
	bool live = false;        // this machine (library bindings available)
	bool policy_only = false; // live, but the bindings shown are the policy's for --tunables
	std::string source;       // "this machine", a dump file, a MIDR
	std::string brand, uarch_name;
	std::string env;          // the UARCH_TUNABLES string parsed
	std::string profile_file; // the system profile read (live only)
	ProfileInfo profile = {ProfileStatus::absent, 0, {}};
};

// Where the value for key came from: an applied entry of the profile
// (the input's first profile.length bytes), of the environment, or neither.
const char *origin(const Report &r, Key key)
{
	const Tunables &t = r.tun;
	for (uint32_t i = 0; i < t.nentries; i++) {
		const Entry &e = t.entries[i];
		if (e.key == key && e.verdict == Verdict::applied && !(r.plan.refused & (1u << i)))
			return e.offset < r.profile.length ? "profile" : "environment";
	}
	return "default";
}

const char *origin(const Report &r, const Entry &e)
{
	return e.offset < r.profile.length ? "profile" : "environment";
}

// Where nt_fill_threshold's value came from: fills of other bytes follow
// nt_threshold where no entry of their own says otherwise.
const char *nt_fill_origin(const Report &r)
{
	const char *o = origin(r, Key::nt_fill_threshold);
	return !std::strcmp(o, "default") && r.plan.mem.nt_fill_min == r.plan.mem.nt_min ? origin(r, Key::nt_threshold) : o;
}

std::string idle_name(const IdlePolicy &p)
{
	std::string s;
	for (int i = 0; i < p.nstages; i++)
		s += (i ? "+" : "") + std::string(stage_name(p.stages[i]));
	return s;
}

std::string bound(const Report &r, uint32_t op)
{
	if (r.live && !r.policy_only) {
		const char *n = uarch_impl(op_name(op));
		return n ? n : "?";
	}
	return op == op_idle_wait ? idle_name(r.plan.idle) : impl_name(r.plan.impl[op]);
}

// How calls reach the variants in this process: under LD_PRELOAD the
// preload library's exports come first, and it says how it bound its
// memcpy/memmove/memset entries.
std::string entry_binding()
{
	using Fn = const char *(*)(void);
	if (auto f = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "uarch_preload_binding"))) {
		std::string b = f();
		return "libuarch_preload.so, " + b +
		       (b == "symbols"   ? " (the symbols name the variants, bound at load; objects bound earlier"
					       " jump by an offset kept in RELRO)"
			: b == "pointer" ? " (one jump by an offset kept in RELRO)"
			: b == "unbound" ? " (the portable variants: no state at load)"
					 : "");
	}
	return std::string("libuarch.so, ") + uarch::library_binding();
}

std::string policy(const Report &r, uint32_t op)
{
	return op == op_idle_wait ? idle_name(r.plan.idle) : impl_name(r.plan.impl[op]);
}

std::vector<std::string> features(const Cpu &c)
{
	std::vector<std::string> v;
	for (uint32_t f = 0; f < f_count; f++)
		if (c.has(Feature(f)))
			v.push_back(feature_name(f));
	return v;
}

const char *zen_name(Zen z)
{
	static const char *const n[] = {"", "zen1", "zen2", "zen3", "zen4", "zen5"};
	return n[int(z)];
}

void print_json(const Report &r)
{
	const Cpu &c = r.cpu;
	std::printf("{\n  \"source\": %s,\n", json_str(r.source).c_str());
	std::printf("  \"arch\": \"%s\",\n", c.arch == Arch::x86_64 ? "x86_64" : c.arch == Arch::aarch64 ? "aarch64" : "unknown");
	std::printf("  \"vendor\": %s,\n  \"vendor_name\": \"%s\",\n", json_str(c.vendor_id).c_str(), vendor_name(c.vendor));
	std::printf("  \"family\": %u,\n  \"model\": %u,\n  \"stepping\": %u,\n", c.family, c.model, c.stepping);
	std::printf("  \"brand\": %s,\n  \"microarchitecture\": %s,\n", json_str(r.brand).c_str(), json_str(r.uarch_name).c_str());
	std::printf("  \"zen\": %s,\n", json_str(zen_name(c.zen)).c_str());
	std::printf("  \"midr\": %s,\n  \"implementer\": %s,\n  \"part\": %s,\n  \"core\": \"%s\",\n",
		    json_str(c.arch == Arch::aarch64 ? hex(c.midr) : "").c_str(), json_str(hex(c.implementer)).c_str(),
		    json_str(hex(c.part)).c_str(), core_name(c.core));
	std::printf("  \"features\": [");
	auto fs = features(c);
	for (size_t i = 0; i < fs.size(); i++)
		std::printf("%s\"%s\"", i ? ", " : "", fs[i].c_str());
	std::printf("],\n");
	std::printf("  \"cache\": {\"line\": %u, \"l1d\": %u, \"l2\": %u, \"l3\": %u, \"l3_sharing\": %u},\n", c.cache.line,
		    c.cache.l1d, c.cache.l2, c.cache.l3, c.cache.l3_sharing);
	std::printf("  \"cpus_allowed\": %u,\n", c.cpus_allowed);
	// The one table (table/ops.def), for scripts: every op and every variant.
	std::printf("  \"ops\": [");
	for (uint32_t op = 0; op < op_count; op++)
		std::printf("%s\"%s\"", op ? ", " : "", op_name(op));
	std::printf("],\n  \"variants\": [");
	for (uint32_t i = 0; i < variant_count(); i++) {
		const Variant &v = variant_at(i);
		std::printf("%s\n    {\"op\": \"%s\", \"impl\": \"%s\", \"arch\": \"%s\", \"needs\": [", i ? "," : "",
			    op_name(v.op), impl_name(v.impl),
			    v.arch == Arch::x86_64 ? "x86_64" : v.arch == Arch::aarch64 ? "aarch64" : "any");
		bool first = true;
		for (uint32_t f = 0; f < f_count; f++)
			if (v.needs >> f & 1) {
				std::printf("%s\"%s\"", first ? "" : ", ", feature_name(f));
				first = false;
			}
		bool here = (v.arch == Arch::unknown || v.arch == c.arch) && (c.features & v.needs) == v.needs;
		std::printf("], \"runs_here\": %s}", here ? "true" : "false");
	}
	std::printf("\n  ],\n");
	std::printf("  \"impl\": {");
	for (uint32_t op = 0; op < op_count; op++)
		std::printf("%s\"%s\": %s", op ? ", " : "", op_name(op), json_str(bound(r, op)).c_str());
	std::printf("},\n  \"policy\": {");
	for (uint32_t op = 0; op < op_count; op++)
		std::printf("%s\"%s\": %s", op ? ", " : "", op_name(op), json_str(policy(r, op)).c_str());
	const MemThresholds &m = r.plan.mem;
	std::printf("},\n  \"thresholds\": {\"rep_movsb_threshold\": %" PRIu64 ", \"rep_movsb_stop\": %" PRIu64
		    ", \"rep_stosb_threshold\": %" PRIu64 ", \"rep_stosb_stop\": %" PRIu64 ", \"nt_threshold\": %" PRIu64
		    ", \"nt_fill_threshold\": %" PRIu64 ", \"prefetch_stride\": %u, \"prefetch_distance\": %u, \"prefetch_copy_min\": %" PRIu64 "},\n",
		    m.movsb_min, m.movsb_max, m.stosb_min, m.stosb_max == ~uint64_t(0) ? 0 : m.stosb_max, m.nt_min, m.nt_fill_min,
		    m.prefetch_stride, m.prefetch_distance, m.prefetch_copy_min);
	std::printf("  \"origin\": {");
	const Key keys[] = {Key::rep_movsb_threshold, Key::rep_movsb_stop, Key::rep_stosb_threshold, Key::rep_stosb_stop,
			    Key::nt_threshold, Key::nt_fill_threshold, Key::prefetch_stride, Key::idle_spin_ns, Key::idle_monitor_ns};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *o = keys[i] == Key::nt_fill_threshold ? nt_fill_origin(r) : origin(r, keys[i]);
		std::printf("%s\"%s\": \"%s\"", i ? ", " : "", key_name(keys[i]), o);
	}
	std::printf("},\n  \"profile\": {\"path\": %s, \"status\": %s, \"section\": %s},\n",
		    json_str(r.profile_file).c_str(),
		    json_str(r.profile_file.empty() ? "" : profile_status_text(r.profile.status)).c_str(),
		    json_str(r.profile.section).c_str());
	const IdlePolicy &ip = r.plan.idle;
	std::printf("  \"idle\": {\"stages\": [");
	for (int i = 0; i < ip.nstages; i++)
		std::printf("%s\"%s\"", i ? ", " : "", stage_name(ip.stages[i]));
	std::printf("], \"spin_ns\": %u, \"monitor_ns\": %u, \"umwait_c01\": %s},\n", ip.spin_ns, ip.monitor_ns,
		    ip.umwait_c01 ? "true" : "false");
	std::printf("  \"tunables\": {\"secure\": %s, \"input\": %s, \"applied\": [", r.secure ? "true" : "false",
		    json_str(r.env.size() > 256 ? r.env.substr(0, 253) + "..." : r.env).c_str());
	const Tunables &t = r.tun;
	bool first = true;
	for (uint32_t i = 0; i < t.nentries; i++)
		if (t.entries[i].verdict == Verdict::applied && !(r.plan.refused & (1u << i))) {
			std::printf("%s%s", first ? "" : ", ", json_str(shown(t, t.entries[i])).c_str());
			first = false;
		}
	std::printf("], \"rejected\": [");
	first = true;
	for (uint32_t i = 0; i < t.nentries; i++) {
		const Entry &e = t.entries[i];
		const char *why = e.verdict != Verdict::applied ? verdict_text(e.verdict)
				  : (r.plan.refused & (1u << i)) ? refuse_reason_text(r.plan.refused_reason[i]) : nullptr;
		if (!why)
			continue;
		std::printf("%s{\"entry\": %s, \"reason\": %s}", first ? "" : ", ", json_str(shown(t, e)).c_str(),
			    json_str(why).c_str());
		first = false;
	}
	std::printf("], \"dropped\": %u}\n}\n", t.ndropped);
}

void print_text(const Report &r)
{
	const Cpu &c = r.cpu;
	std::printf("uarch %d.%d on %s\n", UARCH_VERSION_MAJOR, UARCH_VERSION_MINOR, r.source.c_str());
	if (!r.brand.empty())
		std::printf("  cpu        %s (%s)\n", r.brand.c_str(), r.uarch_name.c_str());
	if (c.arch == Arch::x86_64)
		std::printf("  vendor     %s  family 0x%x  model 0x%x  stepping %u%s%s\n", c.vendor_id, c.family, c.model,
			    c.stepping, c.zen != Zen::none ? "  " : "", zen_name(c.zen));
	else
		std::printf("  midr       %s  implementer 0x%x  part 0x%x  core %s\n", hex(c.midr).c_str(), c.implementer,
			    c.part, core_name(c.core));
	std::printf("  features  ");
	for (auto &f : features(c))
		std::printf(" %s", f.c_str());
	std::printf("\n  cache      line %u  L1d %s  L2 %s  L3 %s", c.cache.line, size_text(c.cache.l1d).c_str(),
		    size_text(c.cache.l2).c_str(), size_text(c.cache.l3).c_str());
	// 0 when only leaf 0x80000006 told the sizes (no TOPOEXT in this guest).
	std::printf(c.cache.l3_sharing ? " (shared by %u)\n" : " (sharing not reported)\n", c.cache.l3_sharing);
	if (c.cpus_allowed)
		std::printf("  affinity   %u CPU%s allowed\n", c.cpus_allowed, c.cpus_allowed == 1 ? "" : "s");
	std::printf("bindings\n");
	for (uint32_t op = 0; op < op_count; op++) {
		std::string b = bound(r, op), p = policy(r, op);
		std::printf("  %-15s %s%s\n", op_name(op), b.c_str(), b == p ? "" : ("   (policy says " + p + ")").c_str());
	}
	if (r.live)
		std::printf("  %-15s %s\n", "entry", entry_binding().c_str());
	const MemThresholds &m = r.plan.mem;
	std::printf("thresholds\n");
	// Each value with where it came from: default, profile or environment.
	auto from = [&](Key a, Key b = Key::none) {
		const char *x = origin(r, a), *y = b == Key::none ? "default" : origin(r, b);
		return std::string("   (") + (std::strcmp(x, "default") ? x : y) +
		       (std::strcmp(x, "default") && std::strcmp(y, "default") && std::strcmp(x, y) ? std::string(", ") + y : "") + ")";
	};
	if (m.movsb_min && m.movsb_min < m.movsb_max)
		std::printf("  rep movsb       [%s, %s)%s\n", size_text(m.movsb_min).c_str(), size_text(m.movsb_max).c_str(),
			    from(Key::rep_movsb_threshold, Key::rep_movsb_stop).c_str());
	else
		std::printf("  rep movsb       never%s\n", from(Key::rep_movsb_threshold, Key::rep_movsb_stop).c_str());
	if (m.stosb_min && m.stosb_min < m.stosb_max)
		std::printf("  rep stosb       [%s, %s)%s\n", size_text(m.stosb_min).c_str(), size_text(m.stosb_max).c_str(),
			    from(Key::rep_stosb_threshold, Key::rep_stosb_stop).c_str());
	else
		std::printf("  rep stosb       never%s\n", from(Key::rep_stosb_threshold, Key::rep_stosb_stop).c_str());
	std::printf("  non-temporal    %s%s\n", m.nt_min ? ("from " + size_text(m.nt_min)).c_str() : "never",
		    from(Key::nt_threshold).c_str());
	if (m.nt_fill_min != m.nt_min || r.tun.find(Key::nt_fill_threshold))
		std::printf("  non-temporal    %s   (%s)\n", nt_fill_text(m).c_str(), nt_fill_origin(r));
	std::printf("  prefetch stride %u%s\n", m.prefetch_stride, from(Key::prefetch_stride).c_str());
	if (m.prefetch_distance)
		std::printf("  copy prefetch   %u bytes ahead, for copies from %s (ampereone)\n", m.prefetch_distance,
			    m.prefetch_copy_min ? size_text(m.prefetch_copy_min).c_str() : "never");
	const IdlePolicy &ip = r.plan.idle;
	std::printf("idle\n  stages %s  spin %u ns%s  monitor %u ns%s\n", idle_name(ip).c_str(), ip.spin_ns,
		    from(Key::idle_spin_ns).c_str(), ip.monitor_ns, ip.umwait_c01 ? "  (C0.1)" : "  (C0.2)");
	if (!r.profile_file.empty())
		std::printf("profile     %s: %s%s%s\n", r.profile_file.c_str(), profile_status_text(r.profile.status),
			    r.profile.section[0] ? ", section " : "", r.profile.section);
	const Tunables &t = r.tun;
	std::printf("tunables%s\n", r.secure ? "  (environment ignored: secure process)" : r.env.empty() && !t.nentries ? "  (none)" : "");
	for (uint32_t i = 0; i < t.nentries; i++) {
		const Entry &e = t.entries[i];
		const char *why = e.verdict != Verdict::applied ? verdict_text(e.verdict)
				  : (r.plan.refused & (1u << i)) ? refuse_reason_text(r.plan.refused_reason[i]) : nullptr;
		std::printf("  %-9s %s%s%s   (%s)\n", why ? "rejected" : "applied", shown(t, e).c_str(), why ? ": " : "",
			    why ? why : "", origin(r, e));
	}
	if (t.ndropped)
		std::printf("  rejected  %u more entries (more than %u)\n", t.ndropped, Tunables::max_entries);
}

// tunables: in place of UARCH_TUNABLES, the bindings shown then being
// what the policy says with them (see rerun_with_tunables).
// as: the executable name the profile's sections are matched against, in
// place of this program's own (the bindings shown are then the policy's).
Report live_report(const std::string &profile_file, const char *tunables, const std::string &as)
{
	Report r;
	r.live = true;
	r.policy_only = tunables != nullptr || !as.empty();
	r.source = tunables ? "this machine, the policy with --tunables" : "this machine";
	probe_host(&r.cpu, getauxval(AT_HWCAP), getauxval(AT_HWCAP2));
	cpu_set_t set;   // as the library counts: 0 when the mask does not fit
	r.cpu.cpus_allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? uint32_t(CPU_COUNT(&set)) : 0;
	r.secure = getauxval(AT_SECURE) != 0;
	const char *env = tunables ? tunables : r.secure ? nullptr : std::getenv("UARCH_TUNABLES");
	r.env = env ? env : "";
	// As the library does: the profile's entries first, the environment's after.
	r.profile_file = profile_file.empty() ? profile_path : profile_file;
	const char *input = env;
	size_t len = env ? std::strlen(env) : 0;
	static ProfileBuffers profile_buffers;
	const char *exe = !as.empty() ? as.c_str()
			  : r.secure ? nullptr   // as the library: sections never apply under AT_SECURE
				     : exe_name(reinterpret_cast<const char *>(getauxval(AT_EXECFN)));
	prepend_profile(r.profile_file.c_str(), r.secure, exe, &profile_buffers, &input, &len, &r.profile);
	parse_tunables(input, len, &r.tun);
	select_plan(r.cpu, r.tun, &r.plan);
#if UARCH_HAVE_CPU_FEATURES
	if (r.cpu.arch == Arch::x86_64) {
		cpu_features::X86Info info = cpu_features::GetX86Info();
		r.brand = info.brand_string;
		r.uarch_name = cpu_features::GetX86MicroarchitectureName(cpu_features::GetX86Microarchitecture(&info));
	}
#endif
	return r;
}

Report dump_report(const std::string &path, const char *tunables)
{
	std::ifstream probe(path);
	if (!probe)
		die(path + ": " + std::strerror(errno));
	uarch::test::CpuidDump dump(path);
	if (!dump.ok)
		die(path + ": not a CPUID dump (no \"CPUID LLLLLLLL: EAX-EBX-ECX-EDX\" lines)");
	Report r;
	r.source = path.substr(path.find_last_of('/') + 1);
	probe_x86(&r.cpu, &dump);
	r.env = tunables ? tunables : "";
	parse_tunables(tunables, tunables ? std::strlen(tunables) : 0, &r.tun);
	select_plan(r.cpu, r.tun, &r.plan);
	return r;
}

Report midr_report(const std::string &value, const char *tunables)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long midr = std::strtoull(value.c_str(), &end, 16);
	// strtoull would take a sign and leading blanks ("-1" as all ones);
	// MIDR_EL1's upper 32 bits are reserved, zero.
	if (!std::isxdigit(static_cast<unsigned char>(value[0])) || *end || errno || midr > 0xffffffffu)
		die("--midr " + value + ": not a hexadecimal MIDR_EL1 value");
	Report r;
	r.source = "MIDR " + hex(midr);
	// What Linux reports on an arm64 server: ASIMD, the event stream, CPUID.
	const uint64_t asimd = 1 << 1, evtstrm = 1 << 2, cpuid = 1 << 11;
	probe_arm(&r.cpu, asimd | evtstrm | cpuid, 0, midr, 0x8444c004);
	r.env = tunables ? tunables : "";
	parse_tunables(tunables, tunables ? std::strlen(tunables) : 0, &r.tun);
	select_plan(r.cpu, r.tun, &r.plan);
	return r;
}

std::string window(uint64_t lo, uint64_t hi)
{
	if (!lo || lo >= hi)
		return "-";
	return size_text(lo) + "-" + (hi == ~uint64_t(0) ? "" : size_text(hi));
}

// The README's table: what uarch picks on each CPU in the test data.
void print_table(const std::string &dir)
{
	DIR *d = opendir((dir + "/cpuid").c_str());
	if (!d)
		die(dir + "/cpuid: " + std::strerror(errno));
	std::vector<std::string> files;
	while (dirent *e = readdir(d))
		if (std::strstr(e->d_name, "_CPUID") && std::strstr(e->d_name, ".txt"))
			files.push_back(e->d_name);
	closedir(d);
	std::sort(files.begin(), files.end());
	std::printf("| CPU | family/model | memcpy/memmove/memset | rep movsb | rep stosb | non-temporal from | prefetchw | idle_wait |\n");
	std::printf("|---|---|---|---|---|---|---|---|\n");
	for (const auto &f : files) {
		Report r = dump_report(dir + "/cpuid/" + f, nullptr);
		std::string name = f.substr(0, f.find("_CPUID"));
		const MemThresholds &m = r.plan.mem;
		std::string nt = size_text(m.nt_min);
		if (m.nt_fill_min != m.nt_min)
			nt += " (" + nt_fill_text(m) + ")";
		std::printf("| %s | %x/%x | %s | %s | %s | %s | %s | %s |\n", name.c_str(), r.cpu.family, r.cpu.model,
			    impl_name(r.plan.impl[op_memcpy]), window(m.movsb_min, m.movsb_max).c_str(),
			    window(m.stosb_min, m.stosb_max).c_str(), nt.c_str(),
			    impl_name(r.plan.impl[op_prefetchw]), idle_name(r.plan.idle).c_str());
	}
	std::ifstream csv(dir + "/midr.csv");
	if (!csv)
		die(dir + "/midr.csv: " + std::strerror(errno));
	std::printf("\n| arm64 core | MIDR | memcpy | memmove/memset | smp_mb | idle_wait |\n|---|---|---|---|---|---|\n");
	std::string line;
	while (std::getline(csv, line)) {
		if (line.empty() || line[0] == '#' || line.rfind("implementer", 0) == 0)
			continue;
		auto last = line.find_last_of(',');
		auto first = line.find(',', line.find(',') + 1);
		Report r = midr_report(line.substr(last + 1), nullptr);
		std::printf("| %s | %s | %s | %s | %s | %s |\n", line.substr(first + 1, last - first - 1).c_str(),
			    line.substr(last + 1).c_str(), impl_name(r.plan.impl[op_memcpy]),
			    impl_name(r.plan.impl[op_memmove]), impl_name(r.plan.impl[op_smp_mb]),
			    idle_name(r.plan.idle).c_str());
	}
}

// This machine's report with --tunables: the library in this process
// bound its entries at load, from UARCH_TUNABLES, so the report runs again
// with that set and the options at `drop` (each --tunables and its value)
// left out, to show what the library binds. Returns only where it cannot
// (no /proc, or qemu-user, whose /proc/self/exe the host cannot run): the
// caller then shows what the policy says.
void rerun_with_tunables(int argc, char **argv, const char *tunables, const std::vector<int> &drop)
{
	if (getauxval(AT_SECURE))
		die("--tunables: a secure-execution process ignores UARCH_TUNABLES");
	std::vector<char *> args;
	for (int i = 0; i < argc; i++) {
		if (std::find(drop.begin(), drop.end(), i) != drop.end()) {
			i++;
			continue;
		}
		args.push_back(argv[i]);
	}
	args.push_back(nullptr);
	std::fflush(stdout);
	setenv("UARCH_TUNABLES", tunables, 1);
	execv("/proc/self/exe", args.data());
}

void usage()
{
	std::printf("usage: uarch-info [--json] [--cpuid-dump FILE | --midr HEX] [--tunables STRING] [--profile FILE] [--as NAME]\n"
		    "       uarch-info --table DATADIR\n"
		    "Shows what uarch sees on this CPU (or on a CPUID dump / an arm64 MIDR) and what it binds.\n"
		    "--tunables STRING: as UARCH_TUNABLES=STRING, in place of the environment's\n"
		    "--profile FILE: read FILE as the system profile instead of %s\n"
		    "--as NAME: what a program whose executable is named NAME gets (its profile section)\n",
		    profile_path);
}

} // namespace

int main(int argc, char **argv)
{
	uarch::tools::check_stdout_at_exit("uarch-info");
	bool json = false;
	std::string dump, midr, table, profile, as;
	const char *tunables = nullptr;
	std::vector<int> tunables_at;   // argv index of each --tunables
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto value = [&](const char *opt) -> std::string {
			if (i + 1 >= argc || !*argv[i + 1])
				die(std::string(opt) + " needs a value");
			return argv[++i];
		};
		if (a == "--json") json = true;
		else if (a == "--cpuid-dump") dump = value("--cpuid-dump");
		else if (a == "--midr") midr = value("--midr");
		else if (a == "--table") table = value("--table");
		else if (a == "--profile") profile = value("--profile");
		else if (a == "--as") as = value("--as");
		else if (a == "--tunables") {
			static std::string t;
			tunables_at.push_back(i);
			t = value("--tunables");
			tunables = t.c_str();
		}
		else if (a == "-h" || a == "--help") { usage(); return 0; }
		else die("unknown argument '" + a + "' (try --help)");
	}
	// Every option given is applied, or refused: none is dropped silently.
	if (!table.empty()) {
		if (json || !dump.empty() || !midr.empty() || !profile.empty() || tunables || !as.empty())
			die("--table takes no other option");
		print_table(table);
		return 0;
	}
	if (!dump.empty() && !midr.empty())
		die("--cpuid-dump and --midr exclude each other");
	if (!profile.empty() && (!dump.empty() || !midr.empty()))
		die("--profile is this machine's system profile: not with --cpuid-dump or --midr");
	if (!as.empty() && (!dump.empty() || !midr.empty()))
		die("--as names a program of this machine: not with --cpuid-dump or --midr");
	if (as.find('/') != std::string::npos)
		die("--as takes an executable's file name, without '/'");
	if (tunables && dump.empty() && midr.empty())
		rerun_with_tunables(argc, argv, tunables, tunables_at);
	Report r = !dump.empty() ? dump_report(dump, tunables)
		   : !midr.empty() ? midr_report(midr, tunables)
				   : live_report(profile, tunables, as);
	if (json)
		print_json(r);
	else
		print_text(r);
	return 0;
}
