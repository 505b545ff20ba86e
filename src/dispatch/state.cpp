// Builds the process's State, at load, and publishes it once. Runs inside
// ifunc resolvers, possibly before this object's relocations are applied
// and before TLS exists (static binaries): raw system calls, hidden
// statics, no libc, no pointer tables, no stack protector (see
// meson.build). Nothing here waits for another context (state.h).
#include "dispatch/state.h"
#include "sys/sys.h"
#include "sys/load_data.h"
#include "generic/params.h"
#include "tunables/profile.h"

namespace uarch {

// Weak: libuarch.so needs no C library, and a static program may not link
// getauxval in; then /proc/self/auxv is read.
extern "C" unsigned long getauxval(unsigned long) __attribute__((weak));
// The loader's: where the process's stack started (argc, then argv).
extern "C" void *__libc_stack_end __attribute__((weak));

// getauxval, or nullptr: its address from the GOT and the call through it,
// never through the PLT. arm64's ld.so runs the preload library's
// load-time resolver while it relocates that library, once the GOT is
// filled and before the PLT slots are (the x86-64 one runs it last).
using auxval_fn = unsigned long (*)(unsigned long);
static auxval_fn auxval()
{
	auxval_fn f = getauxval;
	__asm__("" : "+r"(f));   // an opaque pointer: the compiler cannot call getauxval@plt
	return f;
}

// Where a state is built: the state and the buffers its tunables point
// into. Several, so that nobody waits: each context that finds no state
// published claims a slot, builds into it and publishes it unless another
// did first (every build computes the same plan: the policy is pure).
struct Scratch {
	State state;
	char env[Tunables::max_input + 1];
	ProfileBuffers profile;
};
constexpr unsigned nslots = 4;
static Scratch g_slots[nslots];
// 0: free; otherwise the process id of the context that claimed it. A
// slot claimed in another process (a fork while a thread built) is free
// again in this one.
static long g_claimed[nslots] UARCH_LOAD_DATA;
static const State *g_published UARCH_LOAD_DATA;

namespace {

constexpr uint64_t at_secure = 23, at_hwcap = 16, at_hwcap2 = 26, at_pagesz = 6;
constexpr char tunables_var[] = "UARCH_TUNABLES=";

struct Aux {
	bool readable;
	uint64_t secure, hwcap, hwcap2, pagesz;
};

// after_startup: the caller is a binding made after the loader relocated
// the C library (at a first call, or the preload library's load-time
// resolver, which ld.so runs after it; never libuarch.so's resolvers): the loader's copy of
// the auxiliary vector through getauxval, where the program has one,
// instead of /proc/self/auxv (11-15 us in a fresh process on the Sapphire
// Rapids-class guest, against well under 1 us).
Aux read_auxv(bool after_startup)
{
	Aux a = {false, 0, 0, 0, 0};
	const auxval_fn get = auxval();
	if (after_startup && get && (a.pagesz = get(at_pagesz))) {   // AT_PAGESZ: the vector is there
		a.readable = true;
		a.secure = get(at_secure);
		a.hwcap = get(at_hwcap);
		a.hwcap2 = get(at_hwcap2);
		return a;
	}
	long fd = sys::open_read("/proc/self/auxv");
	if (fd < 0)
		return a;
	uint64_t buf[64];
	bool seen_secure = false;
	for (;;) {
		long n = sys::read(fd, buf, sizeof buf);
		if (n <= 0)
			break;
		// The kernel returns whole (type, value) pairs.
		for (long i = 0; i + 1 < n / 8; i += 2) {
			if (buf[i] == at_secure) { a.secure = buf[i + 1]; seen_secure = true; }
			else if (buf[i] == at_hwcap) a.hwcap = buf[i + 1];
			else if (buf[i] == at_hwcap2) a.hwcap2 = buf[i + 1];
			else if (buf[i] == at_pagesz) a.pagesz = buf[i + 1];
		}
	}
	sys::close(fd);
	a.readable = seen_secure;
	return a;
}

// Copies the value of UARCH_TUNABLES from /proc/self/environ into g_env,
// streaming, so any environment size works with a fixed buffer. Returns
// the number of bytes copied, or -1 when there is no such variable.
// The same from the environment the program started with, as the kernel
// laid it out (what /proc/self/environ reads too): the array after argv at
// the stack's start, which setenv never changes. -2 where the C library
// says nothing of that start. Only after start-up (see read_auxv): the
// first /proc open of a process costs 11-15 us on the Sapphire Rapids-class
// guest.
long tunables_from_initial_env(char *g_env)
{
	const auxval_fn get = auxval();
	if (!&__libc_stack_end || !__libc_stack_end || !get)
		return -2;
	const char *name = tunables_var;
	// Where the loader put it, __libc_stack_end points at argc (argc,
	// argv..., 0, envp..., 0, auxv); a static program's start code points it
	// elsewhere. Every word read lies below AT_EXECFN, the file name the
	// kernel put above all of them at the top of the stack, and the layout
	// is trusted only when the vector found after envp holds the AT_RANDOM
	// that getauxval reports.
	constexpr uint64_t at_random = 25, at_execfn = 31;
	const uintptr_t top = get(at_execfn);
	const long *sp = static_cast<const long *>(__libc_stack_end);
	auto below_top = [top](const void *p) { return uintptr_t(p) + sizeof(long) <= top; };
	if (!top || !below_top(sp) || sp[0] < 0 || sp[0] > (1L << 20) ||
	    !below_top(sp + 1 + sp[0]) || sp[1 + sp[0]] != 0)
		return -2;
	char *const *envp = reinterpret_cast<char *const *>(sp + 1 + sp[0] + 1);
	size_t nenv = 0;
	while (below_top(envp + nenv) && envp[nenv])
		nenv++;
	const uint64_t *aux = reinterpret_cast<const uint64_t *>(envp + nenv + 1);
	bool found = false;
	size_t a = 0;
	for (; below_top(aux + a + 1) && aux[a] != 0; a += 2)
		found |= aux[a] == at_random && aux[a + 1] == get(at_random);
	if (!found)
		return -2;
	// The kernel's strings lie between the vector's end and AT_EXECFN.
	// setenv and putenv edit the array in place (a pointer to the
	// program's own string; the loader does so to GLIBC_TUNABLES), and
	// unsetenv shifts it (then the vector is not found above). A
	// UARCH_TUNABLES entry outside the strings is such an edit: the
	// kernel's copy (/proc/self/environ) is read instead. Another
	// variable's edit changes nothing here.
	const uintptr_t strings = uintptr_t(aux + a + 2);
	for (size_t i = 0; i < nenv; i++) {
		const char *e = envp[i];
		size_t k = 0;
		while (name[k] && e[k] == name[k])
			k++;
		if (name[k])
			continue;
		if (uintptr_t(e) < strings || uintptr_t(e) >= top)
			return -2;
		const char *v = e + k;
		long copied = 0;
		for (; v[copied]; copied++)   // counts past the buffer: the parser reports truncation
			if (copied < long(Tunables::max_input))
				g_env[copied] = v[copied];
		long kept = copied < long(Tunables::max_input) ? copied : long(Tunables::max_input);
		g_env[kept] = 0;
		return copied;
	}
	return -1;
}

long read_tunables_env(char *g_env, bool *readable, bool after_startup)
{
	const char *name = tunables_var;
	constexpr size_t name_len = sizeof tunables_var - 1;
	if (after_startup) {
		long n = tunables_from_initial_env(g_env);
		if (n != -2) {
			*readable = true;
			return n;
		}
	}
	long fd = sys::open_read("/proc/self/environ");
	*readable = fd >= 0;
	if (fd < 0)
		return -1;
	char buf[1024];
	size_t pos = 0;        // position within the current NUL-separated entry
	bool matching = true;  // the current entry still matches name so far
	long copied = -1;      // >= 0 once inside our value
	bool done = false;
	while (!done) {
		long n = sys::read(fd, buf, sizeof buf);
		if (n <= 0)
			break;
		for (long i = 0; i < n; i++) {
			char ch = buf[i];
			if (copied >= 0) {
				if (ch == 0) { done = true; break; }
				if (copied < long(Tunables::max_input))
					g_env[copied] = ch;
				copied++;      // counts past the buffer: the parser reports truncation
				continue;
			}
			if (ch == 0) { pos = 0; matching = true; continue; }
			if (matching && pos < name_len && ch == name[pos]) {
				if (++pos == name_len)
					copied = 0;
			} else {
				matching = false;
			}
		}
	}
	sys::close(fd);
	if (copied < 0)
		return -1;
	long kept = copied < long(Tunables::max_input) ? copied : long(Tunables::max_input);
	g_env[kept] = 0;
	return copied;
}

// The CPUs in this thread's affinity mask (at load: the main thread's,
// which threads inherit); 0 when the mask does not fit 1024 CPUs.
uint32_t cpus_allowed()
{
	uint64_t mask[16];
	long n = sys::call6(sys::nr_sched_getaffinity, 0, sizeof mask, long(mask));
	uint32_t count = 0;
	for (long i = 0; i < n / 8; i++)
		for (uint64_t m = mask[i]; m; m &= m - 1)   // no libgcc popcount call
			count++;
	return count;
}

void build(Scratch &into, uint64_t hwcap, uint64_t hwcap2, bool after_startup)
{
	State &s = into.state;
	char *const g_env = into.env;
	Aux aux = read_auxv(after_startup);
	if (aux.readable) {
		hwcap = aux.hwcap;
		hwcap2 = aux.hwcap2;
	}
	// The kernel sets AT_SECURE for set-id and file-capability execs
	// (it covers uid != euid, so no id system calls are needed). Fail
	// closed when auxv cannot be read: no /proc, or a set-id process whose
	// /proc files belong to root.
	s.secure = !aux.readable || aux.secure;
	// arm64 kernels run 4, 16 or 64 KiB pages.
	s.page_size = aux.pagesz && !(aux.pagesz & (aux.pagesz - 1)) ? aux.pagesz : 4096;

#if defined(__x86_64__)
	// The caches wait for the first large copy (finish_deferred_plan).
	// After start-up the loader's copy of the leaves it asked serves
	// (leaf 0 from its record of it, where that is found: no CPUID at
	// all); a resolver may run before the loader filled it.
	probe_host_binding(&s.cpu, after_startup);
	(void)hwcap, (void)hwcap2;   // arm64's
#else
	probe_host(&s.cpu, hwcap, hwcap2);
#endif
	s.cpu.cpus_allowed = cpus_allowed();

	long envlen = -1;
	s.env_readable = false;
	if (!s.secure)
		envlen = read_tunables_env(g_env, &s.env_readable, after_startup);
	// Pass one byte more than kept when the value was longer than the
	// buffer, so the parser sees and reports the truncation.
	const char *input = nullptr;
	size_t len = 0;
	if (envlen >= 0) {
		len = size_t(envlen);
		if (len > Tunables::max_input) {
			g_env[Tunables::max_input] = 'x';   // non-NUL marker past the end
			len = Tunables::max_input + 1;
		}
		input = g_env;
	}
	// The system profile goes first: each environment entry overrides it.
	prepend_profile(profile_path, s.secure, &into.profile, &input, &len, &s.profile);
	parse_tunables(input, len, &s.tunables);
	select_plan(s.cpu, s.tunables, &s.plan);

	compose_idle_name(s.plan.idle, s.idle_name);
}

} // namespace

void compose_idle_name(const IdlePolicy &p, char *out)
{
	constexpr size_t cap = sizeof State::idle_name;
	size_t k = 0;
	for (uint32_t i = 0; i < p.nstages; i++) {
		const char *n = stage_name(p.stages[i]);
		if (i && k < cap - 1)
			out[k++] = '+';
		while (*n && k < cap - 1)
			out[k++] = *n++;
	}
	out[k] = 0;
}

// The plan again with the caches known; only its thresholds are used (the
// variants were bound from the same CPU and tunables, and the policy picks
// them without the caches: deferral_test checks that on every CPUID dump).
// Every caller computes the same values, so racing threads and a signal
// handler that interrupts one are harmless: no lock, no allocation, no
// system call (CPUID only). False, and nothing done, before a state is
// published.
bool finish_deferred_plan()
{
#if defined(__x86_64__)
	const State *s = state_published();
	if (!s)
		return false;
	Cpu cpu = s->cpu;
	probe_host_caches(&cpu, true);
	Plan plan;
	select_plan(cpu, s->tunables, &plan);
	set_arch_params(plan);
#endif
	return true;
}

const char *library_binding() { return UARCH_IFUNC ? "ifunc" : "pointer"; }

const State *state_published() { return __atomic_load_n(&g_published, __ATOMIC_ACQUIRE); }

const State *state_build(uint64_t hwcap, uint64_t hwcap2, bool after_startup)
{
	if (const State *s = state_published())
		return s;
	const long pid = sys::call6(sys::nr_getpid);
	for (unsigned i = 0; i < nslots; i++) {
		long owner = __atomic_load_n(&g_claimed[i], __ATOMIC_ACQUIRE);
		if (owner == pid ||
		    !__atomic_compare_exchange_n(&g_claimed[i], &owner, pid, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;   // being built in this process, or just claimed by another context
		build(g_slots[i], hwcap, hwcap2, after_startup);
		const State *expected = nullptr;
		if (__atomic_compare_exchange_n(&g_published, &expected, &g_slots[i].state, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			// The first published state hands the variants their thresholds.
			set_arch_params(g_slots[i].state.plan);
#if defined(__x86_64__)
			defer_arch_params();
#endif
			return &g_slots[i].state;
		}
		return expected;   // the same plan, published first by another context
	}
	return nullptr;
}

// Every slot is being built by a live context of this process: build once
// more on this stack rather than wait for one of them. Out of line, so that
// only this rare path takes the stack it needs.
__attribute__((noinline)) static Plan plan_on_stack(uint64_t hwcap, uint64_t hwcap2, bool after_startup)
{
	static_assert(sizeof(Scratch) < 40 * 1024, "the stack copy must stay small");
	Scratch local;
	build(local, hwcap, hwcap2, after_startup);
	return local.state.plan;
}

Plan plan_now(uint64_t hwcap, uint64_t hwcap2, bool after_startup)
{
	if (const State *s = state_build(hwcap, hwcap2, after_startup))
		return s->plan;
	return plan_on_stack(hwcap, hwcap2, after_startup);
}

const State &state()
{
	const State *s = state_build();
	return s ? *s : g_slots[0].state;
}

void state_forget_for_test(unsigned claimed_elsewhere)
{
	__atomic_store_n(&g_published, nullptr, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < nslots; i++)
		__atomic_store_n(&g_claimed[i], i < claimed_elsewhere ? sys::call6(sys::nr_getpid) : 0, __ATOMIC_RELEASE);
}

} // namespace uarch
