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
// The C library's environment (the kernel's envp until setenv copies it).
extern "C" char **environ __attribute__((weak));

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
// 0: free; 1: claimed, for good. A claim is never taken over: a vfork or
// CLONE_VM child has a pid of its own but shares this memory, and may not
// tell a claim its parent's thread is still filling from one a fork left
// behind. A fork child whose parent was mid-build finds the other slots,
// or builds on its stack.
static long g_claimed[nslots] UARCH_LOAD_DATA;
static const State *g_published UARCH_LOAD_DATA;

namespace {

constexpr uint64_t at_secure = 23, at_hwcap = 16, at_hwcap2 = 26, at_pagesz = 6;
constexpr char tunables_var[] = "UARCH_TUNABLES=";

struct Aux {
	bool readable;
	uint64_t secure, hwcap, hwcap2, pagesz;
	uint64_t execfn;   // AT_EXECFN: the executable's path, a string of this process
};

// The arrays the kernel laid out at the top of the stack at exec: envp
// (nenv entries, then a null) and the auxiliary vector right after it,
// below the strings they point to, which end at AT_EXECFN's (top).
struct InitialStack {
	char *const *envp;
	size_t nenv;
	const uint64_t *auxv;   // (type, value) pairs up to AT_NULL
	uintptr_t strings;      // past the vector: where the kernel's strings may start
	uintptr_t top;          // AT_EXECFN
};

constexpr uint64_t at_random = 25, at_execfn = 31;

// From envp on, every word read lies below limit (the lowest string the
// arrays point to: the arrays lie below all of them). The vector must
// hold AT_PAGESZ, AT_RANDOM (its 16 bytes between the vector and the
// strings) and AT_EXECFN (the last string).
bool walk_env_and_auxv(char *const *envp, uintptr_t limit, InitialStack *out)
{
	auto below = [&limit](const void *p, size_t bytes) { return uintptr_t(p) + bytes <= limit; };
	size_t nenv = 0;
	for (;; nenv++) {
		if (!below(envp + nenv, sizeof(char *)))
			return false;
		const uintptr_t e = uintptr_t(envp[nenv]);
		if (!e)
			break;
		if (e < uintptr_t(envp + nenv + 1))
			return false;   // not a string above the arrays
		if (e < limit)
			limit = e;
	}
	const uint64_t *aux = reinterpret_cast<const uint64_t *>(envp + nenv + 1);
	bool pagesz = false;
	uintptr_t top = 0, random = 0;
	size_t a = 0;
	for (;; a += 2) {
		if (a > 2 * 64 || !below(aux + a, 2 * sizeof(uint64_t)))
			return false;
		if (aux[a] == 0)
			break;
		pagesz |= aux[a] == at_pagesz && aux[a + 1] >= 4096 && !(aux[a + 1] & (aux[a + 1] - 1));
		if (aux[a] == at_random)
			random = aux[a + 1];
		if (aux[a] == at_execfn)
			top = aux[a + 1];
	}
	if (!pagesz || random < uintptr_t(aux + a + 2) || random + 16 > top || top < limit)
		return false;
	*out = InitialStack{envp, nenv, aux, uintptr_t(aux + a + 2), top};
	return true;
}

// The kernel's arrays, found with no system call and no call into the C
// library (which may not be relocated yet: libuarch.so's resolvers run
// while the program is being relocated). In a dynamic program ld.so points
// __libc_stack_end at argc before it relocates anything; a static
// program's start code points it a few words lower (argc read there is
// the zeroed %rax it pushed, never >= 1), and sets environ to the kernel's
// envp before it runs any resolver. An environ that is not on the stack
// above this frame (a setenv's copy) is not the kernel's.
bool initial_stack(InitialStack *out)
{
	if (&__libc_stack_end && __libc_stack_end) {
		const long *sp = static_cast<const long *>(__libc_stack_end);
		const long argc = sp[0];
		// argv[0]'s string lies above the arrays: every word up to it is
		// on the stack.
		const uintptr_t argv0 = argc >= 1 && argc <= (1L << 20) ? uintptr_t(sp[1]) : 0;
		if (argv0 > uintptr_t(sp + argc + 2) && sp[1 + argc] == 0 &&
		    walk_env_and_auxv(reinterpret_cast<char *const *>(sp + argc + 2), argv0, out))
			return true;
	}
	char *const *env = &environ ? environ : nullptr;
	const char here = 0;
	if (env && uintptr_t(env) > uintptr_t(&here) && env[0] && uintptr_t(env[0]) > uintptr_t(env))
		return walk_env_and_auxv(env, uintptr_t(env[0]), out);
	return false;
}

// The auxiliary vector's values: from the initial stack (st, where
// initial_stack found it), else (after start-up) getauxval, else
// /proc/self/auxv.
Aux read_auxv(const InitialStack *st, bool after_startup)
{
	Aux a = {false, 0, 0, 0, 0, 0};
	if (st) {
		a.readable = true;
		for (size_t i = 0; st->auxv[i]; i += 2) {
			const uint64_t v = st->auxv[i + 1];
			if (st->auxv[i] == at_secure) a.secure = v;
			else if (st->auxv[i] == at_hwcap) a.hwcap = v;
			else if (st->auxv[i] == at_hwcap2) a.hwcap2 = v;
			else if (st->auxv[i] == at_pagesz) a.pagesz = v;
			else if (st->auxv[i] == at_execfn) a.execfn = v;
		}
		return a;
	}
	const auxval_fn get = auxval();
	if (after_startup && get && (a.pagesz = get(at_pagesz))) {   // AT_PAGESZ: the vector is there
		a.readable = true;
		a.secure = get(at_secure);
		a.hwcap = get(at_hwcap);
		a.hwcap2 = get(at_hwcap2);
		a.execfn = get(at_execfn);
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
			else if (buf[i] == at_execfn) a.execfn = buf[i + 1];
		}
	}
	sys::close(fd);
	a.readable = seen_secure;
	return a;
}

// Copies the value of UARCH_TUNABLES from the environment the program
// started with, as the kernel laid it out (what /proc/self/environ reads
// too), into g_env; returns the bytes copied, -1 when there is no such
// variable, -2 when the initial stack cannot be trusted for it.
long tunables_from_initial_env(const InitialStack &st, char *g_env)
{
	const char *name = tunables_var;
	// setenv and putenv edit the array in place (a pointer to the
	// program's own string; the loader does so to GLIBC_TUNABLES), and
	// unsetenv shifts it. A UARCH_TUNABLES entry outside the kernel's
	// strings is such an edit: the kernel's copy (/proc/self/environ) is
	// read instead. Another variable's edit changes nothing here.
	for (size_t i = 0; i < st.nenv; i++) {
		const char *e = st.envp[i];
		size_t k = 0;
		while (name[k] && e[k] == name[k])
			k++;
		if (name[k])
			continue;
		if (uintptr_t(e) < st.strings || uintptr_t(e) >= st.top)
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

// From the initial stack (st, where found), else /proc/self/environ.
long read_tunables_env(const InitialStack *st, char *g_env, bool *readable)
{
	const char *name = tunables_var;
	constexpr size_t name_len = sizeof tunables_var - 1;
	long n = st ? tunables_from_initial_env(*st, g_env) : -2;
	if (n != -2) {
		*readable = true;
		return n;
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
	InitialStack st;
	const InitialStack *stack = initial_stack(&st) ? &st : nullptr;   // found once, read twice
	Aux aux = read_auxv(stack, after_startup);
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

	// The caches wait for the constructor (complete_plan_at_load), never
	// for a copy.
	probe_host_for_binding(&s.cpu, hwcap, hwcap2, after_startup);
	s.cpu.cpus_allowed = cpus_allowed();

	long envlen = -1;
	s.env_readable = false;
	if (!s.secure)
		envlen = read_tunables_env(stack, g_env, &s.env_readable);
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
	// Its sections name executables by AT_EXECFN's file name: the path the
	// caller of execve chose, so a set-id program (AT_SECURE) takes the
	// entries for every process alone (a link named after another program
	// would pick that program's section for it).
	const char *exe = s.secure ? nullptr : exe_name(reinterpret_cast<const char *>(aux.execfn));
	prepend_profile(profile_path, s.secure, exe, &into.profile, &input, &len, &s.profile);
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


void complete_plan_at_load()
{
	const State *published = state_published();
	if (!published)
		return;
	// The slot is this library's own storage: at load, before the program
	// runs, its thresholds and caches are filled in where they were built.
	State *s = const_cast<State *>(published);
	if (s->cpu.cache.l1d || s->cpu.cache.l2)
		return;   // done (a second constructor: the preload library's twin)
	Cpu cpu = s->cpu;
	if (!probe_host_rest_at_load(&cpu))
		return;
	Plan plan;
	select_plan(cpu, s->tunables, &plan);
	set_arch_params(plan);
	s->cpu.cache = cpu.cache;
	s->cpu.features = cpu.features;
	s->plan.mem = plan.mem;
}

const char *library_binding() { return UARCH_IFUNC ? "ifunc" : "pointer"; }

const State *state_published() { return __atomic_load_n(&g_published, __ATOMIC_ACQUIRE); }

const State *state_build(uint64_t hwcap, uint64_t hwcap2, bool after_startup)
{
	if (const State *s = state_published())
		return s;
	for (unsigned i = 0; i < nslots; i++) {
		long free = 0;
		if (__atomic_load_n(&g_claimed[i], __ATOMIC_ACQUIRE) ||
		    !__atomic_compare_exchange_n(&g_claimed[i], &free, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;   // claimed by another context (or one that is gone)
		build(g_slots[i], hwcap, hwcap2, after_startup);
		const State *expected = nullptr;
		if (__atomic_compare_exchange_n(&g_published, &expected, &g_slots[i].state, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			// The first published state hands the variants their thresholds.
			set_arch_params(g_slots[i].state.plan);
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
		__atomic_store_n(&g_claimed[i], i < claimed_elsewhere ? 1 : 0, __ATOMIC_RELEASE);
}

} // namespace uarch
